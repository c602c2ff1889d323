package mmvq

import (
	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
	"github.com/ggsim/ggsim/sim/q8"
)

// MMVQ vec_dots of NVFP4, Q1_0 and Q2_0 (vec_dot_nvfp4_q8_1, vec_dot_q1_0_q8_1,
// vec_dot_q2_0_q8_1 in ggml-cuda/vecdotq.cuh at d99724f2b141). Float sequences from the
// SASS (FMA-SITES-IQ.md).

const (
	vdrNVFP4 = 4 // VDR_NVFP4_Q8_1_MMVQ
	vdrQ1_0  = 1 // VDR_Q1_0_Q8_1_MMVQ
	vdrQ2_0  = 1 // VDR_Q2_0_Q8_1_MMVQ
)

func init() {
	register(TypeKernel{Type: quant.NVFP4, Dot: vecDotNVFP4})
	register(TypeKernel{Type: quant.Q1_0, Dot: vecDotQ1_0})
	register(TypeKernel{Type: quant.Q2_0, Dot: vecDotQ2_0})
}

// nvfp4Sumi returns the two integer dot products of vec_dot_nvfp4_q8_1 for thread iqs
// (0 or 4; VDR 4 of QI 8): step i (0, 1) covers sub-block is = (iqs+2i)/2 (16 values,
// qs words iqs+2i and iqs+2i+1) against q8_1 block y[is/2], ints 4(is%2)..+3 in the
// order the source dots them (v0.x·u0, v0.y·u2, v1.x·u1, v1.y·u3), v = get_int_from_table_16
// with kvalues_mxfp4 (table16).
func nvfp4Sumi(b quant.BlockNVFP4, iqs int, y []q8.Block) (sumi [2]int32) {
	qs := b.Qs()
	for i := 0; i < vdrNVFP4/2; i++ {
		iqs0 := iqs + 2*i
		is := iqs0 >> 1
		v0x, v0y := table16(le32(qs[4*iqs0:]), &quant.KValuesMXFP4)
		v1x, v1y := table16(le32(qs[4*(iqs0+1):]), &quant.KValuesMXFP4)
		yb := &y[is>>1]
		i8 := (is & 1) << 2
		s := sim.Dp4a(v0x, yb.Int(i8+0), 0)
		s = sim.Dp4a(v0y, yb.Int(i8+2), s)
		s = sim.Dp4a(v1x, yb.Int(i8+1), s)
		s = sim.Dp4a(v1y, yb.Int(i8+3), s)
		sumi[i] = s
	}
	return sumi
}

// vecDotNVFP4 is vec_dot_nvfp4_q8_1 plus the accumulation. With
// d_i = FMUL(FMUL(e4m3(x.d[is_i]), 0.5), h2f(y[is_i/2].ds.x)) (the e4m3 byte decoded by
// F2FP.F16.E4M3 after the NaN codes 0x7f/0xff are replaced by 0; quant.UE4M3ToFP32CUDA
// is that value times 0.5, exactly):
//
//	sum = FFMA(d_1, I2F(sumi_1), FFMA(d_0, I2F(sumi_0), +0))
//	tmp = FADD(sum, tmp)
//
// Unlike the other types, the addition into tmp is not fused: the source returns a sum.
func vecDotNVFP4(tmp float32, xrow []byte, kbx, iqs int, y []q8.Block) float32 {
	b := quant.NVFP4Block(xrow, kbx)
	sumi := nvfp4Sumi(b, iqs, y)
	var sum float32
	for i := 0; i < vdrNVFP4/2; i++ {
		is := (iqs + 2*i) >> 1
		d := sim.Mul(quant.UE4M3ToFP32CUDA(b.Scale(is)), sim.H2F(y[is>>1].D))
		sum = sim.FMA(d, sim.I2F(sumi[i]), sum)
	}
	return sim.Add(sum, tmp)
}

// q1_0Sumi is the integer part of vec_dot_q1_0_q8_1 for chunk iqs (0..3, 32 values):
// each of the two int16 qs words (sign-extended, as the source reads them through an
// int16_t pointer) is unpacked by __byte_perm into four int8x4 words of ±1 (bit set: +1)
// dotted with 4 ints of y[iqs].
func q1_0Sumi(b quant.BlockQ1_0, iqs int, y *q8.Block) int32 {
	var sumi int32
	for j := 0; j < 2; j++ {
		for k, v := range q1_0Words(b, iqs, j) {
			sumi = sim.Dp4a(v, y.Int(4*j+k), sumi)
		}
	}
	return sumi
}

