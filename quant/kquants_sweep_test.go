package quant

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"math"
	"testing"
)

// The sweep: 1000 rows of 512 values (two super-blocks) per type, drawn by kqSweepRow,
// quantized with QuantizeRowRef and dequantized with DequantizeRow, must hash to the
// SHA-256 digests that ggml's own code gives for the same rows. The committed vectors
// (testdata/vectors) have 17 one-block rows per type, which is too few to catch a single
// fused multiply-add in make_qkx2_quants under GOAMD64=v3; this sweep catches it.
//
// Provenance of the digests: a C program implementing kqSweepRow line for line (same
// splitmix64 stream and float32 operations; gcc -O2 -ffp-contract=off, x86-64) called, per
// row, ggml_quantize_chunk(type, x, q, 0, 1, 512,
// NULL) (quantize_row_q8_K_ref for Q8_K) into a zeroed buffer and the type's to_float
// (dequantize_row_q8_K for Q8_K) from libggml-base.a built from ggml d99724f2b141 with
// -O3 -DNDEBUG and no -march (so no FMA), and wrote a GGQV file (testdata/README.md
// format) per type. The digest "inputs" is SHA-256 of the rows' float32 inputs only;
// "file" is SHA-256 of the whole GGQV file: header, then per row the inputs, ggml's bytes
// and ggml's float32 outputs. To localise a difference, regenerate those files and run
// the vector test on them with GGSIM_KQ_VECTORS=dir. The committed way to regenerate and
// check them: TestWriteCInputs writes these rows, testdata/gen/ggmlrows.c (mode ggqv) runs
// ggml on them, and testdata/gen/check.sh compares the digests (all equal on 2026-12-02).
var kqSweepDigests = map[Type]struct{ inputs, file string }{
	Q2_K:   {"57ebf609e206a12b8cec297c48e6855c7e5c57bfc7924ac034913d145fe64f67", "ed8fb0276d3ff68eca5c2f7ce20f7fc1b53bc9e18fe832c4cdc23902c670c1a1"},
	Q3_K:   {"9740404f2ebf8dd105b26a10394e66f5416e4c6f449d2faa9219d4eb3d2187a7", "2e236a1f9cac1bbc9d7f5aacff7c74d985d73f93cef0219fa8bdd117019916a1"},
	Q4_K:   {"ef89ae5704f9d00dec0fd4822059cddc9931591d33b053d358c62a24647cd4be", "a1509e21b6d254674afffa7b66848a5be38109e6c80dda779320877e8dcb1dd6"},
	Q5_K:   {"9e4fd498811f8af435252c75e0d68013341a6d257555074d6a73e5c38e342bdd", "cb50e994e67cb957a181be2a6d675926e3b5c7bde36b5388e93e635b78c70a65"},
	Q6_K:   {"d114be365323065c81e0a4c802fda1682ed4be47544dc27fcefae3e7630a8a84", "3b7693f2aac4541a338a18abfeee1a8732ce1c77ab959da8031d8f4405db633e"},
	Q8_K:   {"d9dd8942bb9f4d30a0ff151bdb9991be0c027c75d5418d86b45c3f94b21cb0c9", "03855e29cc3008c37aa70fefaf4d803743710b114189de0f11342abacfffe711"},
	IQ4_XS: {"81f881e458d6c43c9b84c0d8ad6768d28dadb5cd3b0bb0ccd032c4c79adf7db2", "6cd944a4720e3b4104d87f72e62b8879c969cbc2e0de6a73de52f05308acbefe"},
}

const (
	kqSweepRows = 1000
	kqSweepCols = 512
)

// kqSplitMix is splitmix64.
type kqSplitMix uint64

func (s *kqSplitMix) next() uint64 {
	*s += 0x9E3779B97F4A7C15
	z := uint64(*s)
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
	z = (z ^ (z >> 27)) * 0x94D049BB133111EB
	return z ^ (z >> 31)
}

// u11 is uniform in [-1, 1) on a 2^-23 grid (exact in float32).
func (s *kqSplitMix) u11() float32 { return float32(float32(int32(s.next()>>40))*0x1p-23) - 1 }

// u01 is uniform in [0, 1) on a 2^-24 grid (exact in float32).
func (s *kqSplitMix) u01() float32 { return float32(float32(s.next()>>40) * 0x1p-24) }

