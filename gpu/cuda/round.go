package cuda

import (
	"fmt"
	"math"
)

// RoundHalfAway returns the bits of roundf(x) for the float32 with bits u: x rounded to
// the nearest integer, halfway cases away from zero, the sign of zero kept; NaN, ±Inf
// and |x| >= 2^23 unchanged. Integer-only, the same algorithm as ggsim_ref_roundf in
// kernels/round.cu (the device sweep's reference).
func RoundHalfAway(u uint32) uint32 {
	e := (u >> 23) & 0xff
	if e >= 150 {
		return u
	}
	if e < 126 {
		return u & 0x80000000
	}
	sh := 150 - e
	m := u&0x7fffff | 0x800000
	v := (m + 1<<(sh-1)) >> sh
	if v == 0 {
		return u & 0x80000000
	}
	return u&0x80000000 | math.Float32bits(float32(v))
}

// Int8Conversion names a hypothesis for (int8_t) of a float32 that roundf made integral.
type Int8Conversion int

const (
	// Sat8: NaN -> 0, saturate to [-128, 127] (PTX cvt.rzi.s8.f32).
	Sat8 Int8Conversion = iota
	// Wrap16: NaN -> 0, saturate to int16, keep the low byte (cvt.rzi.s16.f32, st.u8).
	Wrap16
	// Wrap32: NaN -> 0, saturate to int32, keep the low byte (cvt.rzi.s32.f32, st.u8).
	Wrap32
)

// MeasuredInt8 is the conversion ggml's "(int8_t) roundf(x)" (and the char4 member
// assignment of quantize_mmq_q8_1) gets under -use_fast_math: NVRTC 13.0 emits
// cvt.rzi.ftz.s32.f32 then keeps the low byte (cvt.u16.u32, st.u8). Measured on an
// H200 (driver 580.159.04) for all 2^32 float32 inputs: 0 mismatches with Wrap32, so
// roundf(127.5) = 128 becomes -128 and +Inf becomes -1 (gpu/testdata/README.md).
const MeasuredInt8 = Wrap32

func (h Int8Conversion) String() string {
	switch h {
	case Sat8:
		return "sat8"
	case Wrap16:
		return "wrap16"
	case Wrap32:
		return "wrap32"
	}
	return "Int8Conversion(?)"
}

// ToInt8 applies hypothesis h to the integral float32 r (a roundf result).
func (h Int8Conversion) ToInt8(r float32) int8 {
	if math.IsNaN(float64(r)) {
		return 0
	}
	lo, hi := -128.0, 127.0
	switch h {
	case Wrap16:
		lo, hi = -32768, 32767
	case Wrap32:
		lo, hi = math.MinInt32, math.MaxInt32
	}
	v := math.Max(lo, math.Min(hi, float64(r)))
	return int8(int64(v))
}

// RoundSweep returns the float32 inputs of the explicit roundf/int8 probe: specials
// (±0, ±Inf, NaNs, subnormals, ±127.5, ±128, ±0.5 and their neighbours, ±2^23 and
// neighbours, the int16 and int32 edges), every float32 in ±[126.5, 129) and
// ±[0.4999, 0.5001], and n pseudo-random values with |x| < 300 from seed.
func RoundSweep(n int, seed uint64) []float32 {
	var out []float32
	add := func(v float32) { out = append(out, v, -v) }
	for _, u := range []uint32{0, 1, 0x007fffff, 0x00800000, 0x7f800000, 0x7fc00000, 0x7f800001, 0x7fffffff} {
		add(math.Float32frombits(u))
	}
	for _, v := range []float32{0.5, 1.5, 2.5, 126.5, 127.5, 128, 128.5, 129.5, 255.5, 256, 32767.5, 32768, 65535.5,
		1 << 23, 1<<23 + 1, 1<<24 + 2, 2147483520, 2147483648, 4294967296, 1e10, math.MaxFloat32} {
		add(v)
		add(math.Nextafter32(v, 0))
		add(math.Nextafter32(v, float32(math.Inf(1))))
	}
	for _, r := range [][2]float32{{126.5, 129}, {0.4999, 0.5001}} {
		for v := r[0]; v < r[1]; v = math.Nextafter32(v, 1000) {
			add(v)
		}
	}
	s := seed | 1
	for i := 0; i < n; i++ {
		s ^= s << 13
		s ^= s >> 7
		s ^= s << 17
		out = append(out, float32(float64(s>>11)/(1<<53)*600-300))
	}
	return out
}

// RoundAll is the result of the exhaustive roundf/int8 sweep over all 2^32 bit patterns.
type RoundAll struct {
	RoundDiffer  uint64      // roundf bits differ from RoundHalfAway (NaN: NaN-ness)
	Sat8Differ   uint64      // int8 differs from Sat8
	Wrap16Differ uint64      // int8 differs from Wrap16
	Wrap32Differ uint64      // int8 differs from Wrap32
	Examples     [][4]uint32 // (input bits, roundf bits, int8 as int32 bits, flags 1=round 2=sat8)
	ExampleCount uint32      // example slots claimed (stops growing soon after 64)
}

func (r RoundAll) String() string {
	return fmt.Sprintf("all 2^32 float32: roundf differs from round-half-away in %d; (int8_t)roundf differs from sat8 in %d, wrap16 in %d, wrap32 in %d",
		r.RoundDiffer, r.Sat8Differ, r.Wrap16Differ, r.Wrap32Differ)
}
