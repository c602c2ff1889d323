//go:build goexperiment.simd && amd64

package mmvq

import (
	"simd/archsimd"

	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
	"github.com/ggsim/ggsim/sim/q8"
)

// The 8-row kernels of Q6_K, Q8_0 and IQ4_XS (see rows8_simd.go). Each dot performs the
// float steps of the type's scalar vec_dot (kquants.go, legacy.go, table16.go) in the same
// order on each lane; the integer dots are exact in any order.

// perm8 is the position of row q's ints in the vectors dotS8 reads: its pair-add leaves
// positions 0,1,4,5,2,3,6,7 in lanes 0..7, so row q is stored at position perm8[q] (the
// permutation is its own inverse) and lands in lane q.
var perm8 = [8]int{0, 1, 4, 5, 2, 3, 6, 7}

// ext16 returns the four signed bytes of u sign-extended to int16 and repeated four times.
func ext16(u int32) archsimd.Int16x16 {
	return archsimd.BroadcastInt32x8(u).AsInt8x32().GetLo().ExtendToInt16()
}

// pairsS8 is the VPMADDWD half of a signed int8 dot: for the 8 rows' ints v (row q at
// position perm8[q]) and the int u (ext16), the pair sums of positions 0..3 (lo) and
// 4..7 (hi). Pair sums of int8 products are exact in int32; sums of pairsS8 results
// (of at most 2^15 ints) too. dotS8 finishes them.
func pairsS8(v archsimd.Int8x32, uu archsimd.Int16x16) (lo, hi archsimd.Int32x8) {
	return v.GetLo().ExtendToInt16().DotProductPairs(uu), v.GetHi().ExtendToInt16().DotProductPairs(uu)
}

// dotS8 adds the pairs of pairsS8 results: lane q is the signed dp4a sum of row q.
func dotS8(lo, hi archsimd.Int32x8) archsimd.Int32x8 { return lo.AddPairsGrouped(hi) }

// bsum is sim.Dp4a(0x01010101, u, 0): the sum of u's four signed bytes.
func bsum(u int32) int32 { return sim.Dp4a(0x01010101, u, 0) }

// q6KLanes is vec_dot_q6_K_q8_1's part of one thread (iqs 0..31) for eight rows. What
// the threads of a block share (d, the scales) and its ql and qh ints (transposed for
// the eight rows) are unpacked once per row group (prep).
type q6KLanes struct {
	src
	colTab
	blk []q6KBlock
	v   [2]archsimd.Uint32x8 // vil|vih of i = 0, 1: four 6-bit values 0..63 (before -32)
	sc  [2]archsimd.Int32x8
	d   archsimd.Float32x8
}

// q6KBlock is one Q6_K block of eight rows, unpacked.
type q6KBlock struct {
	d  archsimd.Float32x8
	sc [16]archsimd.Int32x8
	ql [32]archsimd.Uint32x8
	qh [16]archsimd.Uint32x8
}

func q6KQl(row []byte, kbx int) []byte { return quant.Q6_KBlock(row, kbx).Ql() }
func q6KQh(row []byte, kbx int) []byte { return quant.Q6_KBlock(row, kbx).Qh() }

func (w *q6KLanes) prep(rows *[8][]byte, nblocks int) {
	if cap(w.blk) < nblocks {
		w.blk = make([]q6KBlock, nblocks)
	}
	w.blk = w.blk[:nblocks]
	for kbx := range w.blk {
		b := &w.blk[kbx]
		var d [8]float32
		var scales [16][8]int32
		for q := range rows {
			xb := quant.Q6_KBlock(rows[q], kbx)
			for s := range 16 {
				scales[s][q] = int32(xb.Scale(s))
			}
			d[q] = sim.H2F(xb.D())
		}
		for s := range 16 {
			b.sc[s] = archsimd.LoadInt32x8(&scales[s])
		}
		b.d = archsimd.LoadFloat32x8(&d)
		gatherT(b.ql[:], rows, kbx, q6KQl)
		gatherT(b.qh[:], rows, kbx, q6KQh)
	}
}

