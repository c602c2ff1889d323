package cuda

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// DriverCandidates returns the driver library names Open tries, in order.
func DriverCandidates(o Options) []string {
	if o.DriverLib != "" {
		return []string{o.DriverLib}
	}
	return []string{"libcuda.so.1", "libcuda.so"}
}

// nvrtcNames are the NVRTC file names tried, newest first after the unversioned link.
var nvrtcNames = []string{"libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12"}

// NVRTCCandidates returns the NVRTC libraries Open tries, in order: o.NVRTCLib alone if
// set; else $GGSIM_NVRTC (if set), the plain names (the loader's search path), then the
// names under $CUDA_HOME/lib64, $CUDA_PATH/lib64 and /usr/local/cuda/lib64.
func NVRTCCandidates(o Options) []string {
	if o.NVRTCLib != "" {
		return []string{o.NVRTCLib}
	}
	var c []string
	if p := os.Getenv("GGSIM_NVRTC"); p != "" {
		c = append(c, p)
	}
	c = append(c, nvrtcNames...)
	seen := map[string]bool{}
	for _, dir := range []string{os.Getenv("CUDA_HOME"), os.Getenv("CUDA_PATH"), "/usr/local/cuda"} {
		if dir == "" || seen[dir] {
			continue
		}
		seen[dir] = true
		for _, n := range nvrtcNames {
			c = append(c, filepath.Join(dir, "lib64", n))
		}
	}
	return c
}

var procDriverRE = regexp.MustCompile(`Kernel Module(?:\s+for\s+\S+)?\s+([0-9]+\.[0-9]+(?:\.[0-9]+)?)`)

// parseProcDriverVersion extracts the driver version from the text of
// /proc/driver/nvidia/version ("NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  ...").
func parseProcDriverVersion(text string) string {
	for _, line := range strings.Split(text, "\n") {
		if !strings.HasPrefix(line, "NVRM version:") {
			continue
		}
		if m := procDriverRE.FindStringSubmatch(line); m != nil {
			return m[1]
		}
	}
	return ""
}
