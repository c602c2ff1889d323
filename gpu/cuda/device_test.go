//go:build cuda && cgo

package cuda

// Tests that need a GPU. Without a driver, a device or NVRTC they skip with a message
// that says so (a skip is not a pass); with GGSIM_REQUIRE_GPU=1 they fail instead.
// With GGSIM_GPU_OUT=DIR they write what they measured there (docs/device-workflow.md).
// GGSIM_MUFU_TABLE=FILE names the shared sm_90 MUFU.RCP table to compare with.

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

var (
	devOnce sync.Once
	devCtx  *Context
	devErr  error
	repMu   sync.Mutex
)

// gpu returns the shared context of device 0, or skips (fails with GGSIM_REQUIRE_GPU=1).
func gpu(t *testing.T) *Context {
	t.Helper()
	devOnce.Do(func() { devCtx, devErr = Open(Options{}) })
	if devErr != nil {
		msg := fmt.Sprintf("SKIP (not a pass): no usable CUDA device: %v", devErr)
		if errors.Is(devErr, ErrNoDriver) || errors.Is(devErr, ErrNoDevice) || errors.Is(devErr, ErrNoNVRTC) {
			skipOrFail(t, msg)
		}
		t.Fatalf("opening the device failed for another reason: %v", devErr)
	}
	return devCtx
}

// outDir returns $GGSIM_GPU_OUT (created) or "".
func outDir(t *testing.T) string {
	d := os.Getenv("GGSIM_GPU_OUT")
	if d == "" {
		return ""
	}
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
	return d
}

