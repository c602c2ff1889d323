package sim

import (
	"encoding/binary"
	"math"
	"math/big"
	"os"
	"path/filepath"
	"testing"

	"github.com/ggsim/ggsim/f16"
	"github.com/ggsim/ggsim/internal/bigref"
)

// The device probes' output files: gpu/cuda's device tests (build tag cuda) write
// half_ops.bin, h2f.bin (TestHalfScalar) and tiny.bin (TestFTZBoundary) into
// $GGSIM_GPU_OUT; these tests read them from $GGSIM_DEVPROBE_OUT and compare them with
// the models here (testdata/h200-probes/README.md has the recorded results and the steps).
const devprobeSkip = "GGSIM_DEVPROBE_OUT not set (the GGSIM_GPU_OUT folder of a gpu/cuda device run, testdata/h200-probes/README.md)"

// TestDeviceProbeHalfOps compares the binary16 results of gpu/cuda's half_ops and h2f_all
// probes (half_ops.bin, h2f.bin) with package f16 and H2F. It needs the probe's output
// folder in GGSIM_DEVPROBE_OUT and is skipped without it.
func TestDeviceProbeHalfOps(t *testing.T) {
	dir := os.Getenv("GGSIM_DEVPROBE_OUT")
	if dir == "" {
		t.Skip(devprobeSkip)
	}
	// must match gpu/cuda's HalfOpsB and HalfOpsC (the operands the probe ran with)
	bs := []f16.Half{0x0000, 0x8000, 0x0001, 0x83ff, 0x0400, 0x3c00, 0xbc00, 0x3c01, 0x3800, 0x4200, 0x7bff, 0x5140, 0x1400, 0xc4d2, 0x7c00, 0x7e00}
	cs := []f16.Half{0x8001, 0x0400, 0x3c00, 0xd140, 0x3555, 0x7bff, 0x0000, 0x8000, 0x0001, 0xbc00, 0xfbff, 0x1400, 0x3c01, 0x0200, 0xfc00, 0x3c00}
	raw, err := os.ReadFile(filepath.Join(dir, "half_ops.bin"))
	if err != nil {
		t.Fatal(err)
	}
	if len(raw) != 16*65536*5*2 {
		t.Fatalf("half_ops.bin has %d bytes, want %d", len(raw), 16*65536*5*2)
	}
	bad := 0
	for j := range bs {
		for a := 0; a < 65536; a++ {
			ha := f16.Half(a)
			base := (j*65536 + a) * 5 * 2
			got := func(k int) f16.Half { return f16.Half(binary.LittleEndian.Uint16(raw[base+2*k:])) }
			want := []f16.Half{f16.Add(ha, bs[j]), f16.Sub(ha, bs[j]), f16.Mul(ha, bs[j]), f16.FMA(ha, bs[j], cs[j]), f16.Mul2(f16.Half2{Lo: ha, Hi: bs[j]}, f16.Half2{Lo: bs[j], Hi: cs[j]}).Hi}
			for k, w := range want {
				if g := got(k); g != w {
					if bad++; bad <= 10 {
						t.Errorf("op %d a=%#04x b=%#04x c=%#04x: GPU %#04x, f16 %#04x", k, a, bs[j], cs[j], g, w)
					}
				}
			}
		}
	}
	raw, err = os.ReadFile(filepath.Join(dir, "h2f.bin"))
	if err != nil {
		t.Fatal(err)
	}
	for a := 0; a < 65536; a++ {
		g := binary.LittleEndian.Uint32(raw[4*a:])
		if w := math.Float32bits(H2F(f16.Half(a))); g != w {
			if bad++; bad <= 20 {
				t.Errorf("H2F(%#04x): GPU %#08x, model %#08x", a, g, w)
			}
		}
	}
	t.Logf("%d mismatches in %d half results and 65536 conversions", bad, 16*65536*5)
}

// TestDeviceProbeTiny reads tiny.bin of gpu/cuda's ProbeTiny (mul.ftz and fma.rn.ftz whose exact
// result is near 2^-126) and counts, for three flush models, the cases each gets wrong:
// "exact" flushes when the exact result is below 2^-126; "unbounded" when the result
// rounded to 24 bits with unbounded exponent is; "gradual" when the IEEE result (with
// gradual underflow) is. It then checks that FMA (and so Mul) matches the GPU on all.
func TestDeviceProbeTiny(t *testing.T) {
	dir := os.Getenv("GGSIM_DEVPROBE_OUT")
	if dir == "" {
		t.Skip(devprobeSkip)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "tiny.bin"))
	if err != nil {
		t.Fatal(err)
	}
	minNormal := new(big.Float).SetFloat64(0x1p-126)
	flushIf := func(tiny bool, neg bool, v float32) float32 {
		if tiny {
			if neg {
				return float32(math.Copysign(0, -1))
			}
			return 0
		}
		return v
	}
	var bad [4]int
	badMul := 0
	n := len(raw) / 16
	for i := 0; i < n; i++ {
		q := func(k int) uint32 { return binary.LittleEndian.Uint32(raw[16*i+4*k:]) }
		a, b, c, got := math.Float32frombits(q(0)), math.Float32frombits(q(1)), math.Float32frombits(q(2)), q(3)
		ex := bigref.Exact('f', float64(refFTZ(a)), float64(refFTZ(b)), float64(refFTZ(c)))
		abs := new(big.Float).Abs(ex)
		neg := ex.Signbit()
		r32 := round32(ex)
		r24 := new(big.Float).SetPrec(24).SetMode(big.ToNearestEven).Set(abs)
		models := []float32{
			flushIf(abs.Sign() != 0 && abs.Cmp(minNormal) < 0, neg, r32),
			flushIf(abs.Sign() != 0 && r24.Cmp(minNormal) < 0, neg, r32),
			refFTZ(r32),
			FMA(a, b, c),
		}
		if q(2) == 0x80000000 && math.Float32bits(Mul(a, b)) != got { // the mul.ftz cases
			if badMul++; badMul <= 5 {
				t.Errorf("Mul(%#08x, %#08x) = %#08x, GPU %#08x", q(0), q(1), math.Float32bits(Mul(a, b)), got)
			}
		}
		for m, v := range models {
			if math.Float32bits(v) != got {
				if bad[m]++; m == 3 && bad[m] <= 5 {
					t.Errorf("FMA(%#08x, %#08x, %#08x) = %#08x, GPU %#08x", q(0), q(1), q(2), math.Float32bits(v), got)
				}
			}
		}
	}
	t.Logf("%d cases; mismatches: exact-value flush %d, 24-bit-rounded flush %d, gradual-underflow flush %d, sim.FMA %d, sim.Mul %d",
		n, bad[0], bad[1], bad[2], bad[3], badMul)
}
