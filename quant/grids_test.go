package quant

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"math/bits"
	"testing"
)

// ixTableBytes returns the little-endian bytes of a table, as the C table lies in memory
// on x86-64.
func ixTableBytes[T uint8 | uint32 | uint64](tab []T) []byte {
	var out []byte
	for _, v := range tab {
		switch x := any(v).(type) {
		case uint8:
			out = append(out, x)
		case uint32:
			out = binary.LittleEndian.AppendUint32(out, x)
		case uint64:
			out = binary.LittleEndian.AppendUint64(out, x)
		}
	}
	return out
}

// TestGridTablesSHA256 checks each table against ggml's C table. The digests are the
// sha256sum of the bytes that testdata/gen/gridtables.c writes with
// fwrite(table, 1, sizeof table, f) after including ggml/src/ggml-common.h at d99724f2b141
// with GGML_COMMON_DECL_C + GGML_COMMON_IMPL_C (gcc 12, x86-64), and, for iq1s_grid_gpu,
// with GGML_COMMON_DECL_CPP + GGML_COMMON_IMPL_CPP (g++ 12); testdata/gen/README.md has
// the commands.
func TestGridTablesSHA256(t *testing.T) {
	cases := []struct {
		name string
		data []byte
		size int
		want string
	}{
		{"kmask_iq2xs", ixTableBytes(kmaskIQ2XS[:]), 8, "5ac9831b2e30eb285ef34f8501620f878432d5c04331ad1ae47f977a83ba41a5"},
		{"ksigns_iq2xs", ixTableBytes(ksignsIQ2XS[:]), 128, "a76742a603f8beca5212ecce0f1f02f11a4887fd2f7c8b15aca0ea3eb3380c31"},
		{"ksigns64", ixTableBytes(ksigns64[:]), 1024, "6ca8598509cc63406eaece40cff6b60198f6fa1e0dff261de7bd8d73bfed770c"},
		{"iq2xxs_grid", ixTableBytes(iq2xxsGrid[:]), 2048, "05826b5d3e472a3a78f196be62ac78acf81df0f909626e12ab9fa2a5d490dd54"},
		{"iq2xs_grid", ixTableBytes(iq2xsGrid[:]), 4096, "06e47aaca60b4dc1d9b5a3f34540437058a6b142b4d7a59d5ded769b4d1bf1de"},
		{"iq2s_grid", ixTableBytes(iq2sGrid[:]), 8192, "e1aa1473412b0552c2174c30ef22ab4073f6a181b85a17056e8249bd2932fd88"},
		{"iq3xxs_grid", ixTableBytes(iq3xxsGrid[:]), 1024, "46e35f5a997efdee6c99ce57854c8a0d4f0ff8ca57e5e8a60c0793ea580acf5d"},
		{"iq3s_grid", ixTableBytes(iq3sGrid[:]), 2048, "bd1af4945a1717c65610b0284e4628b9a1ba3b306fae3a06f6e5f597356e349f"},
		{"iq1s_grid", ixTableBytes(iq1sGrid[:]), 16384, "07540ffc1aeaf6ad4d97e96b0fcc765aae39671d4ae4a27bbd0e796fde167c6a"},
		{"iq1s_grid_gpu", ixTableBytes(iq1sGridGPU[:]), 8192, "29bb0f4450fab4aa61d9fa9bc62a06b4a129acf31ebf38266adb6a62ef424117"},
		// The shared value tables of helpers.go that NVFP4 reads, against the same C dump.
		{"kvalues_fp4", ixTableBytes(ixInt8Bytes(KValuesMXFP4[:])), 16, "adf76b672d47eb7fc0afd4db132d548d59d3190aa0ad118fdbf569d5fd478f97"},
	}
	for _, c := range cases {
		if len(c.data) != c.size {
			t.Errorf("%s: %d bytes, want %d", c.name, len(c.data), c.size)
		}
		sum := sha256.Sum256(c.data)
		if got := hex.EncodeToString(sum[:]); got != c.want {
			t.Errorf("%s: sha256 %s, want %s", c.name, got, c.want)
		}
	}
}

func ixInt8Bytes(v []int8) []uint8 {
	out := make([]uint8, len(v))
	for i, x := range v {
		out[i] = uint8(x)
	}
	return out
}

// TestGridSpotValues checks entries read from ggml-common.h by eye (first, last and a few
// in between), independent of the digests.
func TestGridSpotValues(t *testing.T) {
	check := func(name string, got, want uint64) {
		t.Helper()
		if got != want {
			t.Errorf("%s = %#x, want %#x", name, got, want)
		}
	}
	check("iq2xxs_grid[0]", IQ2XXSGrid(0), 0x0808080808080808)
	check("iq2xxs_grid[1]", IQ2XXSGrid(1), 0x080808080808082b)
	check("iq2xxs_grid[255]", IQ2XXSGrid(255), 0x2b2b2b1908081908)
	check("iq2xs_grid[511]", IQ2XSGrid(511), 0x2b2b2b2b2b2b2b2b)
	check("iq2s_grid[1023]", IQ2SGrid(1023), 0x2b2b2b2b2b2b2b2b)
	check("iq3xxs_grid[0]", uint64(IQ3XXSGrid(0)), 0x04040404)
	check("iq3xxs_grid[255]", uint64(IQ3XXSGrid(255)), 0x3e341c04)
	check("iq3s_grid[0]", uint64(IQ3SGrid(0)), 0x01010101)
	check("iq3s_grid[511]", uint64(IQ3SGrid(511)), 0x0f0f0101)
	check("iq1s_grid[0]", iq1sGridAt(0), 0xffffffffffffffff)
	check("iq1s_grid[2047]", iq1sGridAt(2047), 0x0101010101010101)
	check("iq1s_grid_gpu[1]", uint64(IQ1SGridGPU(1)), 0x00000002)
	check("iq1s_grid_gpu[2047]", uint64(IQ1SGridGPU(2047)), 0x22222222)
	check("ksigns_iq2xs[1]", uint64(ksignsIQ2XSAt(1)), 129)
	check("ksigns_iq2xs[127]", uint64(ksignsIQ2XSAt(127)), 255)
	check("ksigns64[1]", ksigns64At(1), 0xff000000000000ff)
}

