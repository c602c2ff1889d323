package oracle

import (
	"errors"

	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
	"github.com/ggsim/ggsim/sim/glu"
)

// ErrUnsupported is errors.ErrUnsupported: every error that says an implementation does
// not model a case (a kernel, type, op or device it does not simulate) wraps it, whichever
// package made it (quant.ErrUnsupported, sim.ErrUnsupported, the root package's
// simulator, a GPU backend's refusal all match it). The verifier classifies with
// errors.Is, never by the text, and reports such a case as UNSUPPORTED, which is a
// failure, never a pass.
var ErrUnsupported = errors.ErrUnsupported

// Impl is an implementation of ggml's CUDA quantized matmuls under test: the simulator
// (ggsim.Simulator in the root package), or a GPU backend (gpu/ggml). Shapes and layouts are ggml's (ne[0] contiguous):
//
//	MulMat:   a [K,N] of type t, b f32 [K,M]            → dst f32 [N,M]   (dst[j*N+i])
//	MulMatID: as [K,N,E], b f32 [K,B1,T], ids i32 [U,T] → dst f32 [N,U,T] (dst[(t*U+u)*N+i])
//
// For MulMatID, token t's slot u uses expert ids[t*U+u] and activation row
// b[t][u % B1] (B1 is 1 when the activations are broadcast to every slot).
type Impl interface {
	Name() string
	MulMat(dev sim.Device, t quant.Type, a []byte, K, N int, b []float32, M int) ([]float32, error)
	MulMatID(dev sim.Device, t quant.Type, as []byte, K, N, E int, b []float32, B1, T int, ids []int32, U int) ([]float32, error)
}

// GLUImpl is implemented by an Impl that computes the golden schema's GLU ops: one
// graph {gate matmul, up matmul, GLU} with the gate first (mul_mat_glu: gate and up
// [K,N], b [K,M] → [N,M]; mul_mat_id_glu: gate and up [K,N,E], b [K,B1,T], ids [U,T] →
// [N,U,T]). fusionAllowed false is ggml run with GGML_CUDA_DISABLE_FUSION=1. An Impl
// without it has every GLU case UNSUPPORTED.
type GLUImpl interface {
	MulMatGLU(dev sim.Device, t quant.Type, gate, up []byte, K, N int, b []float32, M int, g glu.Spec, fusionAllowed bool) ([]float32, error)
	MulMatIDGLU(dev sim.Device, t quant.Type, gate, up []byte, K, N, E int, b []float32, B1, T int, ids []int32, U int, g glu.Spec, fusionAllowed bool) ([]float32, error)
}

// Localizer is implemented by an Impl that can say where, inside the kernel, an output
// element was computed (MMVQ: block, warp, lane, k steps; MMQ: output tile, the
// stream-K blocks and K ranges of its partial sums, the fixup and its add order); the
// verifier appends it to a mismatch report.
type Localizer interface {
	Locate(dev sim.Device, t quant.Type, K, N, M int, index int) string
}
