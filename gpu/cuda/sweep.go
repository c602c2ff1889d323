package cuda

import (
	"encoding/binary"
	"fmt"
	"math"
	"unsafe"

	"github.com/ggsim/ggsim/f16"
)

// The pure-Go halves of the probes ported from the project's former nvcc probe
// (sim/testdata/devprobe/probe.cu, removed; its record is sim/testdata/h200-probes):
// exhaustive sweeps against device-side references (kernels/sweep.cu, f2h_all in
// kernels/half.cu), special values and __byte_perm (kernels/specials.cu), binary16
// arithmetic (kernels/half.cu) and the FTZ boundary (kernels/tiny.cu).

// sweepStat mirrors struct ggsim_stat of kernels/sweep.cu and kernels/half.cu (216 bytes).
type sweepStat struct {
	Mism uint64        // results that differ from the reference
	NaN  uint64        // (1 << 32) | bits of the first NaN result seen; 0 if none
	ExN  uint32        // example slots claimed (may exceed 16)
	_    uint32        // padding
	Ex   [16][3]uint32 // (input, device, reference) of up to 16 mismatches
}

const sweepStatSize = int(unsafe.Sizeof(sweepStat{}))

// Sweep is the result of one exhaustive probe over all 2^32 float32 bit patterns.
type Sweep struct {
	Name       string
	Mismatches uint64      // inputs whose result differs from the reference
	SawNaN     bool        // whether any result was NaN (kernels that record it)
	FirstNaN   uint32      // the bits of the first NaN result seen
	Examples   [][3]uint32 // up to 16 (input, device, reference) that differ
}

func (s Sweep) String() string {
	r := fmt.Sprintf("%s, all 2^32 inputs: %d mismatches", s.Name, s.Mismatches)
	if s.SawNaN {
		r += fmt.Sprintf(", first NaN result %#08x", s.FirstNaN)
	}
	for _, e := range s.Examples[:min(len(s.Examples), 6)] {
		r += fmt.Sprintf(" [in=%#08x got=%#08x want=%#08x]", e[0], e[1], e[2])
	}
	return r
}

// sweep turns the device's statistics block into a Sweep.
func (st sweepStat) sweep(name string) Sweep {
	s := Sweep{Name: name, Mismatches: st.Mism}
	if st.NaN>>32 != 0 {
		s.SawNaN, s.FirstNaN = true, uint32(st.NaN)
	}
	for i := 0; i < int(min(st.ExN, 16, uint32(min(st.Mism, 16)))); i++ {
		s.Examples = append(s.Examples, st.Ex[i])
	}
	return s
}

// DivNumerators are the run-time numerators a of the a/b sweep (ProbeDivAll), as the
// former probe ran them on an H200.
var DivNumerators = []float32{1, 3, 0.7, 100, -5.5, 1e-30, 1e30, 127}

// FloatSpecialInputs is the input of kernel float_specials (kernels/specials.cu), as
// bits: +0, -0, NaN, 1, +Inf, 1-2^-24, 2^-126, -NaN, the subnormal 5·2^-149, the same NaN
// again (a second load, so that fmaxf(NaN, NaN) is not folded by the compiler).
var FloatSpecialInputs = []uint32{0x00000000, 0x80000000, 0x7fc00001, 0x3f800000, 0x7f800000, 0x3f7fffff, 0x00800000, 0xffc00002, 0x00000005, 0x7fc00001}

// FloatSpecial is one output of kernel float_specials: the expression it computes (as
// text), the operation and operands in terms of FloatSpecialInputs indices, so that the
// device test can evaluate package sim's model of it.
type FloatSpecial struct {
	Expr string
	Op   string // "fmaxf", "fminf", "add", "sub", "mul.ftz", "fma.rn.ftz", "fabsf"
	Args []int  // indices into FloatSpecialInputs
}

// FloatSpecials lists kernel float_specials' outputs in order (o[0], o[1], ...).
var FloatSpecials = []FloatSpecial{
	{"fmaxf(+0, -0)", "fmaxf", []int{0, 1}},
	{"fmaxf(-0, +0)", "fmaxf", []int{1, 0}},
	{"fmaxf(NaN, NaN)", "fmaxf", []int{2, 9}},
	{"fminf(+0, -0)", "fminf", []int{0, 1}},
	{"fminf(-0, +0)", "fminf", []int{1, 0}},
	{"NaN + 1", "add", []int{2, 3}},
	{"Inf - Inf", "sub", []int{4, 4}},
	{"mul.ftz(1-2^-24, 2^-126)", "mul.ftz", []int{5, 6}},
	{"fma.rn.ftz(1-2^-24, 2^-126, -0)", "fma.rn.ftz", []int{5, 6, 1}},
	{"fmaxf(0x7fc00001, 0xffc00002)", "fmaxf", []int{2, 7}},
	{"fmaxf(0xffc00002, 0x7fc00001)", "fmaxf", []int{7, 2}},
	{"fmaxf(subnormal, +0)", "fmaxf", []int{8, 0}},
	{"fmaxf(NaN, 1)", "fmaxf", []int{2, 3}},
	{"fabsf(subnormal)", "fabsf", []int{8}},
	{"fabsf(0xffc00002)", "fabsf", []int{7}},
	{"fminf(0xffc00002, 0x7fc00001)", "fminf", []int{7, 2}},
	{"fminf(0x7fc00001, 0xffc00002)", "fminf", []int{2, 7}},
}

