package cuda

import "embed"

// kernelFS holds the probes' CUDA sources (kernels/*.cu). They are compiled at run
// time with NVRTC for the device at hand; nothing is compiled at build time.
//
//go:embed kernels/*.cu
var kernelFS embed.FS

// KernelSource returns the embedded source kernels/name (e.g. "rcp.cu").
func KernelSource(name string) (string, error) {
	b, err := kernelFS.ReadFile("kernels/" + name)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// FastMath is the option every probe that models ggml's build compiles with: ggml's
// CUDA backend is always built with -use_fast_math (ftz, approximate division and
// square root, fused multiply-add allowed).
const FastMath = "-use_fast_math"
