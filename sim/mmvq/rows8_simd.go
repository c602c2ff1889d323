//go:build goexperiment.simd && amd64

package mmvq

import (
	"reflect"
	"simd/archsimd"

	"github.com/ggsim/ggsim/f16"
	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
	"github.com/ggsim/ggsim/sim/q8"
	"github.com/ggsim/ggsim/tiling"
)

// The 8-row path (GOEXPERIMENT=simd, amd64 with AVX2 and FMA), since the thread-lane
// kernels (threads8_simd.go) the checked path they hand non-finite row groups to: eight rows of the same
// launch run side by side, row q in lane q of archsimd vectors. Every lane performs the
// float steps of its row's scalar path in the same order (each thread's partial sum over
// its x blocks ascending, the cross-warp adds, the butterfly). A vec_dot chains the
// unflushed 8-lane steps of package sim (FMA8U, ...), checks every result with
// sim.ExactAcc8 (the And of sim.Exact8 of each) and recomputes a lane that left the
// exact range with the scalar vec_dot (src.done); the q8_1 values each column's dots
// read (ints, Σu, h2f(d8)) are tabled once per call (colTab); the reductions use the checked 8-lane functions (Add8, ReduceSumTree8).
// Only the integer work is reorganised: what a block's threads share is unpacked once
// per row group (prep), each thread's part once for all the columns that read it, and
// the dp4a run on eight rows at once (exact: VPMADDUBSW + VPMADDWD for unsigned values,
// sign extension + VPMADDWD for signed ones). TestRows8MatchesScalar and TestRows8Dots
// compare both paths bit for bit.

// useRows8 lets tests run the scalar path in this build.
var useRows8 = true

// rows8For returns the 8-row kernel of type t in launch kind k with ncols columns, or
// nil where there is none (then output is used).
func rows8For(t quant.Type, k tiling.Kernel, ncols int) rows8Factory {
	if !sim.Vec8 || !useRows8 {
		return nil
	}
	e, ok := rows8Kernels[t]
	if !ok {
		return nil
	}
	if mk := mustKernel(t); mk.DotFor != nil || reflect.ValueOf(mk.Dot).Pointer() != reflect.ValueOf(e.dot).Pointer() {
		return nil
	}
	return e.f
}

// rows8Kernels holds the 8-row kernels and the scalar vec_dot each one computes; an entry
// applies only while that vec_dot is the type's registered one in every instantiation
// (DotFor nil; a test that swaps in another model, as UseUnfusedQ8_0, gets the scalar
// path).
var rows8Kernels = map[quant.Type]struct {
	f   rows8Factory
	dot VecDot
}{
	quant.Q4_K:   {q4KThreads, vecDotQ4_K},
	quant.Q6_K:   {q6KThreads, vecDotQ6_K},
	quant.Q8_0:   {q80Threads, vecDotQ8_0},
	quant.IQ4_XS: {iq4XSThreads, vecDotIQ4_XS},
	quant.Q5_K:   {q5KThreads, vecDotQ5_K},
	quant.Q4_0:   {q40Threads, vecDotQ4_0},
	quant.Q5_0:   {q50Threads, vecDotQ5_0},
	quant.Q4_1:   {q41Threads, vecDotQ4_1},
	quant.Q5_1:   {q51Threads, vecDotQ5_1},
}

// Rows8 reports whether this build and CPU run some vec_dots eight rows at a time.
func Rows8() bool { return sim.Vec8 }

var (
	byteMask = archsimd.BroadcastUint32x8(0xff)
	mask63   = archsimd.BroadcastUint32x8(63)
	mask15   = archsimd.BroadcastUint32x8(15)
	ones16   = archsimd.BroadcastInt16x16(1)
	nib4Mask = archsimd.BroadcastUint32x8(0x0F0F0F0F)
	zero8    = archsimd.BroadcastFloat32x8(0)
)