// TestGridMagnitudes checks that every grid value lies in the set the formats define:
// IQ2 grids use 8, 25, 43; IQ3_XXS 4, 12, ..., 52, 62; IQ3_S odd 1..15; IQ1_S -1, 0, 1.
func TestGridMagnitudes(t *testing.T) {
	in := func(v byte, set ...byte) bool {
		for _, s := range set {
			if v == s {
				return true
			}
		}
		return false
	}
	for name, tab := range map[string][]uint64{"iq2xxs": iq2xxsGrid[:], "iq2xs": iq2xsGrid[:], "iq2s": iq2sGrid[:]} {
		for i, g := range tab {
			for j := 0; j < 8; j++ {
				if v := byte(g >> (8 * j)); !in(v, 8, 25, 43) {
					t.Fatalf("%s_grid[%d] byte %d = %d", name, i, j, v)
				}
			}
		}
	}
	for i, g := range iq3xxsGrid {
		for j := 0; j < 4; j++ {
			if v := byte(g >> (8 * j)); !in(v, 4, 12, 20, 28, 36, 44, 52, 62) {
				t.Fatalf("iq3xxs_grid[%d] byte %d = %d", i, j, v)
			}
		}
	}
	for i, g := range iq3sGrid {
		for j := 0; j < 4; j++ {
			if v := byte(g >> (8 * j)); !in(v, 1, 3, 5, 7, 9, 11, 13, 15) {
				t.Fatalf("iq3s_grid[%d] byte %d = %d", i, j, v)
			}
		}
	}
	for i, g := range iq1sGrid {
		for j := 0; j < 8; j++ {
			if v := int8(g >> (8 * j)); v < -1 || v > 1 {
				t.Fatalf("iq1s_grid[%d] byte %d = %d", i, j, v)
			}
		}
	}
}

// TestIQ1SGridGPUIsCPUGrid checks the relation documented on IQ1SGridGPU: every GPU entry
// is the CPU entry plus 1, packed as nibbles (values 0..3 low, 4..7 high).
func TestIQ1SGridGPUIsCPUGrid(t *testing.T) {
	for i := 0; i < ngridIQ1S; i++ {
		var want uint32
		for j := 0; j < 8; j++ {
			v := uint32(int8(iq1sGridAt(i)>>(8*j)) + 1)
			want |= v << (8*(j%4) + 4*(j/4))
		}
		if got := IQ1SGridGPU(i); got != want {
			t.Fatalf("iq1s_grid_gpu[%d] = %#08x, want %#08x from iq1s_grid[%d] = %#016x", i, got, want, i, iq1sGridAt(i))
		}
	}
}

// TestKsigns checks the sign tables against their definition: ksigns_iq2xs[i] = i with
// bit 7 set when i has an odd number of bits; ksigns64 its byte mask; kmask 1<<j.
func TestKsigns(t *testing.T) {
	for i := 0; i < 128; i++ {
		want := uint8(i)
		if bits.OnesCount8(uint8(i))%2 == 1 {
			want |= 0x80
		}
		if got := ksignsIQ2XSAt(i); got != want {
			t.Errorf("ksigns_iq2xs[%d] = %d, want %d", i, got, want)
		}
		var w64 uint64
		for j := 0; j < 8; j++ {
			if want&(1<<j) != 0 {
				w64 |= 0xff << (8 * j)
			}
		}
		if got := ksigns64At(i); got != w64 {
			t.Errorf("ksigns64[%d] = %#x, want %#x", i, got, w64)
		}
	}
	for j := 0; j < 8; j++ {
		if got := kmaskIQ2XSAt(j); got != 1<<j {
			t.Errorf("kmask_iq2xs[%d] = %d", j, got)
		}
	}
}

// TestUnpackKsigns checks the CUDA bit trick against the table for every byte, including
// those whose bit 7 belongs to the next sign group.
func TestUnpackKsigns(t *testing.T) {
	for v := 0; v < 256; v++ {
		want := uint32(ksignsIQ2XSAt(v&127)) * 0x01010101
		if got := UnpackKsigns(uint8(v)); got != want {
			t.Errorf("UnpackKsigns(%#02x) = %#08x, want %#08x", v, got, want)
		}
	}
}

// TestGridAccessorsPanicOutOfRange: an index past a table is a programming error.
func TestGridAccessorsPanicOutOfRange(t *testing.T) {
	for name, f := range map[string]func(){
		"IQ2XSGrid":     func() { IQ2XSGrid(512) },
		"IQ2SGrid":      func() { IQ2SGrid(1024) },
		"IQ3SGrid":      func() { IQ3SGrid(512) },
		"iq1sGridAt":    func() { iq1sGridAt(ngridIQ1S) },
		"IQ1SGridGPU":   func() { IQ1SGridGPU(-1) },
		"ksignsIQ2XSAt": func() { ksignsIQ2XSAt(128) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
}
