package cuda

import (
	"slices"
	"testing"
)

func TestNVRTCCandidates(t *testing.T) {
	t.Setenv("GGSIM_NVRTC", "/opt/x/libnvrtc.so.13")
	t.Setenv("CUDA_HOME", "/opt/cuda")
	t.Setenv("CUDA_PATH", "")
	got := NVRTCCandidates(Options{})
	want := []string{
		"/opt/x/libnvrtc.so.13",
		"libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12",
		"/opt/cuda/lib64/libnvrtc.so", "/opt/cuda/lib64/libnvrtc.so.13", "/opt/cuda/lib64/libnvrtc.so.12",
		"/usr/local/cuda/lib64/libnvrtc.so", "/usr/local/cuda/lib64/libnvrtc.so.13", "/usr/local/cuda/lib64/libnvrtc.so.12",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("NVRTCCandidates = %q\nwant %q", got, want)
	}
	if got := NVRTCCandidates(Options{NVRTCLib: "/a/b.so"}); !slices.Equal(got, []string{"/a/b.so"}) {
		t.Fatalf("override: %q", got)
	}
	if got := DriverCandidates(Options{}); !slices.Equal(got, []string{"libcuda.so.1", "libcuda.so"}) {
		t.Fatalf("DriverCandidates = %q", got)
	}
}

func TestParseProcDriverVersion(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  Thu Oct  2 19:33:23 UTC 2025\nGCC version:  gcc 12\n", "580.159.04"},
		{"NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  550.54.15  Release Build\n", "550.54.15"},
		{"garbage\n", ""},
		{"", ""},
	} {
		if got := parseProcDriverVersion(c.in); got != c.want {
			t.Errorf("parseProcDriverVersion(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestDeviceInfoFormatting(t *testing.T) {
	d := DeviceInfo{Name: "NVIDIA H200", Major: 9, Minor: 0, SMCount: 132, WarpSize: 32, DriverAPI: 13000, Driver: "580.159.04"}
	if d.CC() != 900 || d.Arch() != "sm_90" {
		t.Fatalf("CC %d Arch %s", d.CC(), d.Arch())
	}
	if s := d.String(); s == "" {
		t.Fatal("empty String")
	}
}
