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

// The thread-lane path of Q4_K (GOEXPERIMENT=simd, amd64 with AVX2 and FMA): one row at
// a time, eight simulated threads of the row side by side, thread 8v+l in lane l of
// vector v. Each thread's float sequence is its scalar one (its x blocks ascending, the
// vec_dot's steps in order); the cross-warp adds and the butterfly are lane-wise adds
// and in-register permutations in the GPU's order. Unlike the 8-row path (rows8Of), the
// weights need no transposition (the ints of threads 8G..8G+7 of a block are two
// 128-bit halves of its qs) and what one thread reads of a column (its u ints, h2f(d8),
// Σu) is tabled once per column in lane order (q4KTCol).
//
// No lane checks. Every float value of the Q4_K vec_dot chain, the cross-warp adds and
// the butterfly is an integer multiple of 2^-48: halves (d8, d, dmin) are multiples of
// 2^-24, the dp4a results integers, so d8·I2F(n) is a multiple of 2^-24 and
// sumf·h2f(dm) of 2^-48; a sum or a rounded result of multiples of 2^-48 is one again
// (a float32 of magnitude at least 2^-25 has an ulp of at least 2^-48, and a smaller
// multiple of 2^-48 is exact). A non-zero result therefore has magnitude at least 2^-48,
// far from the flush range (below 2^-126) where the GPU's FTZ arithmetic differs from
// IEEE's. And with finite halves nothing overflows: |dot1·sc| ≤ 8·15·128·63 < 2^20, so
// |sumf_d| < 2·2^16·2^20 = 2^37 and |sumf_d·d| < 2^53; |dot2·m| ≤ 8·128·63 < 2^16, so
// |sumf_m·dmin| < 2^49; a thread's result per block is below 2^54, and an output sums at
// most 16·nblocks of them (nblocks < 2^23 for any row ggml can address): below 2^81. So where every half the launch reads is finite
// (every block's dm as it is read; the column tables: every d8), the CPU's unflushed IEEE
// FMA, MUL and ADD give the GPU's bits, and the zeros behave the same on both (IEEE's
// sign rules). Elsewhere the group of rows goes to the checked 8-row path, which handles
// Inf, NaN and the flush (TestThreads8MatchesScalar covers both sides). The block offsets
// the kernels read are quant's (TestThreads8Layouts).

// useThreads8 lets tests run the 8-row path on data the thread-lane path takes.
var useThreads8 = true

// threads8Groups counts the row groups of the thread-lane kernels: fast (no lane
// checks) and checked (given to the 8-row path); tests read it to see both taken.
var threads8Groups struct{ fast, checked atomic.Int64 }

// q4KTCol is what lane l of a thread-lane vector reads of one q8_1 block pair for step i
// of vec_dot_q4_K_q8_1: for the threads t = 8G+l of an x block (iqs = 2t, bq8 =
// 4G+2(l/4), i0 = l%4), block y[bq8+i]'s ints i0 and i0+4, h2f(d8) and the sum of its
// eight int8 values (dot2).
type q4KTCol struct {
	u0, u1 [8]int32
	d8     [8]float32
	bs     [8]int32
}

// checkedPath returns the checked kernel f(l) for the row groups a thread-lane kernel
// hands over, made on its first call (most launches never need it) and counted.
func checkedPath(l *launch, f rows8Factory) rows8Func {
	var g rows8Func
	return func(rows *[8][]byte, ys [][]q8.Block, out [][8]float32) {
		threads8Groups.checked.Add(1)
		if g == nil {
			g = f(l)
		}
		g(rows, ys, out)
	}
}

// columnTables sets tabs[j] to the table of column ys[j] and reports whether c's builder
// accepted every column.
func columnTables[E any](c *colCache[E], ys [][]q8.Block, tabs *[tiling.MMVQMaxBatchSize][]E) bool {
	for j, y := range ys {
		t, ok := c.get(y)
		if !ok {
			return false
		}
		tabs[j] = t
	}
	return true
}

// zeroSums sets the threads' sums of the nc columns (nv vectors each) to +0.
func zeroSums(tmp *[tiling.MMVQMaxBatchSize][16]archsimd.Float32x8, nc, nv int) {
	for j := range nc {
		for v := range nv {
			tmp[j][v] = zero8
		}
	}
}

// colCache holds the lane tables (entries E) of the columns one worker met in this
// launch, keyed by the column's first block (a launch's columns do not change while it
// runs); build fills a column's table and says whether the kernel may run it without
// lane checks.
type colCache[E any] struct {
	key   []*q8.Block
	tab   [][]E
	ok    []bool
	next  int
	build func(y []q8.Block, t []E) ([]E, bool)
}

const colCacheSize = 16

// get returns column y's table and whether build accepted it.
func (c *colCache[E]) get(y []q8.Block) ([]E, bool) {
	k := &y[0]
	for i, p := range c.key {
		if p == k {
			return c.tab[i], c.ok[i]
		}
	}
	i := c.next
	if len(c.key) < colCacheSize {
		c.key, c.tab, c.ok = append(c.key, nil), append(c.tab, nil), append(c.ok, false)
		i = len(c.key) - 1
	} else {
		c.next = (c.next + 1) % colCacheSize
	}
	t, ok := c.build(y, c.tab[i])
	c.key[i], c.tab[i], c.ok[i] = k, t, ok
	return t, ok
}

// grow returns t with length n, reusing its array when it can.
func grow[E any](t []E, n int) []E {
	if cap(t) < n {
		return make([]E, n)
	}
	return t[:n]
}

