package mmvq

import (
	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
	"github.com/ggsim/ggsim/sim/q8"
)

// Helpers shared by the i-quant and extra-type vec_dots (iq*.go, extra.go).

// iqSignedGrid applies 8 sign bits to the 8 unsigned grid bytes g (byte j = value j),
// as the CUDA i-quant vec_dots do: with signs0/signs1 the masks 0xff of __vcmpne4 for
// values 0..3 and 4..7, the int8x4 words are __vsub4(g.x ^ signs0, signs0) and
// __vsub4(g.y ^ signs1, signs1) (x - 0 = x; (x ^ 0xff) - 0xff = -x mod 256).
func iqSignedGrid(g uint64, signs0, signs1 int32) (lo, hi int32) {
	lo = sim.Vsub4(int32(uint32(g))^signs0, signs0)
	hi = sim.Vsub4(int32(uint32(g>>32))^signs1, signs1)
	return lo, hi
}

// iqKsignMasks returns the __vcmpne4 masks of unpack_ksigns(v): signs = s*0x01010101
// with s the 7 sign bits of v completed to even parity; signs0 = __vcmpne4(signs &
// 0x08040201, 0), signs1 = __vcmpne4(signs & 0x80402010, 0).
func iqKsignMasks(v uint8) (signs0, signs1 int32) {
	signs := int32(quant.UnpackKsigns(v))
	signs0 = sim.Vcmpne4(signs&0x08040201, 0)
	signs1 = sim.Vcmpne4(int32(uint32(signs)&0x80402010), 0)
	return signs0, signs1
}

// iqPackedSignMasks returns the masks of the IQ2_S / IQ3_S sign bytes s (bit j = value j
// negative), as the kernels build them:
// signs0 = __vcmpne4(((s & 0x03) << 7) | ((s & 0x0C) << 21), 0),
// signs1 = __vcmpne4(((s & 0x30) << 3) | ((s & 0xC0) << 17), 0).
func iqPackedSignMasks(s uint8) (signs0, signs1 int32) {
	v := int32(s)
	signs0 = sim.Vcmpne4(((v&0x03)<<7)|((v&0x0C)<<21), 0)
	signs1 = sim.Vcmpne4(((v&0x30)<<3)|((v&0xC0)<<17), 0)
	return signs0, signs1
}

// dxdy returns d = h2f(dx) * h2f(y.ds.x), FMUL.FTZ: the scale product of the vec_dots
// that end in `const float d = __half2float(x->d) * __low2float(bq8_1->ds); return d*sumi;`.
func dxdy(dx float32, y *q8.Block) float32 { return sim.Mul(dx, sim.H2F(y.D)) }