// dotNib8 is sim.Dp4a(v, u, 0) on each lane for v holding four bytes in [0, 127] (the
// unsigned operand of VPMADDUBSW; pair sums stay within ±2·127·128, inside int16).
func dotNib8(v archsimd.Uint32x8, u int32) archsimd.Int32x8 {
	return v.AsUint8x32().DotProductPairsSaturated(archsimd.BroadcastInt32x8(u).AsInt8x32()).DotProductPairs(ones16)
}

// src is where a lanes value was loaded from: the dots recompute a lane whose unflushed
// float chain left the range where the CPU's IEEE arithmetic is the GPU's (sim.Exact8,
// folded by sim.ExactAcc8) with the scalar vec_dot of that lane's row.
type src struct {
	rows *[8][]byte
	kbx  int
	f    VecDot // the type's scalar vec_dot with its accumulation
}

// done returns res, or res with each lane not set in ok replaced by s.f on that lane's
// row, from that lane of tmp.
func (s *src) done(tmp, res archsimd.Float32x8, ok archsimd.Mask32x8, iqs int, y []q8.Block) archsimd.Float32x8 {
	if ok.ToBits() == 0xff {
		return res
	}
	return s.fix(tmp, res, ok, iqs, y)
}

func (s *src) fix(tmp, res archsimd.Float32x8, ok archsimd.Mask32x8, iqs int, y []q8.Block) archsimd.Float32x8 {
	f := s.f
	var t, o [8]float32
	tmp.Store(&t)
	res.Store(&o)
	bits := ok.ToBits()
	for q := range 8 {
		if bits&(1<<q) == 0 {
			o[q] = f(t[q], s.rows[q], s.kbx, iqs, y)
		}
	}
	return archsimd.LoadFloat32x8(&o)
}

// q4KLanes is one Q4_K x block's part that one thread reads (vec_dot_q4_K_q8_1 at iqs),
// unpacked for eight rows. The scales and halves of each block, which all 16 threads of a
// block read, are unpacked once per row group (prep).
type q4KLanes struct {
	src
	colTab
	blk []kBlock                // by kbx, filled by prep
	v   [2][2]archsimd.Uint32x8 // [i][0]: v0i, [i][1]: v1i
	kb  *kBlock                 // the block's shared part (prep)
	j   int                     // the thread's j = bq8/2: kb.sc[j], kb.m[j]
}

// kBlock is what the threads of a Q4_K or Q5_K block share, for eight rows: h2f of dm
// and q45KScales for each j = bq8/2.
type kBlock struct {
	d, dmin archsimd.Float32x8
	sc, m   [4][2]archsimd.Int32x8
	qs      [32]archsimd.Uint32x8 // Q4_K: int k of qs of the eight rows (transposed)
}

// transpose8 transposes the 8×8 matrix of 32-bit values r (r[q] element e becomes
// element q of r[e]).
func transpose8(r *[8]archsimd.Uint32x8) {
	var t [8]archsimd.Uint32x8
	for i := 0; i < 8; i += 2 {
		t[i], t[i+1] = r[i].InterleaveLoGrouped(r[i+1]), r[i].InterleaveHiGrouped(r[i+1])
	}
	// t[0] = r0e0 r1e0 r0e1 r1e1 | r0e4 r1e4 r0e5 r1e5, t[1] the same for e2,e3 | e6,e7
	var u [8]archsimd.Uint32x8
	for h := 0; h < 8; h += 4 {
		for k := range 2 {
			a, b := t[h+k].AsUint64x4(), t[h+k+2].AsUint64x4()
			u[h+2*k], u[h+2*k+1] = a.InterleaveLoGrouped(b).AsUint32x8(), a.InterleaveHiGrouped(b).AsUint32x8()
		}
	}
	// u[0..3]: rows 0-3 of e0|e4, e1|e5, e2|e6, e3|e7; u[4..7] the same for rows 4-7
	for e := range 4 {
		r[e] = u[e].Select128FromPair(0, 2, u[e+4])
		r[e+4] = u[e].Select128FromPair(1, 3, u[e+4])
	}
}