// finiteHalf reports whether h is neither Inf nor NaN.
func finiteHalf(h f16.Half) bool { return h&0x7c00 != 0x7c00 }

// q4KLane is what thread t (0..15) of x block kbx reads of a column for step i of
// vec_dot_q4_K_q8_1: block y[kbx·8 + bq8 + i] (bq8 = 2(t/4))'s ints t%4 and t%4+4, the
// sum of their eight values, h2f(d8), and whether d8 is finite.
func q4KLane(y []q8.Block, kbx, i, t int) (u0, u1, bs int32, d8 float32, finite bool) {
	b := &y[kbx*8+2*(t/4)+i]
	u0, u1 = b.Int(t%4), b.Int(t%4+4)
	return u0, u1, bsum(u0) + bsum(u1), sim.H2F(b.D), finiteHalf(b.D)
}

// q4KTCols builds a column's Q4_K lane table for nblocks x blocks (8 q8_1 blocks each);
// it accepts a column whose d8 are all finite.
func q4KTCols(nblocks int) func(y []q8.Block, t []q4KTCol) ([]q4KTCol, bool) {
	return func(y []q8.Block, t []q4KTCol) ([]q4KTCol, bool) {
		t = grow(t, 4*nblocks)
		ok := true
		for kbx := range nblocks {
			for G := range 2 {
				for i := range 2 {
					e := &t[(kbx*2+G)*2+i]
					for l := range 8 {
						var fin bool
						e.u0[l], e.u1[l], e.bs[l], e.d8[l], fin = q4KLane(y, kbx, i, 8*G+l)
						ok = ok && fin
					}
				}
			}
		}
		return t, ok
	}
}

var (
	// lane s of the scale vectors is sub-block s; its byte of each scale word is s%4
	tScaleShift = archsimd.LoadUint32x8(&[8]uint32{0, 8, 16, 24, 0, 8, 16, 24})
	tScaleLo    = archsimd.LoadUint32x8(&[8]uint32{1, 1, 1, 1, 0, 0, 0, 0})
	// tScaleIdx[G][i]: lane l of threads 8G..8G+7 reads sub-block 2j+i, j = 2G + l/4
	tScaleIdx = [2][2]archsimd.Uint32x8{
		{archsimd.LoadUint32x8(&[8]uint32{0, 0, 0, 0, 2, 2, 2, 2}), archsimd.LoadUint32x8(&[8]uint32{1, 1, 1, 1, 3, 3, 3, 3})},
		{archsimd.LoadUint32x8(&[8]uint32{4, 4, 4, 4, 6, 6, 6, 6}), archsimd.LoadUint32x8(&[8]uint32{5, 5, 5, 5, 7, 7, 7, 7})},
	}
	ones32 = archsimd.BroadcastUint32x8(1)
	// shift counts as vectors: Go 1.26 loads a scalar count with a legacy-SSE MOVQ
	four32 = archsimd.BroadcastUint32x8(4)
	six32  = archsimd.BroadcastUint32x8(6)
)

// q4KScales8 is get_scale_min_k4 of the eight sub-blocks of a Q4_K/Q5_K block from its
// 12 scale bytes: lane s holds sc[s] and m[s].
func q4KScales8(scales []byte) (sc, m archsimd.Int32x8) {
	W0 := archsimd.BroadcastUint32x8(uint32(le32(scales))).ShiftRight(tScaleShift).And(byteMask)
	W1 := archsimd.BroadcastUint32x8(uint32(le32(scales[4:]))).ShiftRight(tScaleShift).And(byteMask)
	W2 := archsimd.BroadcastUint32x8(uint32(le32(scales[8:]))).ShiftRight(tScaleShift).And(byteMask)
	lo := tScaleLo.Equal(ones32)
	// s < 4: sc = scales[s]&63, m = scales[s+4]&63; s = 4+t: sc = scales[8+t]&15 |
	// scales[t]>>6<<4, m = scales[8+t]>>4 | scales[4+t]>>6<<4
	scHi := W2.And(mask15).Or(W0.ShiftRight(six32).ShiftLeft(four32))
	mHi := W2.ShiftRight(four32).Or(W1.ShiftRight(six32).ShiftLeft(four32))
	return W0.And(mask63).Merge(scHi, lo).AsInt32x8(), W1.And(mask63).Merge(mHi, lo).AsInt32x8()
}

// load32 loads 32 bytes at b[o:].
func load32(b []byte, o int) archsimd.Uint32x8 {
	return archsimd.LoadUint8x32((*[32]uint8)(unsafe.Pointer(unsafe.SliceData(b[o : o+32])))).AsUint32x8()
}

// q4KThreads is the Q4_K kernel on the thread-lane path, the checked 8-row kernel where
// a half is not finite; the 8-row kernel alone where the launch is not one it handles.
func q4KThreads(l *launch) rows8Func { return q45KThreads(l, false, rows8Of[q4KLanes]) }

// q5KThreads is the Q5_K kernel on the thread-lane path (see q4KThreads).
//
// Q5_K's vec_dot is Q4_K's with a fifth bit on each value, bit bq8+i of the same byte
// of qh int (iqs/2)%4 (v0i) or (iqs/2)%4+4 (v1i); the qs ints are Q4_K's, 32 bytes
// further on. Values 0..31: two VPMADDUBSW pair sums of a thread's two ints add within
// int16 (2·2·31·128 < 2^15). The argument of the Q4_K path holds with |dot1| ≤
// 8·31·128 < 2^15: |dot1·sc| < 2^21, |sumf_d·d| < 2^54, a thread's block term below
// 2^55, an output below 2^82.
func q5KThreads(l *launch) rows8Func { return q45KThreads(l, true, rows8Of[q5KLanes]) }

