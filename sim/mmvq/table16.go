package mmvq

import (
	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
	"github.com/ggsim/ggsim/sim/q8"
)

// The 4-bit table types: MXFP4, IQ4_NL, IQ4_XS (vecdotq.cuh). Their nibbles index a
// 16-entry int8 table (get_int_from_table_16: the __byte_perm construction on CUDA selects
// exactly the table entries), the integer dot products are exact.

// table16 is get_int_from_table_16(q4, tab): x holds the table values of the low nibbles
// of the four bytes of q4, y those of the high nibbles.
func table16(q4 int32, tab *[16]int8) (x, y int32) {
	u := uint32(q4)
	var ux, uy uint32
	for k := 0; k < 4; k++ {
		ux |= uint32(uint8(tab[(u>>(8*k))&0xF])) << (8 * k)
		uy |= uint32(uint8(tab[(u>>(8*k+4))&0xF])) << (8 * k)
	}
	return int32(ux), int32(uy)
}

// vecDotMXFP4 (VDR 2, iqs in {0,2}):
//
//	sumi = Σ_l sim.Dp4a(v.x, u[iqs+l], ·), sim.Dp4a(v.y, u[iqs+l+4], ·)  (v = table16 of qs int iqs+l)
//	tmp  = FFMA(FMUL(FMUL(e8m0(e), 0.5), h2f(d_y)), I2F(sumi), tmp)
func vecDotMXFP4(tmp float32, xrow []byte, kbx, iqs int, y []q8.Block) float32 {
	b := quant.MXFP4Block(xrow, kbx)
	qs := b.Qs()
	yb := &y[0]
	var sumi int32
	for l := 0; l < vdrMXFP4; l++ {
		vx, vy := table16(le32(qs[4*(iqs+l):]), &quant.KValuesMXFP4)
		sumi = sim.Dp4a(vx, yb.Int(iqs+l), sumi)
		sumi = sim.Dp4a(vy, yb.Int(iqs+l+4), sumi)
	}
	d := sim.Mul(sim.Mul(sim.E8M0ToF32(b.E()), 0.5), sim.H2F(yb.D))
	return sim.FMA(d, sim.I2F(sumi), tmp)
}

// vecDotIQ4_NL (VDR 2, iqs in {0,2}):
//
//	sumi = as MXFP4 with kvalues_iq4nl
//	tmp  = FFMA(FMUL(h2f(d_x), h2f(d_y)), I2F(sumi), tmp)
func vecDotIQ4_NL(tmp float32, xrow []byte, kbx, iqs int, y []q8.Block) float32 {
	b := quant.IQ4_NLBlock(xrow, kbx)
	qs := b.Qs()
	yb := &y[0]
	var sumi int32
	for l := 0; l < vdrIQ4_NL; l++ {
		vx, vy := table16(le32(qs[4*(iqs+l):]), &quant.KValuesIQ4NL)
		sumi = sim.Dp4a(vx, yb.Int(iqs+l), sumi)
		sumi = sim.Dp4a(vy, yb.Int(iqs+l+4), sumi)
	}
	d := sim.Mul(sim.H2F(b.D()), sim.H2F(yb.D))
	return sim.FMA(d, sim.I2F(sumi), tmp)
}

// vecDotIQ4_XS (VDR 4, iqs = 4*s for sub-block s = 0..7, q8_1 block s):
//
//	sumi = Σ_{j<4} sim.Dp4a(v.x, u_s[j], ·), sim.Dp4a(v.y, u_s[j+4], ·)  (v = table16 of qs int iqs+j)
//	sumi *= ls - 32                     (int; ls the 6-bit sub-block scale)
//	tmp  = FFMA(FMUL(h2f(d_x), h2f(d_y,s)), I2F(sumi), tmp)
func vecDotIQ4_XS(tmp float32, xrow []byte, kbx, iqs int, y []q8.Block) float32 {
	b := quant.IQ4_XSBlock(xrow, kbx)
	qs := b.Qs()
	yb := &y[iqs/4]
	var sumi int32
	for j := 0; j < vdrIQ4_XS; j++ {
		vx, vy := table16(le32(qs[4*(iqs+j):]), &quant.KValuesIQ4NL)
		sumi = sim.Dp4a(vx, yb.Int(j), sumi)
		sumi = sim.Dp4a(vy, yb.Int(j+4), sumi)
	}
	scalesH := int32(b.ScalesH())
	ls := (int32(b.ScalesL()[iqs/8])>>(iqs&4))&0x0F | ((scalesH>>(iqs/2))&0x03)<<4
	sumi *= ls - 32
	d := sim.Mul(sim.H2F(b.D()), sim.H2F(yb.D))
	return sim.FMA(d, sim.I2F(sumi), tmp)
}

func init() {
	register(TypeKernel{Type: quant.MXFP4, Dot: vecDotMXFP4})
	register(TypeKernel{Type: quant.IQ4_NL, Dot: vecDotIQ4_NL})
	register(TypeKernel{Type: quant.IQ4_XS, Dot: vecDotIQ4_XS})
}