func (w *q6KLanes) load(rows *[8][]byte, kbx, iqs int) {
	w.src = src{rows, kbx, vecDotQ6_K}
	b := &w.blk[kbx]
	scaleOff := 8*(iqs/16) + (iqs%16)/4
	vhShift := uint64(2 * ((iqs % 16) / 8))
	// The scalar vh is an int32 shifted arithmetically; the bits kept (bits 4 and 5 of
	// each byte after the shifts) never come from the sign fill, so a logical shift
	// gives the same values.
	VL, VH := b.ql[iqs], b.qh[8*(iqs/16)+iqs%8].ShiftAllRight(vhShift)
	for i := range 2 {
		vil := VL.ShiftAllRight(uint64(4 * i)).And(nib4Mask)
		vih := VH.ShiftAllRight(uint64(4 * i)).ShiftAllLeft(4).And(q6HiMask)
		w.v[i] = vil.Or(vih)
	}
	w.sc[0], w.sc[1] = b.sc[scaleOff], b.sc[scaleOff+4]
	w.d = b.d
}

var q6HiMask = archsimd.BroadcastUint32x8(0x30303030)

// dot is vecDotQ6_K on each lane: Dp4a(v-32, u) = Dp4a(v, u) - 32·Σu, exact.
// Column j's q8_1 values come from its yCol table (cols).
func (w *q6KLanes) dot(tmp archsimd.Float32x8, iqs, j int, y []q8.Block) archsimd.Float32x8 {
	bq8 := 4*(iqs/16) + (iqs%16)/8
	ct := w.tabs[j][w.kbx*8+bq8:]
	k := iqs % 8
	e0, e1 := &ct[0], &ct[2] // i = 0 and i = 1 of the scalar loop, unrolled
	dp0 := dotNib8(w.v[0], e0.u[k]).Sub(archsimd.BroadcastInt32x8(32 * e0.bs[k]))
	sumf := sim.FMA8U(archsimd.BroadcastFloat32x8(e0.d8), sim.I2F8(dp0.Mul(w.sc[0])), zero8)
	ok := sim.ExactStart8(sumf)
	dp1 := dotNib8(w.v[1], e1.u[k]).Sub(archsimd.BroadcastInt32x8(32 * e1.bs[k]))
	sumf = sim.FMA8U(archsimd.BroadcastFloat32x8(e1.d8), sim.I2F8(dp1.Mul(w.sc[1])), sumf)
	res := sim.FMA8U(sumf, w.d, tmp)
	return w.done(tmp, res, ok.Add(sumf).Add(res).OK(), iqs, y)
}

// q80Lanes is vec_dot_q8_0_q8_1's part of one thread (ints iqs, iqs+1) for eight rows.
// Each block's d and qs ints (transposed) are unpacked once per row group (prep).
type q80Lanes struct {
	src
	colTab
	blk []q80Block
	v   [vdrQ8_0]archsimd.Int8x32 // row q at position perm8[q]
	d   archsimd.Float32x8
}

// q80Block is one Q8_0 block of eight rows: h2f(d) and the 8 qs ints (row q at
// position perm8[q]).
type q80Block struct {
	d  archsimd.Float32x8
	qs [8]archsimd.Uint32x8
}

func q80Qs(row []byte, kbx int) []byte { return quant.Q8_0Block(row, kbx).Qs() }

func (w *q80Lanes) prep(rows *[8][]byte, nblocks int) {
	if cap(w.blk) < nblocks {
		w.blk = make([]q80Block, nblocks)
	}
	w.blk = w.blk[:nblocks]
	for kbx := range w.blk {
		b := &w.blk[kbx]
		var d [8]float32
		for q := range rows {
			d[q] = sim.H2F(quant.Q8_0Block(rows[q], kbx).D())
		}
		b.d = archsimd.LoadFloat32x8(&d)
		gatherTPerm(b.qs[:], rows, &perm8, kbx, q80Qs)
	}
}

func (w *q80Lanes) load(rows *[8][]byte, kbx, iqs int) {
	w.src = src{rows, kbx, vecDotQ8_0}
	b := &w.blk[kbx]
	for i := range vdrQ8_0 {
		w.v[i] = b.qs[iqs+i].AsInt8x32()
	}
	w.d = b.d
}

// dot is vecDotQ8_0 on each lane.
// Column j's q8_1 values come from its yCol table (cols).
func (w *q80Lanes) dot(tmp archsimd.Float32x8, iqs, j int, y []q8.Block) archsimd.Float32x8 {
	e := &w.tabs[j][w.kbx]
	lo, hi := pairsS8(w.v[0], ext16(e.u[iqs]))
	for i := 1; i < vdrQ8_0; i++ {
		l, h := pairsS8(w.v[i], ext16(e.u[iqs+i]))
		lo, hi = lo.Add(l), hi.Add(h)
	}
	d := sim.Mul8U(w.d, archsimd.BroadcastFloat32x8(e.d8))
	res := sim.FMA8U(d, sim.I2F8(dotS8(lo, hi)), tmp)
	return w.done(tmp, res, sim.ExactStart8(d).Add(res).OK(), iqs, y)
}

