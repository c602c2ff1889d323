package sim

import (
	_ "embed"
	"math"
)

// rcpDelta is the MUFU.RCP table measured on an NVIDIA H200 (sm_90, CUDA 13.0, driver
// 580.159.04) with inline PTX rcp.approx.ftz.f32, copied unchanged from
// shared/mufu/rcp_approx_sm90_delta2bit.bin: for input i (0 <= i < 2^23), the float32
// with bits 0x3f800000|i, the hardware result has bits ref+delta, where ref is the bits of
// float32(1/float64(x)) (the correctly rounded reciprocal) and delta+1 (0, 1 or 2) is
// stored in 2 bits at byte i/4, bit offset 2*(i%4).
//
//go:embed mufu_rcp_sm90.bin
var rcpDelta string

// RcpTableLen is the number of inputs the MUFU.RCP table covers: the 2^23 significands of
// one binade.
const RcpTableLen = 1 << 23

// RcpTableDelta returns the measured delta (-1, 0 or +1) of MUFU.RCP for the input
// 1 + i*2^-23, in units of the last place of the correctly rounded reciprocal. It panics
// if i is outside [0, RcpTableLen).
func RcpTableDelta(i int) int {
	if i < 0 || i >= RcpTableLen {
		panic("sim: RcpTableDelta index out of range")
	}
	return int(rcpDelta[i>>2]>>(2*(i&3))&3) - 1
}

// rcpSignificand returns the bits of MUFU.RCP(x) for x = 1 + i*2^-23.
func rcpSignificand(i uint32) uint32 {
	x := math.Float32frombits(0x3f800000 | i)
	ref := math.Float32bits(float32(1 / float64(x)))
	d := uint32(rcpDelta[i>>2]>>(2*(i&3))) & 3
	return ref + d - 1
}

// Rcp returns MUFU.RCP(x) as sm_90 computes rcp.approx.ftz.f32 (what 1.0f/x and the
// fast-math division compile to):
//
//   - x is flushed first (FTZ), so a subnormal x acts as ±0;
//   - ±0 gives ±Inf, ±Inf gives ±0, NaN gives CanonicalNaN32;
//   - a normal x = m·2^e (m in [1,2)) gives rcp(m)·2^-e, where rcp(m) is the measured
//     table value (within 1 ulp of the correctly rounded 1/m); a result below 2^-126 in
//     magnitude (only for |x| > 2^126) is flushed to the zero of x's sign.
//
// The table was measured for m in [1,2) only. That other binades scale exactly
// (rcp(m·2^e) = rcp(m)·2^-e, flushed below 2^-126) was an assumption in
// shared/mufu/README.md; testdata/h200-probes checked this whole model against
// rcp.approx.ftz.f32 on an H200 (driver 580.159.04, CUDA 13.0) for all 2^32 inputs with no
// mismatch (NaN results 0x7fffffff), and the [1,2) results against the embedded table
// with no mismatch.
func Rcp(x float32) float32 {
	b := math.Float32bits(x)
	sign := b & 0x80000000
	exp := int32(b>>23) & 0xff
	switch exp {
	case 0: // ±0 or subnormal (flushed)
		return math.Float32frombits(sign | 0x7f800000)
	case 0xff:
		if b&0x7fffff != 0 {
			return canonNaN
		}
		return math.Float32frombits(sign)
	}
	r := rcpSignificand(b & 0x7fffff) // in (0.5, 1]: exponent field 126 or 127
	re := int32(r>>23) - (exp - 127)  // exact scaling by 2^-(exp-127)
	if re <= 0 {
		return math.Float32frombits(sign) // below 2^-126: flushed
	}
	return math.Float32frombits(sign | uint32(re)<<23 | r&0x7fffff)
}

// Div returns the fast-math quotient a/b = Mul(a, Rcp(b)): nvcc -use_fast_math compiles
// a/b to MUFU.RCP then FMUL.FTZ (SASS read by testdata/h200-probes, nvcc 13.0, sm_90), and
// a/b gave the same bits as mul.ftz(a, rcp.approx.ftz(b)) for every float32 b with a in
// {1, 3, 0.7, 100, -5.5, 1e-30, 1e30, 127}, and for 127.0f/b (H200).
func Div(a, b float32) float32 { return Mul(a, Rcp(b)) }

// RcpRN returns the correctly rounded reciprocal 1/x (round to nearest even, no FTZ), as
// __frcp_rn / rcp.rn.f32. Only used by the Blackwell FP4 quantizers; not MUFU.
func RcpRN(x float32) float32 {
	r := float32(1 / float64(x)) // 1/x is never within 2^-53 relative of a float32 midpoint
	if r != r {
		return canonNaN
	}
	return r
}

// Inv127Bits is the bits of the float32 constant K by which x/127.0f is multiplied under
// -use_fast_math: 0x3C010204 = RN(1/127). Confirmed with testdata/h200-probes (nvcc 13.0,
// sm_90): x/127.0f compiles to FMUL.FTZ by the immediate 0x3c010204 and equals
// mul.ftz(x, K) for all 2^32 x on an H200. That quantize_q8_1's own SASS uses the same
// constant (same compiler, same expression) is expected but was not read from a ggml
// build; the shared README's statistic (one ulp below RN(x/127) in 4.7% of inputs) agrees.
const Inv127Bits uint32 = 0x3C010204

// Inv127 is math.Float32frombits(Inv127Bits).
var Inv127 = math.Float32frombits(Inv127Bits)

// Div127 returns x/127.0f as compiled with -use_fast_math: Mul(x, Inv127) (see Inv127Bits).
func Div127(x float32) float32 { return Mul(x, Inv127) }