var (
	// q5KHiIdx[i]: lane l of any vector reads qh int l%4 (+4 for v1i)
	q5KHiIdx = [2]archsimd.Uint32x8{
		archsimd.LoadUint32x8(&[8]uint32{0, 1, 2, 3, 0, 1, 2, 3}),
		archsimd.LoadUint32x8(&[8]uint32{4, 5, 6, 7, 4, 5, 6, 7}),
	}
	// q5KHiShift[G][i]: bit bq8+i of each byte, bq8 = 4G + 2(l/4)
	q5KHiShift = [2][2]archsimd.Uint32x8{
		{archsimd.LoadUint32x8(&[8]uint32{0, 0, 0, 0, 2, 2, 2, 2}), archsimd.LoadUint32x8(&[8]uint32{1, 1, 1, 1, 3, 3, 3, 3})},
		{archsimd.LoadUint32x8(&[8]uint32{4, 4, 4, 4, 6, 6, 6, 6}), archsimd.LoadUint32x8(&[8]uint32{5, 5, 5, 5, 7, 7, 7, 7})},
	}
	q5HiMask = archsimd.BroadcastUint32x8(0x10101010)
)

// q45KThreads is the thread-lane kernel of Q4_K (q5 false) or Q5_K (q5 true), with
// fallback the 8-row kernel of the type.
func q45KThreads(l *launch, q5 bool, fallback rows8Factory) rows8Func {
	p := l.plan
	nt := p.ThreadsPerRow()
	checked := checkedPath(l, fallback)
	if !useThreads8 || p.QI/p.VDR != 16 || nt%32 != 0 || nt/8 > 16 || p.BlocksPerIter != nt/16 || p.QK != 256 {
		return fallback(l)
	}
	if !q5 && lanes16() {
		if f := q4KThreads16(l, checked); f != nil {
			return f
		}
	}
	blockBytes, qsAt := 144, 16
	if q5 {
		blockBytes, qsAt = 176, 48
	}
	nv, nw, bpi, nblocks := nt/8, nt/32, p.BlocksPerIter, l.nblocks
	cache := colCache[q4KTCol]{build: q4KTCols(l.nblocks)}
	var tabs [tiling.MMVQMaxBatchSize][]q4KTCol
	var tmp [tiling.MMVQMaxBatchSize][16]archsimd.Float32x8
	return func(rows *[8][]byte, ys [][]q8.Block, out [][8]float32) {
		nc := len(ys)
		if !columnTables(&cache, ys, &tabs) {
			checked(rows, ys, out) // a column the kernel does not take (its table builder says which)
			return
		}
		for q, row := range rows {
			row = row[:nblocks*blockBytes]
			zeroSums(&tmp, nc, nv)
			vb := 0 // 2·(kbx % bpi): the threads' vectors of block kbx
			for kbx := range nblocks {
				b := row[kbx*blockBytes : (kbx+1)*blockBytes]
				// the scales first: no scalar float lives across the call (Go spills
				// one with a legacy-SSE MOVUPS, costly between AVX instructions on Intel)
				sc8, m8 := q4KScales8(b[4:16])
				dm := le32(b)
				if dm&0x7c00 == 0x7c00 || dm&0x7c000000 == 0x7c000000 {
					checked(rows, ys, out) // a d or dmin is Inf or NaN
					return
				}
				d := archsimd.BroadcastFloat32x8(sim.H2F(f16.Half(dm)))
				dmin := archsimd.BroadcastFloat32x8(sim.H2F(f16.Half(dm >> 16)))
				for G := range 2 {
					// threads 8G..8G+7: ints 16G+{0..3, 8..11} (v0) and +4 (v1) of qs
					A, B := load32(b, qsAt+64*G), load32(b, qsAt+32+64*G)
					V0, V1 := A.Select128FromPair(0, 2, B), A.Select128FromPair(1, 3, B)
					V00, V01 := V0.And(nib4Mask), V1.And(nib4Mask)
					V10, V11 := V0.ShiftRight(four32).And(nib4Mask), V1.ShiftRight(four32).And(nib4Mask)
					if q5 {
						// | ((vh >> bq8 >> i) << 4) & 0x10101010; bits 4 of each byte never
						// come from the scalar vh's sign fill (shifts below 8)
						H := load32(b, 16)
						H0, H1 := H.AsInt32x8().Permute(q5KHiIdx[0]).AsUint32x8(), H.AsInt32x8().Permute(q5KHiIdx[1]).AsUint32x8()
						s0, s1 := q5KHiShift[G][0], q5KHiShift[G][1]
						V00 = V00.Or(H0.ShiftRight(s0).ShiftLeft(four32).And(q5HiMask))
						V01 = V01.Or(H1.ShiftRight(s0).ShiftLeft(four32).And(q5HiMask))
						V10 = V10.Or(H0.ShiftRight(s1).ShiftLeft(four32).And(q5HiMask))
						V11 = V11.Or(H1.ShiftRight(s1).ShiftLeft(four32).And(q5HiMask))
					}
					v00, v01, v10, v11 := V00.AsUint8x32(), V01.AsUint8x32(), V10.AsUint8x32(), V11.AsUint8x32()
					sc0, sc1 := sc8.Permute(tScaleIdx[G][0]), sc8.Permute(tScaleIdx[G][1])
					m0, m1 := m8.Permute(tScaleIdx[G][0]), m8.Permute(tScaleIdx[G][1])
					for j := range nc {
						e := tabs[j][(kbx*2+G)*2:]
						e0, e1 := &e[0], &e[1]
						u00 := archsimd.LoadInt32x8(&e0.u0).AsInt8x32()
						u01 := archsimd.LoadInt32x8(&e0.u1).AsInt8x32()
						u10 := archsimd.LoadInt32x8(&e1.u0).AsInt8x32()
						u11 := archsimd.LoadInt32x8(&e1.u1).AsInt8x32()
						dot10 := v00.DotProductPairsSaturated(u00).Add(v01.DotProductPairsSaturated(u01)).DotProductPairs(ones16)
						dot11 := v10.DotProductPairsSaturated(u10).Add(v11.DotProductPairsSaturated(u11)).DotProductPairs(ones16)
						d80, d81 := archsimd.LoadFloat32x8(&e0.d8), archsimd.LoadFloat32x8(&e1.d8)
						sumfD := d80.MulAdd(dot10.Mul(sc0).ConvertToFloat32(), zero8)
						sumfM := d80.MulAdd(archsimd.LoadInt32x8(&e0.bs).Mul(m0).ConvertToFloat32(), zero8)
						sumfD = d81.MulAdd(dot11.Mul(sc1).ConvertToFloat32(), sumfD)
						sumfM = d81.MulAdd(archsimd.LoadInt32x8(&e1.bs).Mul(m1).ConvertToFloat32(), sumfM)
						r := sumfD.MulAdd(d, sim.Neg8U(sumfM.Mul(dmin)))
						t := &tmp[j][vb+G]
						*t = t.Add(r)
					}
				}
				if vb += 2; vb == 2*bpi {
					vb = 0
				}
			}
			for j := range nc {
				out[j][q] = math.Float32frombits(threadsReduce(tmp[j][:nv], nw))
			}
		}
		threads8Groups.fast.Add(1)
	}
}

