//go:build goexperiment.simd && amd64

package mmvq

import (
	"math"
	"simd/archsimd"
	"sync/atomic"
	"unsafe"

	"github.com/ggsim/ggsim/f16"
	"github.com/ggsim/ggsim/sim"
	"github.com/ggsim/ggsim/sim/q8"
	"github.com/ggsim/ggsim/tiling"
)

// The Q4_K thread-lane kernel with 16 lanes (AVX-512, checked at run time; the 8-lane
// kernel otherwise): one vector holds the 16 threads of one x block (thread 16v+t in lane
// t of vector v, t = iqs/2), so each vec_dot step is one 512-bit operation where the
// 8-lane kernel needs two. The float steps, the argument that needs no lane checks, the
// hand-over to the checked 8-row path and the reduction order are q45KThreads'; only the
// lanes differ: thread t reads qs ints 8(t/4)+t%4 (v0) and +4 (v1), which one VPERMI2D
// per operand picks from the two 64-byte halves of qs, and the scales of sub-blocks
// 2(t/4)+i.

// useLanes16 lets tests run the 8-lane kernel on a CPU with AVX-512.
var useLanes16 = true

// threads16Groups counts the row groups the 16-lane kernel computed (tests).
var threads16Groups atomic.Int64

// lanes16 reports whether this CPU runs the 16-lane kernel.
func lanes16() bool { return useLanes16 && archsimd.X86.AVX512() }

// q4KT16Col is what lane t of a block's vector reads of a column for step i of
// vec_dot_q4_K_q8_1: block y[bq8+i] (bq8 = 2(t/4))'s ints t%4 and t%4+4, h2f(d8) and
// the sum of its eight values.
type q4KT16Col struct {
	u0, u1 [16]int32
	d8     [16]float32
	bs     [16]int32
}

// q4KT16Cols builds a column's 16-lane table for nblocks Q4_K blocks; it accepts a
// column whose d8 are all finite.
func q4KT16Cols(nblocks int) func(y []q8.Block, t []q4KT16Col) ([]q4KT16Col, bool) {
	return func(y []q8.Block, t []q4KT16Col) ([]q4KT16Col, bool) {
		t = grow(t, 2*nblocks)
		ok := true
		for kbx := range nblocks {
			for i := range 2 {
				e := &t[2*kbx+i]
				for l := range 16 {
					var fin bool
					e.u0[l], e.u1[l], e.bs[l], e.d8[l], fin = q4KLane(y, kbx, i, l)
					ok = ok && fin
				}
			}
		}
		return t, ok
	}
}

var (
	// q4K16V0/V1: thread t's v0 and v1 ints among qs ints 0..31 (x: 0..15, y: 16..31)
	q4K16V0 = archsimd.LoadUint32x16(&[16]uint32{0, 1, 2, 3, 8, 9, 10, 11, 16, 17, 18, 19, 24, 25, 26, 27})
	q4K16V1 = archsimd.LoadUint32x16(&[16]uint32{4, 5, 6, 7, 12, 13, 14, 15, 20, 21, 22, 23, 28, 29, 30, 31})
	// q4K16Sc[i]: thread t reads sub-block 2(t/4)+i
	q4K16Sc = [2]archsimd.Uint32x16{
		archsimd.LoadUint32x16(&[16]uint32{0, 0, 0, 0, 2, 2, 2, 2, 4, 4, 4, 4, 6, 6, 6, 6}),
		archsimd.LoadUint32x16(&[16]uint32{1, 1, 1, 1, 3, 3, 3, 3, 5, 5, 5, 5, 7, 7, 7, 7}),
	}
	nib16    = archsimd.BroadcastUint32x16(0x0F0F0F0F)
	four16   = archsimd.BroadcastUint32x16(4)
	ones1632 = archsimd.BroadcastInt16x32(1)
	zero16   = archsimd.BroadcastFloat32x16(0)
	sign16   = archsimd.BroadcastInt32x16(-0x80000000)
)

// load64 loads 64 bytes at b[o:].
func load64(b []byte, o int) archsimd.Uint32x16 {
	return archsimd.LoadUint8x64((*[64]uint8)(unsafe.Pointer(unsafe.SliceData(b[o : o+64])))).AsUint32x16()
}