// prepK fills blk[:nblocks] from the block header (dm, scales) that head returns, and
// (qs not nil) the transposed qs ints.
func prepK(blk []kBlock, rows *[8][]byte, nblocks int, head func(row []byte, kbx int) (dm [2]f16.Half, scales []byte), qs func(row []byte, kbx int) []byte) []kBlock {
	if cap(blk) < nblocks {
		blk = make([]kBlock, nblocks)
	}
	blk = blk[:nblocks]
	for kbx := range blk {
		var sw [3][8]uint32
		var d, dmin [8]float32
		for q := range rows {
			dm, scales := head(rows[q], kbx)
			sw[0][q], sw[1][q], sw[2][q] = uint32(le32(scales)), uint32(le32(scales[4:])), uint32(le32(scales[8:]))
			d[q], dmin[q] = sim.H2F(dm[0]), sim.H2F(dm[1])
		}
		// q45KScales(scales, j)[i] of sub-block s = 2j+i (get_scale_min_k4) on each lane:
		// s < 4: sc = scales[s]&63, m = scales[s+4]&63; s = 4+t: sc = scales[8+t]&15 |
		// scales[t]>>6<<4, m = scales[8+t]>>4 | scales[4+t]>>6<<4.
		S := [3]archsimd.Uint32x8{archsimd.LoadUint32x8(&sw[0]), archsimd.LoadUint32x8(&sw[1]), archsimd.LoadUint32x8(&sw[2])}
		byteAt := func(w, k int) archsimd.Uint32x8 { return S[w].ShiftAllRight(uint64(8 * k)).And(byteMask) }
		b := &blk[kbx]
		for s := range 8 {
			var sc, m archsimd.Uint32x8
			if s < 4 {
				sc, m = byteAt(0, s).And(mask63), byteAt(1, s).And(mask63)
			} else {
				t := s - 4
				hi := byteAt(2, t)
				sc = hi.And(mask15).Or(byteAt(0, t).ShiftAllRight(6).ShiftAllLeft(4))
				m = hi.ShiftAllRight(4).Or(byteAt(1, t).ShiftAllRight(6).ShiftAllLeft(4))
			}
			b.sc[s/2][s%2], b.m[s/2][s%2] = sc.AsInt32x8(), m.AsInt32x8()
		}
		b.d, b.dmin = archsimd.LoadFloat32x8(&d), archsimd.LoadFloat32x8(&dmin)
		if qs == nil {
			continue
		}
		gatherT(b.qs[:], rows, kbx, qs)
	}
	return blk
}

// gatherT sets dst[k] to int k of bytes(row, kbx) of the eight rows, for the len(dst)
// ints (a multiple of 8) from the start of the bytes.
func gatherT(dst []archsimd.Uint32x8, rows *[8][]byte, kbx int, bytes func(row []byte, kbx int) []byte) {
	gatherTPerm(dst, rows, &ident8, kbx, bytes)
}

var ident8 = [8]int{0, 1, 2, 3, 4, 5, 6, 7}

// gatherTPerm is gatherT with row perm[p] in lane p.
func gatherTPerm(dst []archsimd.Uint32x8, rows *[8][]byte, perm *[8]int, kbx int, bytes func(row []byte, kbx int) []byte) {
	var src [8][]byte
	for p := range src {
		src[p] = bytes(rows[perm[p]], kbx)[:4*len(dst)]
	}
	for c := 0; c < len(dst); c += 8 {
		var r [8]archsimd.Uint32x8
		for p := range r {
			r[p] = archsimd.LoadUint8x32Slice(src[p][4*c:]).AsUint32x8()
		}
		transpose8(&r)
		copy(dst[c:c+8], r[:])
	}
}

func q4KQs(row []byte, kbx int) []byte { return quant.Q4_KBlock(row, kbx).Qs() }

func q4KHead(row []byte, kbx int) ([2]f16.Half, []byte) {
	b := quant.Q4_KBlock(row, kbx)
	d, dmin := b.DM()
	return [2]f16.Half{d, dmin}, b.Scales()
}

