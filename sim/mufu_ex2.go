package sim

import (
	_ "embed"
	"math"
)

// The MUFU.EX2 tables measured on an NVIDIA H200 (sm_90, driver 580.159.04, CUDA 13.0)
// with inline PTX ex2.approx.ftz.f32 by gpu/measure/mufu_probe.cu (its log and the
// conversion are in gpu/testdata/h200-mufu/README.md):
//
//   - ex2Pos: value[k] = bits of ex2(k·2^-23), k < 2^23 (in [1, 2), increasing);
//   - ex2Neg: value[k] = bits of ex2(-k·2^-23), k < 2^23 (in (0.5, 1], decreasing).
//
//go:embed mufu_ex2p_sm90.bin
var ex2PosRaw string

//go:embed mufu_ex2n_sm90.bin
var ex2NegRaw string

var (
	ex2Pos = &stepTable{name: "mufu_ex2p_sm90.bin", raw: ex2PosRaw, n: 1 << 23, dir: +1}
	ex2Neg = &stepTable{name: "mufu_ex2n_sm90.bin", raw: ex2NegRaw, n: 1 << 23, dir: -1}
)

// Log2eBits is the float32 by which -use_fast_math's expf multiplies before MUFU.EX2:
// RN(log2 e) = 0x3fb8aa3b.
const Log2eBits uint32 = 0x3fb8aa3b

// Ex2 returns MUFU.EX2(x) as sm_90 computes ex2.approx.ftz.f32, a model measured on an
// H200 for all 2^32 inputs (gpu/testdata/h200-mufu):
//
//   - x is flushed first (FTZ): a subnormal x gives 1;
//   - NaN gives CanonicalNaN32, +Inf gives +Inf, -Inf gives +0;
//   - otherwise |x| is cut to a sign-magnitude fixed-point number with 23 fraction bits
//     (truncated toward zero): K = trunc(|x|·2^23), n = K >> 23, g = K mod 2^23, and
//     ex2(x) = ex2Pos[g]·2^n for x >= 0, ex2Neg[g]·2^-n for x < 0 — two measured tables,
//     not one (ex2Neg[g] is not ex2Pos[2^23-g]/2), within 1 ulp of the correctly rounded
//     2^x; results of 2^128 and above are +Inf, below 2^-126 +0.
func Ex2(x float32) float32 {
	b := math.Float32bits(x)
	exp := b >> 23 & 0xff
	if exp == 0 {
		return 1
	}
	neg := b>>31 != 0
	if exp == 0xff {
		switch {
		case b&0x7fffff != 0:
			return canonNaN
		case neg:
			return 0
		default:
			return float32(math.Inf(1))
		}
	}
	if !neg && exp >= 127+7 { // x >= 128
		return float32(math.Inf(1))
	}
	if neg && exp >= 127+8 { // x <= -256
		return 0
	}
	// |x| < 256: K = trunc(|x|·2^23) fits in 31 bits.
	m := uint64(b&0x7fffff | 0x800000) // |x| = m·2^(exp-150)
	var K uint64
	if sh := int(exp) - 150 + 23; sh >= 0 {
		K = m << uint(sh)
	} else if sh > -64 {
		K = m >> uint(-sh)
	}
	n, g := int32(K>>23), uint32(K&(1<<23-1))
	var t uint32
	if neg {
		if err := ex2Neg.load(); err != nil {
			panic(err) // the embedded table is part of the binary: only a build error gets here
		}
		t, n = ex2Neg.at(g), -n
	} else {
		if err := ex2Pos.load(); err != nil {
			panic(err)
		}
		t = ex2Pos.at(g)
	}
	e := int32(t>>23&0xff) + n
	switch {
	case e >= 255:
		return float32(math.Inf(1))
	case e <= 0:
		return 0
	}
	return math.Float32frombits(t&0x807fffff | uint32(e)<<23)
}

// Expf returns expf(x) as nvcc -use_fast_math compiles it: Ex2(Mul(x, log2 e)) — FMUL.FTZ
// by 0x3fb8aa3b, then MUFU.EX2. The two gave the same bits for all 2^32 inputs on an H200
// (gpu/testdata/h200-mufu, run 1).
func Expf(x float32) float32 { return Ex2(Mul(x, math.Float32frombits(Log2eBits))) }