// q4KThreads16 is the Q4_K kernel with 16 lanes; checked is the checked 8-row kernel
// (made on first use by the caller). It returns nil where the launch is not one it
// handles.
func q4KThreads16(l *launch, checked rows8Func) rows8Func {
	p := l.plan
	nt := p.ThreadsPerRow()
	if p.QI/p.VDR != 16 || nt%32 != 0 || nt/16 > 8 || p.BlocksPerIter != nt/16 || p.QK != 256 {
		return nil
	}
	const blockBytes, qsAt = 144, 16
	nv, nw, bpi, nblocks := nt/16, nt/32, p.BlocksPerIter, l.nblocks
	cache := colCache[q4KT16Col]{build: q4KT16Cols(nblocks)}
	var tabs [tiling.MMVQMaxBatchSize][]q4KT16Col
	var tmp [tiling.MMVQMaxBatchSize][8]archsimd.Float32x16
	return func(rows *[8][]byte, ys [][]q8.Block, out [][8]float32) {
		nc := len(ys)
		if !columnTables(&cache, ys, &tabs) {
			checked(rows, ys, out) // a column the kernel does not take (its table builder says which)
			return
		}
		for q, row := range rows {
			row = row[:nblocks*blockBytes]
			for j := range nc {
				for v := range nv {
					tmp[j][v] = zero16
				}
			}
			vb := 0 // kbx % bpi: the vector of block kbx
			for kbx := range nblocks {
				b := row[kbx*blockBytes : (kbx+1)*blockBytes]
				sc8, m8 := q4KScales8(b[4:16]) // first: no scalar float across the call
				dm := le32(b)
				if dm&0x7c00 == 0x7c00 || dm&0x7c000000 == 0x7c000000 {
					checked(rows, ys, out) // a d or dmin is Inf or NaN
					return
				}
				d := archsimd.BroadcastFloat32x16(sim.H2F(f16.Half(dm)))
				dmin := archsimd.BroadcastFloat32x16(sim.H2F(f16.Half(dm >> 16)))
				X, Y := load64(b, qsAt), load64(b, qsAt+64)
				V0, V1 := X.ConcatPermute(Y, q4K16V0), X.ConcatPermute(Y, q4K16V1)
				v00, v01 := V0.And(nib16).AsUint8x64(), V1.And(nib16).AsUint8x64()
				v10, v11 := V0.ShiftRight(four16).And(nib16).AsUint8x64(), V1.ShiftRight(four16).And(nib16).AsUint8x64()
				var z archsimd.Int32x16
				sc16, m16 := z.SetLo(sc8), z.SetLo(m8)
				sc0, sc1 := sc16.Permute(q4K16Sc[0]), sc16.Permute(q4K16Sc[1])
				m0, m1 := m16.Permute(q4K16Sc[0]), m16.Permute(q4K16Sc[1])
				for j := range nc {
					e := tabs[j][2*kbx:]
					e0, e1 := &e[0], &e[1]
					u00 := archsimd.LoadInt32x16(&e0.u0).AsInt8x64()
					u01 := archsimd.LoadInt32x16(&e0.u1).AsInt8x64()
					u10 := archsimd.LoadInt32x16(&e1.u0).AsInt8x64()
					u11 := archsimd.LoadInt32x16(&e1.u1).AsInt8x64()
					dot10 := v00.DotProductPairsSaturated(u00).Add(v01.DotProductPairsSaturated(u01)).DotProductPairs(ones1632)
					dot11 := v10.DotProductPairsSaturated(u10).Add(v11.DotProductPairsSaturated(u11)).DotProductPairs(ones1632)
					d80, d81 := archsimd.LoadFloat32x16(&e0.d8), archsimd.LoadFloat32x16(&e1.d8)
					sumfD := d80.MulAdd(dot10.Mul(sc0).ConvertToFloat32(), zero16)
					sumfM := d80.MulAdd(archsimd.LoadInt32x16(&e0.bs).Mul(m0).ConvertToFloat32(), zero16)
					sumfD = d81.MulAdd(dot11.Mul(sc1).ConvertToFloat32(), sumfD)
					sumfM = d81.MulAdd(archsimd.LoadInt32x16(&e1.bs).Mul(m1).ConvertToFloat32(), sumfM)
					r := sumfD.MulAdd(d, sumfM.Mul(dmin).AsInt32x16().Xor(sign16).AsFloat32x16())
					t := &tmp[j][vb]
					*t = t.Add(r)
				}
				if vb++; vb == bpi {
					vb = 0
				}
			}
			for j := range nc {
				out[j][q] = math.Float32frombits(threadsReduce16(tmp[j][:nv], nw))
			}
		}
		threads8Groups.fast.Add(1)
		threads16Groups.Add(1)
	}
}

// threadsReduce16 is threadsReduce for 16-lane vectors (thread 16v+t in lane t of
// acc[v]; warp w is acc[2w], acc[2w+1]).
func threadsReduce16(acc []archsimd.Float32x16, nw int) uint32 {
	s0, s1 := acc[0], acc[1]
	for w := 1; w < nw; w++ {
		s0, s1 = s0.Add(acc[2*w]), s1.Add(acc[2*w+1])
	}
	u := s0.Add(s1)                         // h = 16: lanes L and L+16
	v := u.GetLo().Add(u.GetHi())           // h = 8
	v = v.Add(v.Select128FromPair(1, 0, v)) // h = 4
	v = v.Add(v.AsInt32x8().PermuteScalarsGrouped(2, 3, 0, 1).AsFloat32x8())
	v = v.Add(v.AsInt32x8().PermuteScalarsGrouped(1, 0, 3, 2).AsFloat32x8())
	var o [8]uint32
	v.AsUint32x8().Store(&o)
	return o[0]
}