// HalfSpecials names kernel half_specials' outputs in order.
var HalfSpecials = []string{"__float2half(NaN 0x7fc00001)", "__float2half(-NaN)", "__hadd(NaN 0x7e01, 1)", "__hmul(0, __float2half(Inf))"}

// HalfOpsB and HalfOpsC are the operands b and c of kernel half_ops: every half a is
// combined with each (HalfOpsB[j], HalfOpsC[j]). They are the former probe's bs[] and
// cs[]; package sim's TestDeviceProbeHalfOps holds the same two lists.
var (
	HalfOpsB = []uint16{0x0000, 0x8000, 0x0001, 0x83ff, 0x0400, 0x3c00, 0xbc00, 0x3c01, 0x3800, 0x4200, 0x7bff, 0x5140, 0x1400, 0xc4d2, 0x7c00, 0x7e00}
	HalfOpsC = []uint16{0x8001, 0x0400, 0x3c00, 0xd140, 0x3555, 0x7bff, 0x0000, 0x8000, 0x0001, 0xbc00, 0xfbff, 0x1400, 0x3c01, 0x0200, 0xfc00, 0x3c00}
)

// HalfOpsPerCase is the number of results half_ops writes per (a, j): __hadd, __hsub,
// __hmul, __hfma and the high half of __hmul2.
const HalfOpsPerCase = 5

// HalfOpsRef returns what package f16 computes for the half_ops outputs of a, b, c:
// a+b, a-b, a*b, fma(a, b, c), and b*c (the high half of {a,b}*{b,c}), each rounded
// once to nearest even.
func HalfOpsRef(a, b, c uint16) [HalfOpsPerCase]uint16 {
	return [HalfOpsPerCase]uint16{halfAdd(a, b), uint16(f16.Sub(f16.Half(a), f16.Half(b))), halfMul(a, b), halfFMA(a, b, c), halfMul(b, c)}
}

// TinyMulCases and TinyFMACases are the numbers of quadruples kernels tiny_mul and
// tiny_fma write; tiny.bin holds the mul ones first.
const (
	TinyMulCases = 256 * 64
	TinyFMACases = 64 * 64 * 32
)

// TinyCases returns the (a, b, c) operand bits that kernels tiny_mul and tiny_fma
// generate on the device, in the order of their outputs (the host's copy of the
// kernels' arithmetic, so that the device test can check the device made the same cases):
// TinyMulCases mul cases (c = -0) then TinyFMACases fma cases.
func TinyCases() [][3]uint32 {
	out := make([][3]uint32, 0, TinyMulCases+TinyFMACases)
	for t := uint32(0); t < TinyMulCases; t++ {
		k, d := t/64, t%64
		inv := 1.0 / (1.0 + float64(k)/8388608.0)
		ab := math.Float32bits(float32(inv)) - 32 + d
		if ab > 0x3f7fffff {
			ab = 0x3f7fffff - (ab - 0x3f7fffff)
		}
		out = append(out, [3]uint32{ab, 0x00800000 | k, 0x80000000})
	}
	for t := uint32(0); t < TinyFMACases; t++ {
		ia, ib, dc := t/2048, (t/32)%64, t%32
		ab := 0x3f800000 | (ia * 0x1f3d5b & 0x7fffff)
		bb := 0x01000000 | (ib * 0x2b9f1 & 0x7fffff)
		p := float64(math.Float32frombits(ab)) * float64(math.Float32frombits(bb)) // exact
		c0 := float32(0x1p-126 - p)
		out = append(out, [3]uint32{ab, bb, math.Float32bits(c0) + dc - 16})
	}
	return out
}

// LittleEndian returns the values of s as little-endian bytes: the format of the probe
// files half_ops.bin (uint16), h2f.bin and tiny.bin (uint32) that package sim's
// TestDeviceProbeHalfOps and TestDeviceProbeTiny read.
func LittleEndian[T uint16 | uint32](s []T) []byte {
	var z T
	n := int(unsafe.Sizeof(z))
	out := make([]byte, n*len(s))
	for i, v := range s {
		if n == 2 {
			binary.LittleEndian.PutUint16(out[2*i:], uint16(v))
		} else {
			binary.LittleEndian.PutUint32(out[4*i:], uint32(v))
		}
	}
	return out
}