func (w *q4KLanes) prep(rows *[8][]byte, nblocks int) {
	w.blk = prepK(w.blk, rows, nblocks, q4KHead, q4KQs)
}

// setBlock points at block kbx's shared part, for the thread's j = bq8/2.
func (w *q4KLanes) setBlock(kbx, j int) {
	w.kb, w.j = &w.blk[kbx], j
}

func (w *q4KLanes) load(rows *[8][]byte, kbx, iqs int) {
	w.src = src{rows, kbx, vecDotQ4_K}
	bq8 := 2 * ((iqs / 2) / 4)
	k := 4*bq8 + (iqs/2)%4 // the int of qs at byte 16*bq8 + 4*((iqs/2)%4)
	V0, V1 := w.blk[kbx].qs[k], w.blk[kbx].qs[k+4]
	for i := range 2 {
		w.v[i][0] = V0.ShiftAllRight(uint64(4 * i)).And(nib4Mask)
		w.v[i][1] = V1.ShiftAllRight(uint64(4 * i)).And(nib4Mask)
	}
	w.setBlock(kbx, bq8/2)
}

// yCol is what the 8-row vec_dots read of one q8_1 block of a column, for every row:
// h2f(d8), the ints u and the signed byte sum of each (bsum, Σu of dp4a(0x01010101, u,
// 0)). It is computed once per launch, worker and column (colTab.cols) instead of once
// per row group.
type yCol struct {
	d8 float32
	u  [8]int32
	bs [8]int32
}

// colTab holds the kCol tables of the columns of the last rows8 call and their source
// blocks (a later call with the same column slices reuses them).
type colTab struct {
	src  [][]q8.Block
	tabs [][]yCol
}

// cols makes the table of each column of ys, unless it has it from the same slice.
func (c *colTab) cols(ys [][]q8.Block) {
	if len(c.src) < len(ys) {
		c.src = append(c.src, make([][]q8.Block, len(ys)-len(c.src))...)
		c.tabs = append(c.tabs, make([][]yCol, len(ys)-len(c.tabs))...)
	}
	for j, y := range ys {
		if len(c.src[j]) == len(y) && (len(y) == 0 || &c.src[j][0] == &y[0]) {
			continue
		}
		c.src[j] = y
		t := c.tabs[j]
		if cap(t) < len(y) {
			t = make([]yCol, len(y))
		}
		t = t[:len(y)]
		for b := range y {
			yb := &y[b]
			e := &t[b]
			e.d8 = sim.H2F(yb.D)
			for i := range e.u {
				e.u[i] = yb.Int(i)
			}
			for i, u := range e.u {
				e.bs[i] = bsum(u)
			}
		}
		c.tabs[j] = t
	}
}

