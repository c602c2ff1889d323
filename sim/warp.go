package sim

import "github.com/ggsim/ggsim/f16"

// WarpSize is the number of lanes of an NVIDIA warp (ggml's WARP_SIZE).
const WarpSize = 32

// Warp holds one float32 register of each of the 32 lanes of a warp: w[l] is lane l's
// value.
type Warp [WarpSize]float32

// checkWidth panics unless width is a power of two in [1, 32] (what __shfl_*_sync
// requires of width).
func checkWidth(width int) {
	if width < 1 || width > WarpSize || width&(width-1) != 0 {
		panic("sim: shuffle width must be a power of two in [1, 32]")
	}
}

// shflSource returns the lane whose value lane l receives from shfl.sync.bfly with lane
// mask b in segments of width lanes (CUDA __shfl_xor_sync(mask, v, b, width), which passes
// c = ((32-width)<<8) | 0x1f to PTX): j = l ^ b; if j lies above the last lane of l's
// segment, l keeps its own value. A j in an earlier segment is allowed (the PTX rule
// j <= maxLane).
func shflSource(l, b, width int) int {
	segMask := WarpSize - width
	maxLane := l&segMask | 31&^segMask
	j := l ^ (b & 31)
	if j > maxLane {
		return l
	}
	return j
}

// ShflXor returns, for every lane l, the value of lane l^laneMask as
// __shfl_xor_sync(0xffffffff, v, laneMask, width) delivers it (all lanes active). It
// counts one SHFL in c (nil-safe). It panics if width is not a power of two in [1, 32].
func (w *Warp) ShflXor(laneMask, width int, c *Counters) Warp {
	checkWidth(width)
	c.Inc(OpSHFL, 1)
	var r Warp
	for l := range w {
		r[l] = w[shflSource(l, laneMask, width)]
	}
	return r
}

// ShflDown returns, for every lane l, the value of lane l+delta if that lane is in l's
// segment of width lanes, else l's own value (__shfl_down_sync, all lanes active; PTX
// uses delta&31).
func (w *Warp) ShflDown(delta, width int, c *Counters) Warp {
	checkWidth(width)
	c.Inc(OpSHFL, 1)
	var r Warp
	for l := range w {
		j := l + delta&31
		if j <= l&^(width-1)+width-1 {
			r[l] = w[j]
		} else {
			r[l] = w[l]
		}
	}
	return r
}

// ShflUp returns, for every lane l, the value of lane l-delta if that lane is in l's
// segment of width lanes, else l's own value (__shfl_up_sync, all lanes active; PTX uses
// delta&31).
func (w *Warp) ShflUp(delta, width int, c *Counters) Warp {
	checkWidth(width)
	c.Inc(OpSHFL, 1)
	var r Warp
	for l := range w {
		j := l - delta&31
		if j >= l&^(width-1) {
			r[l] = w[j]
		} else {
			r[l] = w[l]
		}
	}
	return r
}

// ShflIdx returns, for every lane l, the value of lane (l's segment start) + src[l]%width
// (__shfl_sync(0xffffffff, v, src, width) with a per-lane source).
func (w *Warp) ShflIdx(src *[WarpSize]int, width int, c *Counters) Warp {
	checkWidth(width)
	c.Inc(OpSHFL, 1)
	var r Warp
	for l := range w {
		r[l] = w[l&^(width-1)+src[l]&(width-1)]
	}
	return r
}

// ReduceSum performs ggml's warp_reduce_sum<width> lane by lane, in place:
//
//	for offset := width/2; offset > 0; offset >>= 1 { x += __shfl_xor_sync(.., x, offset, width) }
//
// each step an Add (add.ftz.f32) of a lane's own value and its partner's (own value
// first). After it every lane of a segment holds the same value, which equals
// ReduceSumTree of the segment's inputs. Counts one SHFL and 32 FADD per step in c.
// It panics if width is not a power of two in [1, 32].
func (w *Warp) ReduceSum(width int, c *Counters) {
	checkWidth(width)
	for off := width / 2; off > 0; off >>= 1 {
		t := w.ShflXor(off, width, c)
		for l := range w {
			w[l] = Add(w[l], t[l])
		}
		c.Inc(OpFADD, WarpSize)
	}
}

// ReduceMax performs ggml's warp_reduce_max<width> lane by lane, in place: each step
// x = fmaxf(x, shfl_xor(x, offset)) (FMaxf). Counts one SHFL and 32 FMNMX per step.
func (w *Warp) ReduceMax(width int, c *Counters) {
	checkWidth(width)
	for off := width / 2; off > 0; off >>= 1 {
		t := w.ShflXor(off, width, c)
		for l := range w {
			w[l] = FMaxf(w[l], t[l])
		}
		c.Inc(OpFMNMX, WarpSize)
	}
}

// ReduceSumTree returns the value every lane of a width-lane segment holds after
// warp_reduce_sum<width>, given the segment's inputs x (len(x) = width, a power of two):
// the xor butterfly computed for lane 0 only,
//
//	for h := width/2; h > 0; h /= 2 { for l < h: x[l] = Add(x[l], x[l+h]) }; return x[0]
//
// (offsets 16, 8, 4, 2, 1 for width 32: ((x0+x16)+(x8+x24)) + ... as a tree, not a
// sequential sum). All lanes end equal because lane l and lane l^o add the same two values
// in the opposite order and Add is commutative bit for bit (NaN results are canonical), so
// at every step partners hold equal values. x is overwritten. It panics if len(x) is not a
// power of two in [1, 32].
//
// A butterfly over the offsets o, o/2, ..., 1 only (any shuffle width >= 2o, as in
// quantize_mmq_q8_1's loops from vals_per_scale/8 down to 1) stays inside aligned groups
// of 2o lanes, so its value is ReduceSumTree of each 2o-lane group.
func ReduceSumTree(x []float32) float32 {
	checkWidth(len(x))
	for h := len(x) / 2; h > 0; h >>= 1 {
		for l := 0; l < h; l++ {
			x[l] = Add(x[l], x[l+h])
		}
	}
	return x[0]
}

// ReduceSum32 is ReduceSumTree for a full warp without modifying x.
func ReduceSum32(x *[WarpSize]float32) float32 {
	t := *x
	return ReduceSumTree(t[:])
}

// ReduceMaxTree is ReduceSumTree with FMaxf in place of Add: the value every lane holds
// after warp_reduce_max<len(x)>. (fmaxf is also order-independent, but the tree is kept.)
// x is overwritten.
func ReduceMaxTree(x []float32) float32 {
	checkWidth(len(x))
	for h := len(x) / 2; h > 0; h >>= 1 {
		for l := 0; l < h; l++ {
			x[l] = FMaxf(x[l], x[l+h])
		}
	}
	return x[0]
}

// ReduceSumHalf2Tree returns the value every lane holds after warp_reduce_sum<len(x)> on
// half2 values (each step __hadd2, f16.Add2), computed for lane 0 as in ReduceSumTree. x
// is overwritten.
func ReduceSumHalf2Tree(x []f16.Half2) f16.Half2 {
	checkWidth(len(x))
	for h := len(x) / 2; h > 0; h >>= 1 {
		for l := 0; l < h; l++ {
			x[l] = f16.Add2(x[l], x[l+h])
		}
	}
	return x[0]
}

// ReduceSumInt returns the integer warp_reduce_sum of x (wrap-around int32 addition; on
// Ampere and newer __reduce_add_sync, elsewhere a butterfly: exact and order-independent
// either way).
func ReduceSumInt(x []int32) int32 {
	var s int32
	for _, v := range x {
		s += v
	}
	return s
}