// kqSweepBlock fills one super-block: one of ten kinds (uniform with outliers, integer
// grids and exact halves that produce rounding ties, sparse, one-signed, sums, ramps,
// random finite bit patterns over a wide exponent range, near-constant) at a scale
// (1+u)*2^e, e in -27..14, and with special set NaN, ±Inf or a float32 subnormal at up to
// four random places.
func kqSweepBlock(s *kqSplitMix, x []float32, special bool) {
	kind := int(s.next() % 10)
	e := int(s.next()%42) - 27
	scale := float32(math.Ldexp(float64(1+s.u01()), e))
	switch kind {
	case 0, 1:
		for j := range x {
			v := s.u11()
			if s.next()&63 == 0 {
				v *= 8
			}
			x[j] = v * scale
		}
	case 2:
		for j := range x {
			x[j] = float32(int(s.next()%17)-8) * scale
		}
	case 3:
		for j := range x {
			x[j] = float32(int(s.next()%9)-4) * 0.5
		}
	case 4:
		for j := range x {
			if s.next()%8 == 0 {
				x[j] = s.u11() * scale
			} else {
				x[j] = 0
			}
		}
	case 5:
		for j := range x {
			v := (1 + s.u01()) * scale
			if s.next()%16 != 0 {
				x[j] = v
			} else {
				x[j] = -v
			}
		}
	case 6:
		for j := range x {
			var sum float32
			for k := 0; k < 4; k++ {
				sum += s.u11()
			}
			x[j] = sum * scale
		}
	case 7:
		a := float32(s.u11() * scale) // a feeds an addition: keep Go from fusing
		b := s.u11() * scale
		for j := range x {
			x[j] = a + float32(float32(b*float32(j))/255)
		}
	case 8:
		for j := range x {
			ex := 100 + uint32(s.next()%60)
			m := uint32(s.next() & 0x7fffff)
			sg := uint32(s.next()&1) << 31
			x[j] = math.Float32frombits(sg | ex<<23 | m)
		}
	case 9:
		c := s.u11() * scale
		for j := range x {
			if s.next()%32 != 0 {
				x[j] = c
			} else {
				x[j] = s.u11() * scale
			}
		}
	}
	if special {
		k := int(s.next() % 4)
		for i := 0; i <= k; i++ {
			p := int(s.next() % 256)
			var bits uint32
			switch s.next() % 4 {
			case 0:
				bits = 0x7fc00000
			case 1:
				bits = 0xff800000
			case 2:
				bits = 0x7f800000
			default:
				bits = 0x00000008
			}
			x[p] = math.Float32frombits(bits)
		}
	}
}

// TestKQuantSweep checks the sweep digests of every type (see kqSweepDigests).
func TestKQuantSweep(t *testing.T) {
	for _, typ := range kqTypes {
		t.Run(typ.String(), func(t *testing.T) {
			want := kqSweepDigests[typ]
			s := kqSplitMix(0x4b515357 + uint64(typ))
			rs := kqSweepCols / QK_K * typ.TypeSize()
			hIn, hFile := sha256.New(), sha256.New()
			var hdr [24]byte
			copy(hdr[:], "GGQV")
			for i, v := range []uint32{1, uint32(typ), 0, kqSweepRows, kqSweepCols} {
				binary.LittleEndian.PutUint32(hdr[4+4*i:], v)
			}
			hFile.Write(hdr[:])
			x := make([]float32, kqSweepCols)
			q := make([]byte, rs)
			y := make([]float32, kqSweepCols)
			buf := make([]byte, 4*kqSweepCols)
			f32bytes := func(v []float32) []byte {
				for i, f := range v {
					binary.LittleEndian.PutUint32(buf[4*i:], math.Float32bits(f))
				}
				return buf
			}
			for r := 0; r < kqSweepRows; r++ {
				special := r%4 == 3
				kqSweepBlock(&s, x[:QK_K], special)
				kqSweepBlock(&s, x[QK_K:], special)
				if err := QuantizeRowRef(typ, x, q); err != nil {
					t.Fatal(err)
				}
				if err := DequantizeRow(typ, q, y); err != nil {
					t.Fatal(err)
				}
				hIn.Write(f32bytes(x))
				hFile.Write(f32bytes(x))
				hFile.Write(q)
				hFile.Write(f32bytes(y))
			}
			if got := hex.EncodeToString(hIn.Sum(nil)); got != want.inputs {
				t.Fatalf("the sweep's inputs hash to %s, the C generator's to %s: the generator port is wrong, not the quantizer", got, want.inputs)
			}
			if got := hex.EncodeToString(hFile.Sum(nil)); got != want.file {
				t.Fatalf("%v: quantized bytes or dequantized bits differ from ggml's on the sweep (digest %s, ggml %s); localise with GGSIM_KQ_VECTORS", typ, got, want.file)
			}
		})
	}
}
