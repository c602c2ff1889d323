//go:build cuda && cgo

package cuda

// Device tests of the probes ported from the project's former nvcc probe
// (sim/testdata/devprobe/probe.cu, removed; its H200 record of 2026-11-29 is
// sim/testdata/h200-probes/README.md). They compare the device with package sim's and
// package f16's models directly, and with GGSIM_GPU_OUT=DIR write half_ops.bin, h2f.bin
// and tiny.bin there for package sim's file-based tests (GGSIM_DEVPROBE_OUT=DIR).
// None of them has run on a device yet (written 2026-12-02 without device time).

import (
	"errors"
	"math"
	"testing"

	"github.com/ggsim/ggsim/f16"
	"github.com/ggsim/ggsim/sim"
)

// fp16OrSkip turns an NVRTC compile error (no cuda_fp16.h) into a skip that says so
// (a failure with GGSIM_REQUIRE_GPU=1).
func fp16OrSkip(t *testing.T, err error) {
	t.Helper()
	var ne *NVRTCError
	if errors.As(err, &ne) {
		report(t, "half.cu NOT RUN: NVRTC could not compile it (no CUDA include directory with cuda_fp16.h?): %v", err)
		skipOrFail(t, "SKIP (not a pass): cuda_fp16.h not available to NVRTC")
	}
	if err != nil {
		t.Fatal(err)
	}
}

// Exhaustive sweeps of rcp, x/127, a/b and 127/b against the modelled PTX, each over all
// 2^32 inputs (a few milliseconds each on an H200).
func TestFastMathSweeps(t *testing.T) {
	c := gpu(t)
	check := func(s Sweep, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		report(t, "%v", s)
		if s.Mismatches != 0 {
			t.Errorf("%s: %d of 2^32 results differ from the model", s.Name, s.Mismatches)
		}
	}
	s, err := c.ProbeRcpAll()
	check(s, err)
	if s.SawNaN && s.FirstNaN != math.Float32bits(sim.Rcp(float32(math.NaN()))) {
		t.Errorf("rcp's NaN result %#08x, sim.Rcp's %#08x", s.FirstNaN, math.Float32bits(sim.Rcp(float32(math.NaN()))))
	}
	check(c.ProbeDiv127All())
	for _, a := range DivNumerators {
		check(c.ProbeDivAll(a))
	}
	check(c.ProbeDiv127NumAll())
	saveModule(t, c, "sweep.cu")
}

// The special values of fmaxf, fminf, fabsf, add, sub, mul.ftz and fma.rn.ftz against
// package sim.
func TestFloatSpecials(t *testing.T) {
	c := gpu(t)
	got, err := c.ProbeFloatSpecials()
	if err != nil {
		t.Fatal(err)
	}
	in := func(k int) float32 { return math.Float32frombits(FloatSpecialInputs[k]) }
	for i, sp := range FloatSpecials {
		a := sp.Args
		var want float32
		switch sp.Op {
		case "fmaxf":
			want = sim.FMaxf(in(a[0]), in(a[1]))
		case "fminf":
			want = sim.FMinf(in(a[0]), in(a[1]))
		case "add":
			want = sim.Add(in(a[0]), in(a[1]))
		case "sub":
			want = sim.Sub(in(a[0]), in(a[1]))
		case "mul.ftz":
			want = sim.Mul(in(a[0]), in(a[1]))
		case "fma.rn.ftz":
			want = sim.FMA(in(a[0]), in(a[1]), in(a[2]))
		case "fabsf":
			want = sim.Abs(in(a[0]))
		default:
			t.Fatalf("FloatSpecials[%d]: unknown op %q", i, sp.Op)
		}
		report(t, "%s = %#08x (sim %#08x)", sp.Expr, got[i], math.Float32bits(want))
		if got[i] != math.Float32bits(want) {
			t.Errorf("%s: device %#08x, sim %#08x", sp.Expr, got[i], math.Float32bits(want))
		}
	}
	saveModule(t, c, "specials.cu")
}

// __byte_perm with every 16-bit selector pattern (nibbles >= 8 included), 16 times each
// with pseudo-random bytes, against sim.BytePerm.
func TestBytePerm(t *testing.T) {
	c := gpu(t)
	const n = 1 << 20
	x, y, sel := make([]uint32, n), make([]uint32, n), make([]uint32, n)
	for i := range x {
		x[i] = uint32(i)*2654435761 + 12345
		y[i] = x[i]*2246822519 + 3266489917
		sel[i] = uint32(i) & 0xffff
	}
	got, err := c.ProbeBytePerm(x, y, sel)
	if err != nil {
		t.Fatal(err)
	}
	bad := 0
	for i := range got {
		if want := uint32(sim.BytePerm(int32(x[i]), int32(y[i]), int32(sel[i]))); got[i] != want {
			if bad++; bad <= 5 {
				t.Errorf("__byte_perm(%#08x, %#08x, %#04x) = %#08x, sim %#08x", x[i], y[i], sel[i], got[i], want)
			}
		}
	}
	report(t, "__byte_perm, all 2^16 selectors x 16: %d of %d differ from sim.BytePerm", bad, n)
}