// threadsReduce is the end of mul_mat_vec_q for one output from its threads' sums (thread
// 8v+l in lane l of acc[v]): each lane's cross-warp adds (warp w's lane L is thread
// 32w+L), then the butterfly over the 32 lanes, as sim.ReduceSumTree (x[l] + x[l+h] for
// h = 16, 8, 4, 2, 1). Bare adds: for the values of the thread-lane path (see above).
// It returns the bits (read from memory: a float32 result would be moved with legacy-SSE
// instructions).
func threadsReduce(acc []archsimd.Float32x8, nw int) uint32 {
	s0, s1, s2, s3 := acc[0], acc[1], acc[2], acc[3]
	for w := 1; w < nw; w++ {
		a := acc[4*w : 4*w+4]
		s0, s1, s2, s3 = s0.Add(a[0]), s1.Add(a[1]), s2.Add(a[2]), s3.Add(a[3])
	}
	u := s0.Add(s2).Add(s1.Add(s3))
	u = u.Add(u.Select128FromPair(1, 0, u))
	u = u.Add(u.AsInt32x8().PermuteScalarsGrouped(2, 3, 0, 1).AsFloat32x8())
	u = u.Add(u.AsInt32x8().PermuteScalarsGrouped(1, 0, 3, 2).AsFloat32x8())
	var o [8]uint32
	u.AsUint32x8().Store(&o)
	return o[0]
}

// The thread-lane path of Q8_0: tpb = 4 threads per x block (iqs = 2t), so a vector
// holds the threads of two consecutive blocks of an iteration (kbx and kbx+1, kbx even).
// A thread's dot covers the 8 bytes of its two ints in both x and y, which lie at the
// same offsets of the two blocks' qs: the 32 bytes of x's qs and of the q8_1 block's
// are multiplied as they are (VPMADDUBSW of |x| with y carrying x's sign, then VPMADDWD),
// and VPHADDD adds each thread's two ints, leaving lane order A0 A1 B0 B1 A2 A3 B2 B3
// (block A = kbx, thread t); q80TidOrder puts the lanes in thread order for the
// reduction. Values: h2f(d_x)·h2f(d_y) is a multiple of 2^-48 below 2^32, a thread's
// block term below 2^32·2^17 = 2^49: the argument of the Q4_K path holds. |x| is exact
// for x = -128 (128 unsigned); y carrying x's sign is not for y = -128, which
// quantize_q8_1 gives only for non-finite input: such a column goes to the checked path
// with the non-finite scales.

// q80TCol is h2f(d) of the q8_1 blocks of a pair of x blocks, in lane order.
type q80TCol struct{ d8 [8]float32 }

var (
	q80LaneA    = archsimd.LoadUint32x8(&[8]uint32{1, 1, 0, 0, 1, 1, 0, 0}) // lanes of block A
	q80TidOrder = archsimd.LoadUint32x8(&[8]uint32{0, 1, 4, 5, 2, 3, 6, 7})
)

// q80TCols builds a column's Q8_0 lane table (one q8_1 block per x block, pairs of
// them); it accepts a column whose d are finite and whose values hold no -128.
func q80TCols(nblocks int) func(y []q8.Block, t []q80TCol) ([]q80TCol, bool) {
	return func(y []q8.Block, t []q80TCol) ([]q80TCol, bool) {
		t = grow(t, (nblocks+1)/2)
		ok := true
		for kbx := range nblocks {
			b := &y[kbx]
			ok = ok && finiteHalf(b.D)
			for _, v := range b.Qs {
				ok = ok && v != -128
			}
		}
		for p := range t {
			a, b := sim.H2F(y[2*p].D), float32(0)
			if 2*p+1 < nblocks {
				b = sim.H2F(y[2*p+1].D)
			}
			t[p].d8 = [8]float32{a, a, b, b, a, a, b, b}
		}
		return t, ok
	}
}

