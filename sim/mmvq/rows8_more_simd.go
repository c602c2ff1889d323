//go:build goexperiment.simd && amd64

package mmvq

import (
	"simd/archsimd"

	"github.com/ggsim/ggsim/f16"
	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
	"github.com/ggsim/ggsim/sim/q8"
)

// The 8-row kernels of Q5_K, Q4_0, Q5_0, Q4_1 and Q5_1 (see rows8_simd.go): the float
// steps of vecDotQ5_K (kquants.go) and the legacy vec_dots (legacy.go) on each lane, in
// their order; the weights are unsigned (4- or 5-bit), so the integer dots are dotNib8.

// q5KLanes is vec_dot_q5_K_q8_1's part of one thread for eight rows: Q4_K's with 5-bit
// values; the float steps (dot) are Q4_K's.
type q5KLanes struct{ q4KLanes }

func q5KHead(row []byte, kbx int) ([2]f16.Half, []byte) {
	b := quant.Q5_KBlock(row, kbx)
	d, dmin := b.DM()
	return [2]f16.Half{d, dmin}, b.Scales()
}

func (w *q5KLanes) prep(rows *[8][]byte, nblocks int) {
	w.blk = prepK(w.blk, rows, nblocks, q5KHead, nil)
}

func (w *q5KLanes) load(rows *[8][]byte, kbx, iqs int) {
	w.src = src{rows, kbx, vecDotQ5_K}
	bq8 := 2 * ((iqs / 2) / 4)
	off := 4 * ((iqs / 2) % 4)
	var v [2][2][8]uint32
	for q := range rows {
		b := quant.Q5_KBlock(rows[q], kbx)
		ql := b.Qs()[16*bq8+off:]
		qh := b.Qh()[off:]
		vl0, vl1 := le32(ql), le32(ql[16:])
		vh0, vh1 := le32(qh)>>bq8, le32(qh[16:])>>bq8
		for i := range 2 {
			v[i][0][q] = uint32((vl0>>(4*i))&0x0F0F0F0F | ((vh0>>i)<<4)&0x10101010)
			v[i][1][q] = uint32((vl1>>(4*i))&0x0F0F0F0F | ((vh1>>i)<<4)&0x10101010)
		}
	}
	for i := range 2 {
		w.v[i][0], w.v[i][1] = archsimd.LoadUint32x8(&v[i][0]), archsimd.LoadUint32x8(&v[i][1])
	}
	w.setBlock(kbx, bq8/2)
}

// legacyLanes holds the value ints of one thread's two qs ints (VDR 2) for eight rows:
// v[i][0] the low-nibble values (dotted with u[iqs+i]), v[i][1] the high ones (u[iqs+i+4]).
type legacyLanes struct {
	v [2][2]archsimd.Uint32x8
}

// sumi is the legacy vec_dots' sumi on each lane (exact).
func (w *legacyLanes) sumi(iqs int, yb *q8.Block) archsimd.Int32x8 {
	s := dotNib8(w.v[0][0], yb.Int(iqs)).Add(dotNib8(w.v[0][1], yb.Int(iqs+4)))
	return s.Add(dotNib8(w.v[1][0], yb.Int(iqs+1))).Add(dotNib8(w.v[1][1], yb.Int(iqs+5)))
}

// set4 fills v from the qs ints of eight rows (4-bit values).
func (w *legacyLanes) set4(qs *[2][8]uint32) {
	for i := range 2 {
		V := archsimd.LoadUint32x8(&qs[i])
		w.v[i][0], w.v[i][1] = V.And(nib4Mask), V.ShiftAllRight(4).And(nib4Mask)
	}
}

// set5 fills v from q5Ints of eight rows.
func (w *legacyLanes) set5(v *[2][2][8]uint32) {
	for i := range 2 {
		w.v[i][0], w.v[i][1] = archsimd.LoadUint32x8(&v[i][0]), archsimd.LoadUint32x8(&v[i][1])
	}
}

// q40Lanes is vec_dot_q4_0_q8_1's part of one thread for eight rows.
type q40Lanes struct {
	src
	legacyLanes
	d archsimd.Float32x8
}

func (w *q40Lanes) load(rows *[8][]byte, kbx, iqs int) {
	w.src = src{rows, kbx, vecDotQ4_0}
	var v [2][8]uint32
	var d [8]float32
	for q := range rows {
		b := quant.Q4_0Block(rows[q], kbx)
		qs := b.Qs()
		for i := range 2 {
			v[i][q] = uint32(le32(qs[4*(iqs+i):]))
		}
		d[q] = sim.H2F(b.D())
	}
	w.set4(&v)
	w.d = archsimd.LoadFloat32x8(&d)
}