// dot is vecDotQ4_K on each lane: its float steps unflushed (sim.FMA8U, ...), every
// result checked (sim.ExactAcc8, the And of sim.Exact8 of each), the lanes that fail
// recomputed by the scalar vec_dot.
// Column j's q8_1 values come from its yCol table (cols; Σu of ints i0 and i0+4, the
// scalar path's dp4a(0x01010101, u1, dp4a(0x01010101, u0, 0)), is the exact int32 sum
// of their bsums); y is only read by the recomputation.
func (w *q4KLanes) dot(tmp archsimd.Float32x8, iqs, j int, y []q8.Block) archsimd.Float32x8 {
	bq8 := 2 * ((iqs / 2) / 4)
	i0 := (iqs / 2) % 4
	ct := w.tabs[j][w.kbx*8+bq8:]
	e0, e1 := &ct[0], &ct[1]
	kb := w.kb
	sc, m := &kb.sc[w.j], &kb.m[w.j]
	// i = 0 and i = 1 of the scalar loop, unrolled
	d80, d81 := archsimd.BroadcastFloat32x8(e0.d8), archsimd.BroadcastFloat32x8(e1.d8)
	dot10 := dotNib8(w.v[0][0], e0.u[i0]).Add(dotNib8(w.v[0][1], e0.u[i0+4]))
	dot20 := archsimd.BroadcastInt32x8(e0.bs[i0] + e0.bs[i0+4])
	sumfD := sim.FMA8U(d80, sim.I2F8(dot10.Mul(sc[0])), zero8)
	sumfM := sim.FMA8U(d80, sim.I2F8(dot20.Mul(m[0])), zero8)
	ok := sim.ExactStart8(sumfD).Add(sumfM)
	dot11 := dotNib8(w.v[1][0], e1.u[i0]).Add(dotNib8(w.v[1][1], e1.u[i0+4]))
	dot21 := archsimd.BroadcastInt32x8(e1.bs[i0] + e1.bs[i0+4])
	sumfD = sim.FMA8U(d81, sim.I2F8(dot11.Mul(sc[1])), sumfD)
	sumfM = sim.FMA8U(d81, sim.I2F8(dot21.Mul(m[1])), sumfM)
	mm := sim.Mul8U(sumfM, kb.dmin)
	r := sim.FMA8U(sumfD, kb.d, sim.Neg8U(mm))
	res := sim.Add8U(tmp, r)
	return w.done(tmp, res, ok.Add(sumfD).Add(sumfM).Add(mm).Add(r).Add(res).OK(), iqs, y)
}

// lanes8 is one type's x block part that one thread reads, unpacked for eight rows
// (load), and its vec_dot with accumulation on each lane (dot: the scalar vec_dot's float
// steps in its order, with the 8-lane functions of package sim).
type lanes8 interface {
	load(rows *[8][]byte, kbx, iqs int)
	dot(tmp archsimd.Float32x8, iqs, j int, y []q8.Block) archsimd.Float32x8
}

// prepper is a lanes type that unpacks what the threads of a block share once per row
// group (before its loads).
type prepper interface {
	prep(rows *[8][]byte, nblocks int)
}

// colPrepper is a lanes type that computes what it reads of each column once per call
// (before its dots; dot's j is the column's index in ys).
type colPrepper interface {
	cols(ys [][]q8.Block)
}

// rows8Of is the 8-row kernel of the lanes type W: output's thread loop, cross-warp sums
// and butterfly on eight rows, each thread's x block part loaded once for all columns.
func rows8Of[W any, P interface {
	*W
	lanes8
}](l *launch) rows8Func {
	p := l.plan
	nt := p.ThreadsPerRow()
	tpb := p.QI / p.VDR
	ybl := p.QK / 32
	acc := make([]archsimd.Float32x8, tiling.MMVQMaxBatchSize*nt)
	lanes := make([]archsimd.Float32x8, 32)
	w := P(new(W))
	pp, _ := any(w).(prepper)
	cp, _ := any(w).(colPrepper)
	return func(rows *[8][]byte, ys [][]q8.Block, out [][8]float32) {
		if pp != nil {
			pp.prep(rows, l.nblocks)
		}
		if cp != nil {
			cp.cols(ys)
		}
		nc := len(ys)
		for tid := 0; tid < nt; tid++ {
			iqs := p.VDR * (tid % tpb)
			for j := range nc {
				acc[j*nt+tid] = zero8
			}
			for kbx := tid / tpb; kbx < l.nblocks; kbx += p.BlocksPerIter {
				w.load(rows, kbx, iqs)
				for j := range nc {
					acc[j*nt+tid] = w.dot(acc[j*nt+tid], iqs, j, ys[j][kbx*ybl:])
				}
			}
		}
		nw := nt / 32
		for j := range nc {
			a := acc[j*nt : (j+1)*nt]
			for L := range 32 {
				v := a[L]
				for wp := 1; wp < nw; wp++ {
					v = sim.Add8(v, a[wp*32+L])
				}
				lanes[L] = v
			}
			sim.ReduceSumTree8(lanes).Store(&out[j])
		}
	}
}