// q80Threads is the Q8_0 kernel on the thread-lane path (see q4KThreads).
func q80Threads(l *launch) rows8Func {
	p := l.plan
	nt := p.ThreadsPerRow()
	checked := checkedPath(l, rows8Of[q80Lanes])
	if !useThreads8 || p.QI/p.VDR != 4 || nt%32 != 0 || nt/8 > 16 || p.BlocksPerIter != nt/4 || p.QK != 32 {
		return rows8Of[q80Lanes](l)
	}
	const blockBytes = 34
	nv, nw, bpi, nblocks := nt/8, nt/32, p.BlocksPerIter, l.nblocks
	laneA := q80LaneA.Equal(ones32)
	cache := colCache[q80TCol]{build: q80TCols(nblocks)}
	var tabs [tiling.MMVQMaxBatchSize][]q80TCol
	var tmp [tiling.MMVQMaxBatchSize][16]archsimd.Float32x8
	var ord [16]archsimd.Float32x8
	return func(rows *[8][]byte, ys [][]q8.Block, out [][8]float32) {
		nc := len(ys)
		if !columnTables(&cache, ys, &tabs) {
			checked(rows, ys, out) // a column the kernel does not take (its table builder says which)
			return
		}
		for q, row := range rows {
			row = row[:nblocks*blockBytes]
			zeroSums(&tmp, nc, nv)
			vb := 0 // (kbx % bpi)/2: the vector of blocks kbx, kbx+1
			for kbx := 0; kbx < nblocks; kbx += 2 {
				a := row[kbx*blockBytes : (kbx+1)*blockBytes]
				full := kbx+1 < nblocks
				b := a
				if full {
					b = row[(kbx+1)*blockBytes : (kbx+2)*blockBytes]
				}
				hA, hB := f16.Half(le16(a)), f16.Half(le16(b))
				if !finiteHalf(hA) || !finiteHalf(hB) {
					checked(rows, ys, out) // a d is Inf or NaN
					return
				}
				xa, xb := load32(a, 2).AsInt8x32(), load32(b, 2).AsInt8x32()
				ua, ub := xa.Abs().AsUint8x32(), xb.Abs().AsUint8x32()
				dx := archsimd.BroadcastFloat32x8(sim.H2F(hA)).Merge(archsimd.BroadcastFloat32x8(sim.H2F(hB)), laneA)
				for j := range nc {
					y := ys[j]
					ya := archsimd.LoadInt8x32(&y[kbx].Qs)
					yb := ya
					if full {
						yb = archsimd.LoadInt8x32(&y[kbx+1].Qs)
					}
					pa := ua.DotProductPairsSaturated(ya.CopySign(xa)).DotProductPairs(ones16)
					pb := ub.DotProductPairsSaturated(yb.CopySign(xb)).DotProductPairs(ones16)
					d := dx.Mul(archsimd.LoadFloat32x8(&tabs[j][kbx/2].d8))
					t := &tmp[j][vb]
					r := d.MulAdd(pa.AddPairsGrouped(pb).ConvertToFloat32(), *t)
					if !full {
						r = r.Merge(*t, laneA) // no block B: its threads keep their sums (its table d8 is 0 too)
					}
					*t = r
				}
				if vb++; vb == bpi/2 {
					vb = 0
				}
			}
			for j := range nc {
				for v := range nv {
					ord[v] = tmp[j][v].Permute(q80TidOrder)
				}
				out[j][q] = math.Float32frombits(threadsReduce(ord[:nv], nw))
			}
		}
		threads8Groups.fast.Add(1)
	}
}

func le16(b []byte) uint16 { return uint16(b[0]) | uint16(b[1])<<8 }

// The thread-lane path of Q6_K: tpb = 32 threads per x block (iqs = t), so a block's
// threads fill four vectors, G = t/8 (thread 32(kbx%bpi)+8G+l in lane l of vector
// 4(kbx%bpi)+G). For vector G every lane reads the same q8_1 blocks (bq8 = 4(G/2)+G%2,
// and bq8+2), lane l their int l: the 32 bytes of qs as they are; its ql int is int
// 8G+l, its qh int 8(G/2)+l (32 consecutive bytes each), its scales scales[b+l/4], b =
// 8(G/2)+2(G%2)+4i. dp4a(vi-32, u)·sc is VPMADDWD of the pair sums of (vi-32)·u with
// sc in both words of each lane: the pair sums are VPMADDUBSW's of vi (0..63, the
// unsigned operand: within ±2·63·128, no saturation) less 32(u_2k + u_2k+1), tabled
// per column (q6KTCol); the true differences lie within ±2·32·128, so the wrapping
// VPSUBW is exact, and VPMADDWD gives sc·(p0 + p1) exactly. x needs no sign on y: a
// q8_1 value of -128 is no special case.
//
// Values: d8 and d are halves (multiples of 2^-24, below 2^16); dp4a(vi-32, u)·sc is an
// integer, |vi-32| ≤ 32, |u| ≤ 128, |sc| ≤ 128 (int8): below 4·32·128·128 = 2^21. So
// sumf (two FFMAs from +0 of d8·I2F(n)) is a multiple of 2^-24 below 2^38, sumf·h2f(d)
// a multiple of 2^-48 below 2^54; a thread's sum and the reduction add at most
// 32·nblocks such terms (nblocks < 2^23): below 2^82. Every value of the chain is a
// multiple of 2^-48 as in Q4_K's argument above (no flush), nothing overflows while the
// halves read (each block's d, the column's d8) are finite; elsewhere the group goes to
// the checked 8-row path (q6KLanes).