// dotOff is vecDotQ4_0 (k = 4) and vecDotQ5_0 (k = 8) on each lane:
// FFMA(FFMA(d8, I2F(sumi), -FMUL(k, s8)), d, tmp).
func (w *q40Lanes) dotOff(tmp archsimd.Float32x8, iqs int, y []q8.Block, k float32) archsimd.Float32x8 {
	yb := &y[0]
	off := archsimd.BroadcastFloat32x8(sim.Neg(sim.Mul(k, sim.H2F(yb.S))))
	x := sim.FMA8U(archsimd.BroadcastFloat32x8(sim.H2F(yb.D)), sim.I2F8(w.sumi(iqs, yb)), off)
	res := sim.FMA8U(x, w.d, tmp)
	return w.done(tmp, res, sim.ExactStart8(x).Add(res).OK(), iqs, y)
}

func (w *q40Lanes) dot(tmp archsimd.Float32x8, iqs, _ int, y []q8.Block) archsimd.Float32x8 {
	return w.dotOff(tmp, iqs, y, 4)
}

// q50Lanes is vec_dot_q5_0_q8_1's part of one thread for eight rows.
type q50Lanes struct{ q40Lanes }

func (w *q50Lanes) load(rows *[8][]byte, kbx, iqs int) {
	w.src = src{rows, kbx, vecDotQ5_0}
	var v [2][2][8]uint32
	var d [8]float32
	for q := range rows {
		b := quant.Q5_0Block(rows[q], kbx)
		qs, qh := b.Qs(), int32(b.Qh())
		for i := range 2 {
			vi0, vi1 := q5Ints(le32(qs[4*(iqs+i):]), qh>>(4*(iqs+i)))
			v[i][0][q], v[i][1][q] = uint32(vi0), uint32(vi1)
		}
		d[q] = sim.H2F(b.D())
	}
	w.set5(&v)
	w.d = archsimd.LoadFloat32x8(&d)
}

func (w *q50Lanes) dot(tmp archsimd.Float32x8, iqs, _ int, y []q8.Block) archsimd.Float32x8 {
	return w.dotOff(tmp, iqs, y, 8)
}

// q41Lanes is vec_dot_q4_1_q8_1's part of one thread for eight rows. The half products
// of dm with the column's ds8 (HMUL2) are per row and column, computed per lane.
type q41Lanes struct {
	src
	legacyLanes
	d, m [8]f16.Half
}

func (w *q41Lanes) load(rows *[8][]byte, kbx, iqs int) {
	w.src = src{rows, kbx, vecDotQ4_1}
	var v [2][8]uint32
	for q := range rows {
		b := quant.Q4_1Block(rows[q], kbx)
		qs := b.Qs()
		for i := range 2 {
			v[i][q] = uint32(le32(qs[4*(iqs+i):]))
		}
		w.d[q], w.m[q] = b.D(), b.M()
	}
	w.set4(&v)
}

var half8 = archsimd.BroadcastFloat32x8(0.5)

// dot is vecDotQ4_1 (and vecDotQ5_1) on each lane: FADD(tmp, FFMA(d·d8, I2F(sumi), FMUL(m·s8, 0.5))).
func (w *q41Lanes) dot(tmp archsimd.Float32x8, iqs, _ int, y []q8.Block) archsimd.Float32x8 {
	yb := &y[0]
	var dd, ms [8]float32
	for q := range 8 {
		dd[q], ms[q] = hmulDS(w.d[q], w.m[q], yb)
	}
	MS := sim.Mul8U(archsimd.LoadFloat32x8(&ms), half8)
	x := sim.FMA8U(archsimd.LoadFloat32x8(&dd), sim.I2F8(w.sumi(iqs, yb)), MS)
	res := sim.Add8U(tmp, x)
	return w.done(tmp, res, sim.ExactStart8(MS).Add(x).Add(res).OK(), iqs, y)
}

// q51Lanes is vec_dot_q5_1_q8_1's part of one thread for eight rows.
type q51Lanes struct{ q41Lanes }

func (w *q51Lanes) load(rows *[8][]byte, kbx, iqs int) {
	w.src = src{rows, kbx, vecDotQ5_1}
	var v [2][2][8]uint32
	for q := range rows {
		b := quant.Q5_1Block(rows[q], kbx)
		qs, qh := b.Qs(), int32(b.Qh())
		for i := range 2 {
			vi0, vi1 := q5Ints(le32(qs[4*(iqs+i):]), qh>>(4*(iqs+i)))
			v[i][0][q], v[i][1][q] = uint32(vi0), uint32(vi1)
		}
		w.d[q], w.m[q] = b.D(), b.M()
	}
	w.set5(&v)
}