// iq4XSLanes is vec_dot_iq4_xs_q8_1's part of one thread (sub-block iqs/4) for eight
// rows: the table values of the low and high nibbles of its four ints. Each block's
// table values (transposed, in perm8 order), sub-block scales and d are unpacked once
// per row group (prep).
type iq4XSLanes struct {
	src
	colTab
	blk    []iq4XSBlock
	vx, vy [vdrIQ4_XS]archsimd.Int8x32 // row q at position perm8[q]
	ls     archsimd.Int32x8            // ls - 32
	d      archsimd.Float32x8
}

// iq4XSBlock is one IQ4_XS block of eight rows: the table values of the low (vx) and
// high (vy) nibbles of each qs int, ls-32 of each sub-block, h2f(d).
type iq4XSBlock struct {
	vx, vy [32]archsimd.Int8x32
	ls     [8]archsimd.Int32x8
	d      archsimd.Float32x8
}

// iq4Tab is kvalues_iq4nl in both 128-bit halves (the table of VPSHUFB).
var iq4Tab = func() archsimd.Int8x32 {
	var t [32]int8
	for i := range t {
		t[i] = quant.KValuesIQ4NL[i%16]
	}
	return archsimd.LoadInt8x32(&t)
}()

func iq4XSQs(row []byte, kbx int) []byte { return quant.IQ4_XSBlock(row, kbx).Qs() }

func (w *iq4XSLanes) prep(rows *[8][]byte, nblocks int) {
	if cap(w.blk) < nblocks {
		w.blk = make([]iq4XSBlock, nblocks)
	}
	w.blk = w.blk[:nblocks]
	for kbx := range w.blk {
		b := &w.blk[kbx]
		var ls [8][8]int32
		var d [8]float32
		for q := range rows {
			xb := quant.IQ4_XSBlock(rows[q], kbx)
			scalesH, scalesL := int32(xb.ScalesH()), xb.ScalesL()
			for sb := range 8 {
				iqs := 4 * sb // as vecDotIQ4_XS computes ls for its iqs
				ls[sb][q] = ((int32(scalesL[iqs/8])>>(iqs&4))&0x0F | ((scalesH>>(iqs/2))&0x03)<<4) - 32
			}
			d[q] = sim.H2F(xb.D())
		}
		for sb := range 8 {
			b.ls[sb] = archsimd.LoadInt32x8(&ls[sb])
		}
		b.d = archsimd.LoadFloat32x8(&d)
		var v [32]archsimd.Uint32x8
		gatherTPerm(v[:], rows, &perm8, kbx, iq4XSQs)
		for k, V := range v {
			b.vx[k] = iq4Tab.PermuteOrZeroGrouped(V.And(nib4Mask).AsInt8x32())
			b.vy[k] = iq4Tab.PermuteOrZeroGrouped(V.ShiftAllRight(4).And(nib4Mask).AsInt8x32())
		}
	}
}

func (w *iq4XSLanes) load(rows *[8][]byte, kbx, iqs int) {
	w.src = src{rows, kbx, vecDotIQ4_XS}
	b := &w.blk[kbx]
	for j := range vdrIQ4_XS {
		w.vx[j], w.vy[j] = b.vx[iqs+j], b.vy[iqs+j]
	}
	w.ls, w.d = b.ls[iqs/4], b.d
}

// dot is vecDotIQ4_XS on each lane.
// Column c's q8_1 values come from its yCol table (cols).
func (w *iq4XSLanes) dot(tmp archsimd.Float32x8, iqs, c int, y []q8.Block) archsimd.Float32x8 {
	e := &w.tabs[c][w.kbx*8+iqs/4]
	var lo, hi archsimd.Int32x8
	for j := range vdrIQ4_XS {
		l, h := pairsS8(w.vx[j], ext16(e.u[j]))
		l2, h2 := pairsS8(w.vy[j], ext16(e.u[j+4]))
		lo, hi = lo.Add(l).Add(l2), hi.Add(h).Add(h2)
	}
	sumi := dotS8(lo, hi).Mul(w.ls)
	d := sim.Mul8U(w.d, archsimd.BroadcastFloat32x8(e.d8))
	res := sim.FMA8U(d, sim.I2F8(sumi), tmp)
	return w.done(tmp, res, sim.ExactStart8(d).Add(res).OK(), iqs, y)
}