// q6KTCol is what the threads of a vector read of one q8_1 block beside its qs: 32 times
// the sum of each pair of its values (as VPMADDUBSW of 32s with qs gives it), h2f(d8) in
// every lane.
type q6KTCol struct {
	w16 [16]int16
	d8  [8]float32
}

// q6KTCols builds a column's Q6_K lane table (one entry per q8_1 block); it accepts a
// column whose d8 are all finite.
func q6KTCols(nblocks int) func(y []q8.Block, t []q6KTCol) ([]q6KTCol, bool) {
	return func(y []q8.Block, t []q6KTCol) ([]q6KTCol, bool) {
		t = grow(t, 8*nblocks)
		ok := true
		for b := range t {
			yb := &y[b]
			ok = ok && finiteHalf(yb.D)
			for k := range 16 {
				t[b].w16[k] = 32 * (int16(yb.Qs[2*k]) + int16(yb.Qs[2*k+1]))
			}
			for l := range 8 {
				t[b].d8[l] = sim.H2F(yb.D)
			}
		}
		return t, ok
	}
}

var (
	two32 = archsimd.BroadcastUint32x8(2)
	// q6KShiftH[G%2][i]: vh = qh int >> 2(G%2), then >> 4i
	q6KShiftH = [2][2]archsimd.Uint32x8{{archsimd.BroadcastUint32x8(0), four32}, {two32, six32}}
	// q6KScaleIdx[G%2][i]: lane l of vector G reads scale b + l/4 of the eight from
	// 8(G/2), b = 2(G%2) + 4i, in both of its words: the bytes of int16 b+l/4 of a
	// 128-bit half
	q6KScaleIdx = [2][2]archsimd.Int8x32{{q6KScaleBytes(0), q6KScaleBytes(4)}, {q6KScaleBytes(2), q6KScaleBytes(6)}}
)

// q6KScaleBytes is the VPSHUFB index of q6KScaleIdx for b.
func q6KScaleBytes(b int) archsimd.Int8x32 {
	var x [32]int8
	for k := range x {
		x[k] = int8(2*(b+k/16) + k%2)
	}
	return archsimd.LoadInt8x32(&x)
}

// q6KX is what the threads of vector G read of an x block: v0i, v1i (vi of i = 0, 1)
// and their scales in both words of each lane.
type q6KX struct {
	v0, v1   archsimd.Uint8x32
	sc0, sc1 archsimd.Int16x16
}

// q6KThreads is the Q6_K kernel on the thread-lane path (see q4KThreads).
func q6KThreads(l *launch) rows8Func {
	p := l.plan
	nt := p.ThreadsPerRow()
	checked := checkedPath(l, rows8Of[q6KLanes])
	if !useThreads8 || p.QI/p.VDR != 32 || nt%32 != 0 || nt/8 > 16 || p.BlocksPerIter != nt/32 || p.QK != 256 {
		return rows8Of[q6KLanes](l)
	}
	const blockBytes = 210
	nv, nw, bpi, nblocks := nt/8, nt/32, p.BlocksPerIter, l.nblocks
	cache := colCache[q6KTCol]{build: q6KTCols(nblocks)}
	var tabs [tiling.MMVQMaxBatchSize][]q6KTCol
	var tmp [tiling.MMVQMaxBatchSize][16]archsimd.Float32x8
	var xv [4]q6KX // one x block's vectors, for all columns
	return func(rows *[8][]byte, ys [][]q8.Block, out [][8]float32) {
		nc := len(ys)
		if !columnTables(&cache, ys, &tabs) {
			checked(rows, ys, out) // a column the kernel does not take (its table builder says which)
			return
		}
		for q, row := range rows {
			row = row[:nblocks*blockBytes]
			zeroSums(&tmp, nc, nv)
			vb := 0 // 4·(kbx % bpi): the threads' vectors of block kbx
			for kbx := range nblocks {
				b := row[kbx*blockBytes : (kbx+1)*blockBytes]
				if !finiteHalf(f16.Half(le16(b[208:]))) {
					checked(rows, ys, out) // d is Inf or NaN
					return
				}
				// the 16 int8 scales as int16, scales 8(G/2).. in both 128-bit halves
				S := archsimd.LoadInt8x16((*[16]int8)(unsafe.Pointer(unsafe.SliceData(b[192:208])))).ExtendToInt16()
				scales := [2]archsimd.Int8x32{S.Select128FromPair(0, 0, S).AsInt8x32(), S.Select128FromPair(1, 1, S).AsInt8x32()}
				d := archsimd.BroadcastFloat32x8(sim.H2F(f16.Half(le16(b[208:]))))
				for G := range 4 {
					// vi = (vl >> 4i)&0x0F0F0F0F | ((vh >> 4i) << 4)&0x30303030 (bits 4, 5 of
					// each byte never come from the scalar vh's sign fill); no arrays of
					// vectors here: Go zeroes them with legacy-SSE MOVUPS
					VL, VH := load32(b, 32*G), load32(b, 128+32*(G/2))
					v0 := VL.And(nib4Mask).Or(VH.ShiftRight(q6KShiftH[G%2][0]).ShiftLeft(four32).And(q6HiMask)).AsUint8x32()
					v1 := VL.ShiftRight(four32).And(nib4Mask).Or(VH.ShiftRight(q6KShiftH[G%2][1]).ShiftLeft(four32).And(q6HiMask)).AsUint8x32()
					sc0 := scales[G/2].PermuteOrZeroGrouped(q6KScaleIdx[G%2][0]).AsInt16x16()
					sc1 := scales[G/2].PermuteOrZeroGrouped(q6KScaleIdx[G%2][1]).AsInt16x16()
					xv[G] = q6KX{v0, v1, sc0, sc1}
				}
				// columns outside, the four vectors inside: a column's blocks and table
				// entries are bounds-checked once per x block
				for j := range nc {
					ya, te := (*[8]q8.Block)(ys[j][kbx*8:]), (*[8]q6KTCol)(tabs[j][kbx*8:])
					tj := (*[4]archsimd.Float32x8)(tmp[j][vb:])
					for G := range 4 {
						x := &xv[G]
						bq := 4*(G/2) + G%2
						y0, y1, e0, e1 := &ya[bq], &ya[bq+2], &te[bq], &te[bq+2]
						dp0 := x.v0.DotProductPairsSaturated(archsimd.LoadInt8x32(&y0.Qs)).Sub(archsimd.LoadInt16x16(&e0.w16)).DotProductPairs(x.sc0)
						dp1 := x.v1.DotProductPairsSaturated(archsimd.LoadInt8x32(&y1.Qs)).Sub(archsimd.LoadInt16x16(&e1.w16)).DotProductPairs(x.sc1)
						sumf := archsimd.LoadFloat32x8(&e0.d8).MulAdd(dp0.ConvertToFloat32(), zero8)
						sumf = archsimd.LoadFloat32x8(&e1.d8).MulAdd(dp1.ConvertToFloat32(), sumf)
						tj[G] = sumf.MulAdd(d, tj[G])
					}
				}
				if vb += 4; vb == 4*bpi {
					vb = 0
				}
			}
			for j := range nc {
				out[j][q] = math.Float32frombits(threadsReduce(tmp[j][:nv], nw))
			}
		}
		threads8Groups.fast.Add(1)
	}
}

