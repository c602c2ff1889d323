package sim

import (
	_ "embed"
	"math"
)

// rsqRaw is MUFU.RSQ measured on an NVIDIA H200 (sm_90, driver 580.159.04, CUDA 13.0)
// with inline PTX rsqrt.approx.ftz.f32 by gpu/measure/mufu_probe.cu for the 2^24 inputs
// of [1, 4) (x = bits 0x3f800000 + j), as a decreasing step table (gpu/measure/mufutab,
// gpu/testdata/h200-mufu/README.md).
//
//go:embed mufu_rsq_sm90.bin
var rsqRaw string

var rsqTab = &stepTable{name: "mufu_rsq_sm90.bin", raw: rsqRaw, n: 1 << 24, dir: -1}

// Rsqrt returns MUFU.RSQ(x) as sm_90 computes rsqrt.approx.ftz.f32 (what rsqrtf compiles
// to under -use_fast_math). For a positive normal x = m·4^k with m in [1, 4) it is the
// measured R(m)·2^-k — a model the H200 matched for all 2^32 inputs (probe-run1.log; R is
// within 2 ulp of the correctly rounded 1/sqrt(m), 78% exact). The special cases follow the
// PTX ISA and were not measured: x is flushed first (FTZ), ±0 gives ±Inf, a negative x
// gives CanonicalNaN32 (the NaN's bits are an assumption, as for Abs), +Inf gives +0, NaN
// gives CanonicalNaN32.
func Rsqrt(x float32) float32 {
	b := math.Float32bits(x)
	e := b >> 23 & 0xff
	switch {
	case b&0x7fffffff > 0x7f800000:
		return canonNaN
	case e == 0:
		return math.Float32frombits(b&0x80000000 | 0x7f800000)
	case b>>31 != 0:
		return canonNaN
	case e == 0xff:
		return 0
	}
	base := uint32(127)
	if (e-127)&1 != 0 {
		base = 128
	}
	k := (int32(e) - int32(base)) / 2 // exact: e - base is even
	if err := rsqTab.load(); err != nil {
		panic(err) // the embedded table is part of the binary: only a build error gets here
	}
	r := rsqTab.at((base-127)<<23 | b&0x7fffff)
	re := int32(r>>23&0xff) - k
	return math.Float32frombits(r&0x807fffff | uint32(re)<<23)
}
