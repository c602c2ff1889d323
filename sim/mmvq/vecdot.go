package mmvq

import (
	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim/q8"
)

// VecDot is one call of ggml's vec_dot_<type>_q8_1 (src/ggml-cuda/vecdotq.cuh) by one
// thread, together with the accumulation into that thread's running sum:
//
//	tmp = tmp + vec_dot_q_cuda(vx, &y[kby], kbx, iqs)
//
// where the compiler may fuse the last product of the vec_dot into the addition; which
// it does is read from the SASS of the ggml build (see FMA-SITES.md) and is part of each
// type's function, so VecDot takes tmp and returns the new tmp.
//
// xrow is the whole row of x (weights) as stored; kbx is the x block index in the row;
// y holds the q8_1 blocks of the column starting at block kby = kbx*(QK/32) (so y[0] is
// the first q8_1 block of x block kbx; a VecDot may read y[0 : QK/32]); iqs is the
// thread's int offset inside the x block (vdr*(tid % (qi/vdr))).
//
// A VecDot must be safe for concurrent use (MulMat calls it from several goroutines) and
// must not retain xrow or y.
type VecDot func(tmp float32, xrow []byte, kbx, iqs int, y []q8.Block) float32

// TypeKernel is what mul_mat_vec_q needs of a weight type: ggml's QK, QI and VDR
// (ggml_cuda_type_traits<type>::qk/qi and VDR_*_Q8_1_MMVQ) and the vec_dot.
type TypeKernel struct {
	Type        quant.Type
	QK, QI, VDR int
	// Dot is the vec_dot with its accumulation, as compiled in every instantiation
	// unless DotFor says otherwise.
	Dot VecDot
	// DotFor, if not nil, returns the vec_dot of one kernel instantiation
	// (mul_mat_vec_q<type, ncols> or mul_mat_vec_q_moe<type, 2>, ncols = 0 for the
	// latter) when the compiler emitted a different float sequence there; a nil result
	// means Dot.
	DotFor func(k Kernel, ncols int) VecDot
}

// dotFor returns the vec_dot of the instantiation.
func (tk *TypeKernel) dotFor(k Kernel, ncols int) VecDot {
	if tk.DotFor != nil {
		if d := tk.DotFor(k, ncols); d != nil {
			return d
		}
	}
	return tk.Dot
}

var kernels = map[quant.Type]TypeKernel{}

// newKernel returns the kernel of type t with the format's QK and QI, which package quant
// owns (Traits().BlockSize and Traits().QI), and the kernel's own vdr.
func newKernel(t quant.Type, vdr int, dot VecDot) TypeKernel {
	tr, _ := t.Traits()
	return TypeKernel{Type: t, QK: tr.BlockSize, QI: tr.QI, VDR: vdr, Dot: dot}
}

// register installs a type's kernel; each type's file calls it from init. A duplicate,
// a missing Dot, or constants that do not describe a whole number of threads per block
// are programming errors and panic.
func register(k TypeKernel) {
	if _, dup := kernels[k.Type]; dup {
		panic("mmvq: kernel registered twice for " + k.Type.String())
	}
	tr, _ := k.Type.Traits()
	if k.Dot == nil || k.QK <= 0 || k.QI <= 0 || k.VDR <= 0 || k.QI%k.VDR != 0 || k.QK%32 != 0 || k.QK != tr.BlockSize || k.QI != tr.QI {
		panic("mmvq: bad kernel registration for " + k.Type.String())
	}
	kernels[k.Type] = k
}

// KernelOf returns the kernel of type t and whether ggsim simulates MMVQ for it.
func KernelOf(t quant.Type) (TypeKernel, bool) {
	k, ok := kernels[t]
	return k, ok
}

// Types returns the types with a registered kernel, in ggml id order.
func Types() []quant.Type {
	var ts []quant.Type
	for t := quant.Type(0); t < quant.TypeCount; t++ {
		if _, ok := kernels[t]; ok {
			ts = append(ts, t)
		}
	}
	return ts
}