// The thread-lane path of IQ4_XS: tpb = 8 threads per x block (iqs = 4t), so one vector
// holds the threads of a block (block kbx's in vector kbx%bpi). Thread t's sumi is the
// dot of the table values of the 16 qs bytes 16t..16t+15 (low nibbles, then high) with
// the 32 values of q8_1 block t: the 32 bytes of qs at 32p hold the bytes of threads 2p
// and 2p+1 in their two 128-bit halves, so their low-nibble values are multiplied in
// place with the first 16 values of blocks 2p and 2p+1 side by side, the high-nibble
// ones with the last 16 (both tabled per column, iq4XSTCol), by VPMADDUBSW of |x| with
// y carrying x's sign and VPMADDWD (|x| ≤ 127, |y| ≤ 127: pair sums within int16).
// Two rounds of VPHADDD add each thread's four partial sums, leaving threads 0 2 4 6 1
// 3 5 7 in lanes 0..7 (iq4XSPos); d8 and ls are tabled in that order and the sums put in
// thread order for the reduction (iq4XSTidOrder). A q8_1 value of -128 (VPSIGNB would
// not negate it) sends its column to the checked path.
//
// Values: d = h2f(d_x)·h2f(d_y) is a product of two halves, a multiple of 2^-48 below
// 2^32; sumi·(ls-32) is an integer, |sumi| ≤ 32·127·128 < 2^19, |ls-32| ≤ 32: below
// 2^24. A thread's block term d·I2F(·) is a multiple of 2^-48 below 2^56, and an
// output adds 8·nblocks of them (nblocks < 2^23): below 2^82. So Q4_K's argument holds
// (no value below 2^-48 but zero, none overflowing) where the x block's d and the
// column's d8 are finite; elsewhere the group goes to the checked 8-row path
// (iq4XSLanes).

// iq4XSTCol is what the threads of one x block read of a column: lo[p] holds the first
// 16 values of q8_1 blocks 2p and 2p+1 (one per 128-bit half), hi[p] their last 16;
// d8[q] is h2f(d) of block iq4XSPos[q].
type iq4XSTCol struct {
	lo, hi [4][32]int8
	d8     [8]float32
}

// iq4XSPos is the thread whose sum lane q holds after the two VPHADDD rounds.
var iq4XSPos = [8]int{0, 2, 4, 6, 1, 3, 5, 7}

// iq4XSTCols builds a column's IQ4_XS lane table (one entry per x block, 8 q8_1 blocks
// each); it accepts a column whose d are finite and whose values hold no -128.
func iq4XSTCols(nblocks int) func(y []q8.Block, t []iq4XSTCol) ([]iq4XSTCol, bool) {
	return func(y []q8.Block, t []iq4XSTCol) ([]iq4XSTCol, bool) {
		t = grow(t, nblocks)
		ok := true
		for kbx := range t {
			e := &t[kbx]
			yb := y[kbx*8 : kbx*8+8]
			for i := range yb {
				ok = ok && finiteHalf(yb[i].D)
				for _, v := range yb[i].Qs {
					ok = ok && v != -128
				}
			}
			for p := range 4 {
				for h := range 2 {
					copy(e.lo[p][16*h:16*h+16], yb[2*p+h].Qs[:16])
					copy(e.hi[p][16*h:16*h+16], yb[2*p+h].Qs[16:])
				}
			}
			for q, th := range iq4XSPos {
				e.d8[q] = sim.H2F(yb[th].D)
			}
		}
		return t, ok
	}
}

