//go:build cuda && cgo

package cuda

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"testing"
)

// skipOrFail skips the test with msg, which begins "SKIP (not a pass):" and says what is
// missing, or fails it when GGSIM_REQUIRE_GPU=1: on the device (docs/device-workflow.md)
// every test must run, so a missing GPU, library or compiler is an error there.
func skipOrFail(t *testing.T, msg string) {
	t.Helper()
	if os.Getenv("GGSIM_REQUIRE_GPU") == "1" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}

// nvrtcOrSkip skips a test that needs NVRTC when none can be loaded, saying why (fails
// with GGSIM_REQUIRE_GPU=1).
func nvrtcOrSkip(t *testing.T) {
	t.Helper()
	if _, _, _, err := NVRTCVersion(Options{}); err != nil {
		skipOrFail(t, fmt.Sprintf("SKIP (not a pass): no NVRTC library could be loaded; set GGSIM_NVRTC or CUDA_HOME: %v", err))
	}
}

// Every embedded kernel compiles with NVRTC for sm_90 (no GPU is needed for this), and
// the PTX holds the instructions the probes are about.
func TestCompileKernels(t *testing.T) {
	nvrtcOrSkip(t)
	maj, min, path, _ := NVRTCVersion(Options{})
	t.Logf("NVRTC %d.%d from %s", maj, min, path)
	want := map[string][]string{
		"rcp.cu":      {"rcp.approx.ftz.f32", "mul.rn.ftz.f32"},
		"half2.cu":    {"add.rn.f16x2", "mul.rn.f16x2", "fma.rn.f16x2"},
		"dp4a.cu":     {"dp4a.s32.s32"},
		"mma.cu":      {"mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32"},
		"round.cu":    {".entry round_i8", ".entry round_all"},
		"sweep.cu":    {".entry rcp_all", ".entry div127_all", ".entry div_all", ".entry div127num_all", "rcp.approx.ftz.f32", "mul.ftz.f32"},
		"specials.cu": {".entry float_specials", ".entry byte_perm_list", "mul.ftz.f32", "fma.rn.ftz.f32", "prmt.b32"},
		"tiny.cu":     {".entry tiny_mul", ".entry tiny_fma", "mul.ftz.f32", "fma.rn.ftz.f32"},
		"half.cu":     {".entry half_ops", ".entry h2f_all", ".entry half_specials", ".entry f2h_all"},
		"fp16path.cu": {".entry fp16_convert", ".entry fp16_mmv_q4_K", ".entry fp16_mmv_q8_0", ".entry fp16_glu_iq4_xs", ".entry fp16_rmsnorm_convert", "ex2.approx.ftz.f32", "rsqrt.approx.ftz.f32", "fma.rn.f16x2", "prmt.b32", "cvt.rn.f16.f32", "fma.rn.ftz.f32"},
	}
	// These need cuda_fp16.h, which an NVRTC older than 12 does not have built in; the
	// device tests pass the CUDA include directory (fp16Include).
	needsFP16 := map[string]bool{"half2_intrinsics.cu": true, "half.cu": true}
	entries, err := fs.ReadDir(kernelFS, "kernels")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		src, err := KernelSource(e.Name())
		if err != nil {
			t.Fatal(err)
		}
		opts := []string{FastMath}
		if needsFP16[e.Name()] {
			opts = append(opts, fp16Include()...)
		}
		p, err := CompileProgram(Options{}, e.Name(), src, "sm_90", opts...)
		if err != nil {
			var ne *NVRTCError
			if needsFP16[e.Name()] && errors.As(err, &ne) && strings.Contains(ne.Log, "cuda_fp16.h") {
				t.Logf("%s does not compile with this NVRTC (the probe reports this): %v", e.Name(), err)
				continue
			}
			t.Fatalf("%s: %v", e.Name(), err)
		}
		if len(p.Cubin) == 0 || p.PTX == "" {
			t.Fatalf("%s: empty cubin (%d bytes) or PTX (%d bytes)", e.Name(), len(p.Cubin), len(p.PTX))
		}
		for _, w := range want[e.Name()] {
			if !strings.Contains(p.PTX, w) {
				t.Errorf("%s: PTX lacks %q", e.Name(), w)
			}
		}
		if testing.Verbose() && e.Name() == "round.cu" {
			t.Logf("round.cu PTX of round_i8:\n%s", entryPTX(p.PTX, "round_i8"))
		}
	}
}

func TestCompileErrorHasLog(t *testing.T) {
	nvrtcOrSkip(t)
	_, err := CompileProgram(Options{}, "bad.cu", "extern \"C\" __global__ void k() { undeclared_thing(); }", "sm_90")
	var ne *NVRTCError
	if !errors.As(err, &ne) {
		t.Fatalf("error %v is not an *NVRTCError", err)
	}
	if ne.Call != "nvrtcCompileProgram" || !strings.Contains(ne.Log, "undeclared_thing") || !strings.Contains(err.Error(), "NVRTC_ERROR_COMPILATION") {
		t.Fatalf("error lacks the call, the code's name or the log: %v", err)
	}
	if _, err := CompileProgram(Options{}, "x.cu", "", "compute_90"); err == nil {
		t.Fatal("compute_90 accepted as a real architecture")
	}
}

func TestMissingNVRTC(t *testing.T) {
	_, err := CompileProgram(Options{NVRTCLib: "/nonexistent/libnvrtc.so"}, "x.cu", "", "sm_90")
	if !errors.Is(err, ErrNoNVRTC) || !strings.Contains(err.Error(), "/nonexistent/libnvrtc.so") {
		t.Fatalf("error %v does not match ErrNoNVRTC or does not name the library", err)
	}
}

// entryPTX returns the text of one .entry of a PTX module (for logs).
func entryPTX(ptx, name string) string {
	i := strings.Index(ptx, ".entry "+name)
	if i < 0 {
		return ""
	}
	j := strings.Index(ptx[i+1:], ".entry ")
	if j < 0 {
		return ptx[i:]
	}
	return ptx[i : i+1+j]
}