// mul.ftz and fma.rn.ftz with exact results next to 2^-126 against sim.Mul and sim.FMA;
// writes tiny.bin for package sim's flush-model comparison.
func TestFTZBoundary(t *testing.T) {
	c := gpu(t)
	mul, fma, err := c.ProbeTiny()
	if err != nil {
		t.Fatal(err)
	}
	var flat []uint32
	bad, i := 0, 0
	cases := TinyCases()
	for k, qs := range [][][4]uint32{mul, fma} {
		for _, q := range qs {
			if [3]uint32{q[0], q[1], q[2]} != cases[i] {
				t.Fatalf("case %d: the device made operands %#08x, TinyCases %#08x", i, q[:3], cases[i])
			}
			i++
			flat = append(flat, q[:]...)
			a, b, cc := math.Float32frombits(q[0]), math.Float32frombits(q[1]), math.Float32frombits(q[2])
			want := sim.FMA(a, b, cc)
			if k == 0 {
				want = sim.Mul(a, b)
			}
			if math.Float32bits(want) != q[3] {
				if bad++; bad <= 5 {
					t.Errorf("op %d (%#08x, %#08x, %#08x): device %#08x, sim %#08x", k, q[0], q[1], q[2], q[3], math.Float32bits(want))
				}
			}
		}
	}
	report(t, "mul.ftz (%d) and fma.rn.ftz (%d) next to 2^-126: %d differ from sim.Mul / sim.FMA", len(mul), len(fma), bad)
	writeOut(t, "tiny.bin", LittleEndian(flat))
	saveModule(t, c, "tiny.cu")
}

// __hadd/__hsub/__hmul/__hfma/__hmul2 for every half against 16 operands, __half2float
// of every half, __float2half of every float32 and NaN specials, against package f16 and
// sim.H2F / sim.F2H; writes half_ops.bin and h2f.bin.
func TestHalfScalar(t *testing.T) {
	c := gpu(t)
	ops, err := c.ProbeHalfOps(HalfOpsB, HalfOpsC)
	fp16OrSkip(t, err)
	bad := 0
	for j := range HalfOpsB {
		for a := 0; a < 65536; a++ {
			want := HalfOpsRef(uint16(a), HalfOpsB[j], HalfOpsC[j])
			for k, w := range want {
				if g := ops[(j*65536+a)*HalfOpsPerCase+k]; g != w {
					if bad++; bad <= 10 {
						t.Errorf("op %d a=%#04x b=%#04x c=%#04x: device %#04x, f16 %#04x", k, a, HalfOpsB[j], HalfOpsC[j], g, w)
					}
				}
			}
		}
	}
	report(t, "__hadd/__hsub/__hmul/__hfma/__hmul2: %d of %d results differ from package f16", bad, len(ops))
	writeOut(t, "half_ops.bin", LittleEndian(ops))

	h2f, err := c.ProbeH2FAll()
	if err != nil {
		t.Fatal(err)
	}
	bad = 0
	for h, g := range h2f {
		if w := math.Float32bits(sim.H2F(f16.Half(h))); g != w {
			if bad++; bad <= 10 {
				t.Errorf("__half2float(%#04x) = %#08x, sim.H2F %#08x", h, g, w)
			}
		}
	}
	report(t, "__half2float, all 65536 halves: %d differ from sim.H2F", bad)
	writeOut(t, "h2f.bin", LittleEndian(h2f))

	sp, err := c.ProbeHalfSpecials()
	if err != nil {
		t.Fatal(err)
	}
	nan := math.Float32frombits(0x7fc00001)
	want := []f16.Half{sim.F2H(nan), sim.F2H(-nan), f16.Add(0x7e01, 0x3c00), f16.Mul(0, sim.F2H(float32(math.Inf(1))))}
	for i, name := range HalfSpecials {
		report(t, "%s = %#04x (model %#04x)", name, sp[i], uint16(want[i]))
		if sp[i] != uint16(want[i]) {
			t.Errorf("%s: device %#04x, model %#04x", name, sp[i], uint16(want[i]))
		}
	}

	s, err := c.ProbeF2HAll()
	if err != nil {
		t.Fatal(err)
	}
	report(t, "%v", s)
	if s.Mismatches != 0 {
		t.Errorf("%s: %d of 2^32 differ", s.Name, s.Mismatches)
	}
	saveModule(t, c, "half.cu")
}