var (
	// ls of thread t: nibble t of scales_l (bits 4t of its word) | bits 2t of scales_h
	// (bits 16+2t of the block's first word) << 4, lanes in iq4XSPos order
	iq4XSShiftL   = archsimd.LoadUint32x8(&[8]uint32{0, 8, 16, 24, 4, 12, 20, 28})
	iq4XSShiftH   = archsimd.LoadUint32x8(&[8]uint32{16, 20, 24, 28, 18, 22, 26, 30})
	three32       = archsimd.BroadcastUint32x8(3)
	i32x8of32     = archsimd.BroadcastInt32x8(32)
	iq4XSTidOrder = archsimd.LoadUint32x8(&[8]uint32{0, 4, 1, 5, 2, 6, 3, 7})
)

// iq4XSVals returns the table values of the low and high nibbles of the 32 qs bytes
// from 32p of IQ4_XS block b.
func iq4XSVals(b []byte, p int) (lo, hi archsimd.Int8x32) {
	X := load32(b, 8+32*p)
	return iq4Tab.PermuteOrZeroGrouped(X.And(nib4Mask).AsInt8x32()), iq4Tab.PermuteOrZeroGrouped(X.ShiftRight(four32).And(nib4Mask).AsInt8x32())
}

// iq4XSDot is the dot of values lo, hi (iq4XSVals p) with the column's: lane 4h+k holds
// a part of thread 2p+h's sumi.
func iq4XSDot(lo, hi archsimd.Int8x32, e *iq4XSTCol, p int) archsimd.Int32x8 {
	sl := lo.Abs().AsUint8x32().DotProductPairsSaturated(archsimd.LoadInt8x32(&e.lo[p]).CopySign(lo)).DotProductPairs(ones16)
	sh := hi.Abs().AsUint8x32().DotProductPairsSaturated(archsimd.LoadInt8x32(&e.hi[p]).CopySign(hi)).DotProductPairs(ones16)
	return sl.Add(sh)
}

// iq4XSThreads is the IQ4_XS kernel on the thread-lane path (see q4KThreads).
func iq4XSThreads(l *launch) rows8Func {
	p := l.plan
	nt := p.ThreadsPerRow()
	checked := checkedPath(l, rows8Of[iq4XSLanes])
	if !useThreads8 || p.QI/p.VDR != 8 || nt%32 != 0 || nt/8 > 16 || p.BlocksPerIter != nt/8 || p.QK != 256 {
		return rows8Of[iq4XSLanes](l)
	}
	const blockBytes = 136
	nv, nw, bpi, nblocks := nt/8, nt/32, p.BlocksPerIter, l.nblocks
	cache := colCache[iq4XSTCol]{build: iq4XSTCols(nblocks)}
	var tabs [tiling.MMVQMaxBatchSize][]iq4XSTCol
	var tmp [tiling.MMVQMaxBatchSize][16]archsimd.Float32x8
	var ord [16]archsimd.Float32x8
	return func(rows *[8][]byte, ys [][]q8.Block, out [][8]float32) {
		nc := len(ys)
		if !columnTables(&cache, ys, &tabs) {
			checked(rows, ys, out) // a column the kernel does not take (its table builder says which)
			return
		}
		for q, row := range rows {
			row = row[:nblocks*blockBytes]
			zeroSums(&tmp, nc, nv)
			vb := 0 // kbx % bpi: the vector of block kbx
			for kbx := range nblocks {
				b := row[kbx*blockBytes : (kbx+1)*blockBytes]
				w := uint32(le32(b)) // d, scales_h
				if !finiteHalf(f16.Half(w)) {
					checked(rows, ys, out) // d is Inf or NaN
					return
				}
				ls := archsimd.BroadcastUint32x8(uint32(le32(b[4:]))).ShiftRight(iq4XSShiftL).And(mask15).
					Or(archsimd.BroadcastUint32x8(w).ShiftRight(iq4XSShiftH).And(three32).ShiftLeft(four32)).
					AsInt32x8().Sub(i32x8of32)
				dx := archsimd.BroadcastFloat32x8(sim.H2F(f16.Half(w)))
				// no arrays of vectors here: Go zeroes them with legacy-SSE MOVUPS
				lo0, hi0 := iq4XSVals(b, 0)
				lo1, hi1 := iq4XSVals(b, 1)
				lo2, hi2 := iq4XSVals(b, 2)
				lo3, hi3 := iq4XSVals(b, 3)
				for j := range nc {
					e := &tabs[j][kbx]
					s01 := iq4XSDot(lo0, hi0, e, 0).AddPairsGrouped(iq4XSDot(lo1, hi1, e, 1))
					s23 := iq4XSDot(lo2, hi2, e, 2).AddPairsGrouped(iq4XSDot(lo3, hi3, e, 3))
					sumi := s01.AddPairsGrouped(s23).Mul(ls)
					d := dx.Mul(archsimd.LoadFloat32x8(&e.d8))
					t := &tmp[j][vb]
					*t = d.MulAdd(sumi.ConvertToFloat32(), *t)
				}
				if vb++; vb == bpi {
					vb = 0
				}
			}
			for j := range nc {
				for v := range nv {
					ord[v] = tmp[j][v].Permute(iq4XSTidOrder)
				}
				out[j][q] = math.Float32frombits(threadsReduce(ord[:nv], nw))
			}
		}
		threads8Groups.fast.Add(1)
	}
}