// q1_0Words is the __byte_perm unpacking of int16 qs word j of chunk iqs into four
// int8x4 words of ±1 (values 32·iqs+16j .. +15).
func q1_0Words(b quant.BlockQ1_0, iqs, j int) [4]int32 {
	qs := b.Qs()
	o := 4*iqs + 2*j
	q := int32(int16(uint16(qs[o]) | uint16(qs[o+1])<<8))
	n0 := sim.BytePerm(0x11100100, 0x11100100, q>>0)
	n1 := sim.BytePerm(0x11100100, 0x11100100, q>>2)
	s0 := sim.BytePerm(0x01FF, 0x01FF, n0>>0)
	s1 := sim.BytePerm(0x01FF, 0x01FF, n1>>0)
	s2 := sim.BytePerm(0x01FF, 0x01FF, n0>>16)
	s3 := sim.BytePerm(0x01FF, 0x01FF, n1>>16)
	return [4]int32{sim.BytePerm(s0, s1, 0x5410), sim.BytePerm(s0, s1, 0x7632), sim.BytePerm(s2, s3, 0x5410), sim.BytePerm(s2, s3, 0x7632)}
}

// vecDotQ1_0 is vec_dot_q1_0_q8_1 plus the accumulation (`return d1 * d8 * sumi;`):
//
//	tmp = FFMA(FMUL(h2f(x.d), h2f(y[iqs].ds.x)), I2F(sumi), tmp)
func vecDotQ1_0(tmp float32, xrow []byte, kbx, iqs int, y []q8.Block) float32 {
	b := quant.Q1_0Block(xrow, kbx)
	yb := &y[iqs]
	sumi := q1_0Sumi(b, iqs, yb)
	return sim.FMA(dxdy(sim.H2F(b.D()), yb), sim.I2F(sumi), tmp)
}

// q2_0Sumi is the integer part of vec_dot_q2_0_q8_1 for chunk iqs (0 or 1, 32 values):
// each of four int16 qs words (sign-extended) holds 8 two-bit codes c, unpacked by
// __byte_perm into two int8x4 words of c-1 (in -1..2), dotted with ints 2j and 2j+1 of
// y[iqs].
func q2_0Sumi(b quant.BlockQ2_0, iqs int, y *q8.Block) int32 {
	var sumi int32
	for j := 0; j < 4; j++ {
		qx, qy := q2_0Words(b, iqs, j)
		sumi = sim.Dp4a(y.Int(2*j+0), qx, sumi)
		sumi = sim.Dp4a(y.Int(2*j+1), qy, sumi)
	}
	return sumi
}

// q2_0Words is the __byte_perm unpacking of int16 qs word j of chunk iqs into two int8x4
// words of code-1 (values 32·iqs+8j .. +7).
func q2_0Words(b quant.BlockQ2_0, iqs, j int) (qx, qy int32) {
	qs := b.Qs()
	o := 8*iqs + 2*j
	q := int32(int16(uint16(qs[o]) | uint16(qs[o+1])<<8))
	qe := sim.BytePerm(0x020100FF, 0x020100FF, q>>0)
	qo := sim.BytePerm(0x020100FF, 0x020100FF, q>>2)
	return sim.BytePerm(qe, qo, 0x5140), sim.BytePerm(qe, qo, 0x7362)
}

// vecDotQ2_0 is vec_dot_q2_0_q8_1 plus the accumulation (`return d2 * d8 * sumi;`):
//
//	tmp = FFMA(FMUL(h2f(x.d), h2f(y[iqs].ds.x)), I2F(sumi), tmp)
func vecDotQ2_0(tmp float32, xrow []byte, kbx, iqs int, y []q8.Block) float32 {
	b := quant.Q2_0Block(xrow, kbx)
	yb := &y[iqs]
	sumi := q2_0Sumi(b, iqs, yb)
	return sim.FMA(dxdy(sim.H2F(b.D()), yb), sim.I2F(sumi), tmp)
}