// report logs a line and appends it to $GGSIM_GPU_OUT/cuda-probes.txt.
func report(t *testing.T, format string, args ...any) {
	t.Helper()
	line := fmt.Sprintf(format, args...)
	t.Log(line)
	if d := outDir(t); d != "" {
		repMu.Lock()
		defer repMu.Unlock()
		f, err := os.OpenFile(filepath.Join(d, "cuda-probes.txt"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		fmt.Fprintf(f, "%s: %s\n", t.Name(), line)
	}
}

func writeOut(t *testing.T, name string, data []byte) {
	if d := outDir(t); d != "" {
		if err := os.WriteFile(filepath.Join(d, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// saveModule writes a probe module's PTX and cubin for the record.
func saveModule(t *testing.T, c *Context, file string) {
	c.mu.Lock()
	m := c.modules[file]
	c.mu.Unlock()
	if m == nil {
		return
	}
	base := file[:len(file)-len(filepath.Ext(file))]
	writeOut(t, base+".ptx", []byte(m.PTX()))
	writeOut(t, base+".cubin", m.Cubin())
}

func TestDeviceInfo(t *testing.T) {
	c := gpu(t)
	d := c.Info()
	report(t, "device: %v", d)
	if d.Name == "" || d.Major <= 0 || d.SMCount <= 0 || d.WarpSize != 32 || d.DriverAPI <= 0 ||
		d.SmemPerBlock <= 0 || d.SmemPerBlockOptin < d.SmemPerBlock {
		t.Fatalf("implausible device info %+v", d)
	}
	q, err := QueryDevice(Options{})
	if err != nil || q.Name != d.Name || q.SMCount != d.SMCount {
		t.Fatalf("QueryDevice = %+v, %v", q, err)
	}
	if _, err := QueryDevice(Options{Device: 1 << 20}); !errors.Is(err, ErrNoDevice) {
		t.Fatalf("device 2^20: %v, want ErrNoDevice", err)
	}
	writeOut(t, "device.txt", []byte(d.String()+"\n"))
}

// Device errors come back as Go errors naming the call and the CUresult.
func TestDeviceErrors(t *testing.T) {
	c := gpu(t)
	_, err := c.Alloc(1 << 45) // 32 TiB
	var de *DriverError
	if !errors.As(err, &de) || !errors.Is(err, ErrOutOfMemory) || de.Call != "cuMemAlloc_v2" || de.Name != "CUDA_ERROR_OUT_OF_MEMORY" {
		t.Fatalf("huge Alloc: %v (want CUDA_ERROR_OUT_OF_MEMORY from cuMemAlloc_v2)", err)
	}
	report(t, "out-of-memory error reads: %v", err)
	m, err := c.ProbeModule("dp4a.cu")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Function("no_such_kernel"); !errors.As(err, &de) || de.Call != "cuModuleGetFunction" {
		t.Fatalf("missing kernel: %v", err)
	}
	if err := c.Free(DevPtr(12345)); err == nil {
		t.Fatal("Free of a foreign pointer succeeded")
	}
}

func TestMUFURcp(t *testing.T) {
	c := gpu(t)
	r1, err := c.ProbeRcpBinade(0x3f800000)
	if err != nil {
		t.Fatal(err)
	}
	tab, counts, err := EncodeRcpDelta2(r1)
	if err != nil {
		t.Fatal(err)
	}
	report(t, "rcp.approx.ftz.f32 on [1,2), all 2^23 inputs: %v (%.1f%% exact)", counts, 100*float64(counts.Zero)/RcpTableLen)
	writeOut(t, "rcp_approx_delta2bit.bin", tab)
	if p := os.Getenv("GGSIM_MUFU_TABLE"); p != "" {
		ref, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		n, first, err := CompareDelta2(tab, ref)
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			report(t, "[1,2) table EQUAL to %s byte for byte (%d bytes)", filepath.Base(p), len(ref))
		} else {
			report(t, "[1,2) table NOT EQUAL to %s: %d of 2^23 inputs differ, first input %d (%#08x)", filepath.Base(p), n, first, 0x3f800000|first)
			if c.Info().Major == 9 && c.Info().Minor == 0 {
				t.Errorf("sm_90 table differs from the shared sm_90 table in %d inputs", n)
			}
		}
	}
	edge := map[string]bool{"2^126": true, "2^127 (max)": true, "-2^127": true}
	for _, b := range RcpBinades {
		got, err := c.ProbeRcpBinade(b.Base)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := CompareBinade(b, got, r1)
		if err != nil {
			t.Fatal(err)
		}
		report(t, "%v", rep)
		for _, ex := range rep.Examples[:min(len(rep.Examples), 3)] {
			report(t, "    e.g. rcp(%#08x) = %#08x, scaled [1,2) result %#08x", ex[0], ex[1], ex[2])
		}
		if !edge[b.Name] && rep.Differ != 0 {
			t.Errorf("binade %s: %d results differ from rcp([1,2))*2^-e", b.Name, rep.Differ)
		}
	}
	sp, err := c.ProbeRcpList(RcpSpecials)
	if err != nil {
		t.Fatal(err)
	}
	for i, x := range RcpSpecials {
		report(t, "rcp(%#08x = %g) = %#08x (%g)", x, math.Float32frombits(x), sp[i], math.Float32frombits(sp[i]))
	}
	saveModule(t, c, "rcp.cu")
}

func xorshift(s *uint64) uint64 { *s ^= *s << 13; *s ^= *s >> 7; *s ^= *s << 17; return *s }

// Division as -use_fast_math compiles it, against a * rcp.approx(b).
func TestFastMathDivision(t *testing.T) {
	c := gpu(t)
	s := uint64(0x9e3779b97f4a7c15)
	var a, b []float32
	for i := 0; i < 1<<20; i++ {
		// b: random normal floats of every exponent; a: 1 for the first quarter, then random.
		bb := math.Float32frombits(uint32(xorshift(&s))&0x7fffffff | 0x00800000)
		if bb > 1e37 || math.IsInf(float64(bb), 0) || math.IsNaN(float64(bb)) {
			bb = 3
		}
		aa := float32(1)
		if i >= 1<<18 {
			aa = float32(float64(xorshift(&s)>>11)/(1<<53)*2 - 1)
		}
		a, b = append(a, aa), append(b, bb)
	}
	q, m, err := c.ProbeDiv(a, b)
	if err != nil {
		t.Fatal(err)
	}
	same1, sameAll, within1 := 0, 0, 0
	for i := range q {
		if q[i] == m[i] {
			sameAll++
			if i < 1<<18 {
				same1++
			}
		} else if d := int64(math.Float32bits(q[i])) - int64(math.Float32bits(m[i])); d == 1 || d == -1 {
			within1++
		}
	}
	report(t, "a/b (-use_fast_math) == a*rcp.approx(b): %d of %d pairs with a = 1, %d of %d with a random in [-1,1); %d others 1 ulp apart",
		same1, 1<<18, sameAll-same1, len(q)-1<<18, within1)
	if same1 != 1<<18 {
		t.Errorf("1/b differs from rcp.approx(b) in %d of %d cases", 1<<18-same1, 1<<18)
	}

	// x/127 and 127/x over amax-like values: every float32 in [1, 2) at a stride and random.
	var xs []float32
	for u := uint32(0x3f800000); u < 0x40000000; u += 61 {
		xs = append(xs, math.Float32frombits(u))
	}
	for i := 0; i < 1<<18; i++ {
		xs = append(xs, math.Float32frombits(uint32(xorshift(&s))%0x7e000000+0x00800000))
	}
	over, into, err := c.ProbeDiv127(xs)
	if err != nil {
		t.Fatal(err)
	}
	rx := make([]uint32, len(xs))
	for i, x := range xs {
		rx[i] = math.Float32bits(x)
	}
	rcps, err := c.ProbeRcpList(rx)
	if err != nil {
		t.Fatal(err)
	}
	// The SASS of div_127 (H200, CUDA 13.0) is FMUL.FTZ x, float32(1/127) and
	// FMUL.FTZ MUFU.RCP(x), 127: both products flush a subnormal result to zero.
	ftz := func(v float32) float32 {
		if v != 0 && math.Abs(float64(v)) < 0x1p-126 {
			return float32(math.Copysign(0, float64(v)))
		}
		return v
	}
	inv127 := float32(1.0 / 127.0)
	mulConst, cr, intoRcp, intoCR := 0, 0, 0, 0
	for i, x := range xs {
		if over[i] == ftz(x*inv127) {
			mulConst++
		}
		if over[i] == float32(float64(x)/127) {
			cr++
		}
		if into[i] == ftz(127*math.Float32frombits(rcps[i])) {
			intoRcp++
		}
		if into[i] == float32(127/float64(x)) {
			intoCR++
		}
	}
	report(t, "x/127.0f: equals FTZ(x*float32(1/127)) in %d of %d, correctly rounded in %d", mulConst, len(xs), cr)
	report(t, "127.0f/x: equals FTZ(127*rcp.approx(x)) in %d of %d, correctly rounded in %d", intoRcp, len(xs), intoCR)
	if mulConst != len(xs) || intoRcp != len(xs) {
		t.Errorf("division by or of 127 under -use_fast_math is not the modelled product in %d and %d cases", len(xs)-mulConst, len(xs)-intoRcp)
	}
}

func TestHalf2Arithmetic(t *testing.T) {
	c := gpu(t)
	a, b, cc := Half2Sweep(1<<20, 42)
	add, mul, fma, err := c.ProbeHalf2(a, b, cc)
	if err != nil {
		t.Fatal(err)
	}
	for i, got := range [][]uint32{add, mul, fma} {
		rep := CompareHalf2(HalfOps[i].Name+".rn.f16x2", HalfOps[i].Op, a, b, cc, got)
		report(t, "%v", rep)
		if rep.Differ != 0 {
			t.Errorf("%s: %d results differ from exact IEEE binary16; e.g. (a, b, c, device) %04x", rep.Op, rep.Differ, rep.Examples)
		}
	}
	saveModule(t, c, "half2.cu")

	add, mul, fma, err = c.ProbeHalf2Intrinsics(a, b, cc)
	var ne *NVRTCError
	if errors.As(err, &ne) {
		report(t, "cuda_fp16.h intrinsics NOT RUN: NVRTC could not compile them (no CUDA include directory?): %v", err)
		skipOrFail(t, "SKIP (not a pass): cuda_fp16.h not available to NVRTC")
	}
	if err != nil {
		t.Fatal(err)
	}
	for i, got := range [][]uint32{add, mul, fma} {
		rep := CompareHalf2("__h"+HalfOps[i].Name+"2", HalfOps[i].Op, a, b, cc, got)
		report(t, "%v", rep)
		if rep.Differ != 0 {
			t.Errorf("%s: %d results differ from exact IEEE binary16; e.g. %04x", rep.Op, rep.Differ, rep.Examples)
		}
	}
	saveModule(t, c, "half2_intrinsics.cu")
}

func TestDp4a(t *testing.T) {
	c := gpu(t)
	s := uint64(7)
	var a, b, cc []int32
	edges := []int32{0, -1, math.MinInt32, math.MaxInt32, 0x7f7f7f7f, -0x7f7f7f80, 0x01010101, 0x80000000 - 0x100000000}
	for _, x := range edges {
		for _, y := range edges {
			for _, z := range edges {
				a, b, cc = append(a, x), append(b, y), append(cc, z)
			}
		}
	}
	for i := 0; i < 1<<20; i++ {
		r := xorshift(&s)
		a, b, cc = append(a, int32(r)), append(b, int32(r>>32)), append(cc, int32(xorshift(&s)))
	}
	got, err := c.ProbeDp4a(a, b, cc)
	if err != nil {
		t.Fatal(err)
	}
	bad := 0
	for i := range got {
		if want := Dp4aRef(a[i], b[i], cc[i]); got[i] != want {
			if bad < 5 {
				t.Errorf("dp4a(%#x, %#x, %d) = %d, want %d", uint32(a[i]), uint32(b[i]), cc[i], got[i], want)
			}
			bad++
		}
	}
	report(t, "dp4a.s32.s32: %d of %d results equal the exact wrap-around reference", len(got)-bad, len(got))
	saveModule(t, c, "dp4a.cu")
}

func TestMMALayout(t *testing.T) {
	c := gpu(t)
	if c.Info().Major < 8 {
		skipOrFail(t, fmt.Sprintf("SKIP (not a pass): mma.m16n8k32 s8 needs sm_80+, device is sm_%d%d", c.Info().Major, c.Info().Minor))
	}
	const random = 256
	ws := MmaLayoutExperiments(random, 11)
	outs, err := c.ProbeMMA(ws)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := CheckMmaLayout(ws, outs, random)
	if err != nil {
		t.Fatal(err)
	}
	report(t, "mma m16n8k32 s8: %d of 512 A slots match the documented layout in the one-hot experiments, %d of %d random warps equal the documented-layout product",
		rep.OneHotChecked, rep.RandomChecked, random)
	for _, p := range rep.Problems {
		report(t, "    problem: %s", p)
	}
	if !rep.OK() {
		t.Fatal("the device disagrees with the documented mma layout")
	}
	writeOut(t, "mma_m16n8k32_s8_layout.txt", []byte("# verified on "+c.Info().String()+"\n"+rep.Table))
	saveModule(t, c, "mma.cu")
}

func TestRoundInt8(t *testing.T) {
	c := gpu(t)
	xs := RoundSweep(1<<20, 3)
	r, q8, q4, err := c.ProbeRound(xs)
	if err != nil {
		t.Fatal(err)
	}
	roundBad, inRangeBad, q8q4 := 0, 0, 0
	hyp := map[Int8Conversion]int{}
	var outside [][3]string
	for i, x := range xs {
		u := math.Float32bits(x)
		want := RoundHalfAway(u)
		gb := math.Float32bits(r[i])
		if gb != want && !(x != x && r[i] != r[i]) {
			if roundBad < 5 {
				t.Errorf("roundf(%g = %#08x) = %#08x, want %#08x", x, u, gb, want)
			}
			roundBad++
		}
		if q8[i] != q4[i] {
			q8q4++
		}
		rv := float64(r[i])
		if rv >= -128 && rv <= 127 {
			if int8(rv) != q8[i] {
				if inRangeBad < 5 {
					t.Errorf("(int8_t)roundf(%g) = %d, want %d", x, q8[i], int8(rv))
				}
				inRangeBad++
			}
		} else if len(outside) < 24 && (len(outside) < 12 || rv != rv) {
			outside = append(outside, [3]string{fmt.Sprint(x), fmt.Sprint(r[i]), fmt.Sprint(q8[i])})
		}
		for _, h := range []Int8Conversion{Sat8, Wrap16, Wrap32} {
			if h.ToInt8(r[i]) != q8[i] {
				hyp[h]++
			}
		}
	}
	report(t, "roundf on %d sweep values: %d differ from round-half-away-from-zero", len(xs), roundBad)
	report(t, "(int8_t)roundf: %d in-range results wrong; quantize_q8_1 and char4 forms differ in %d; out-of-range hypotheses mismatches: sat8 %d, wrap16 %d, wrap32 %d",
		inRangeBad, q8q4, hyp[Sat8], hyp[Wrap16], hyp[Wrap32])
	for _, o := range outside {
		report(t, "    x = %s: roundf = %s, int8 = %s", o[0], o[1], o[2])
	}
	if q8q4 != 0 {
		t.Errorf("the int8_t and char4 conversions differ in %d cases", q8q4)
	}
	all, err := c.ProbeRoundAll()
	if err != nil {
		t.Fatal(err)
	}
	report(t, "%v", all)
	for _, e := range all.Examples[:min(len(all.Examples), 8)] {
		report(t, "    e.g. x = %#08x (%g): roundf %#08x, int8 %d, flags %d", e[0], math.Float32frombits(e[0]), e[1], int8(e[2]), e[3])
	}
	if all.RoundDiffer != 0 {
		t.Errorf("roundf differs from round-half-away-from-zero for %d of 2^32 inputs", all.RoundDiffer)
	}
	saveModule(t, c, "round.cu")
}
