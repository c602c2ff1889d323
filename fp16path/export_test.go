package fp16path

import (
	"math"

	"github.com/ggsim/ggsim/f16"
	"github.com/ggsim/ggsim/quant"
)

// GroupOf exposes one 16-value group's codes, scale D and min Mmin for the layout test.
func GroupOf(t quant.Type, blk []byte, j int) (codes [16]uint8, d, m float32, off int, isMin bool) {
	kr := kernels[t]
	var gr group
	kr.load(blk, j, &gr)
	return gr.codes, gr.d, gr.m, kr.off, kr.min
}

// LanePartials exposes the lanes' partials of one row before the butterfly.
func LanePartials(t quant.Type, row []byte, act *Activations, lanes int) [32]float32 {
	var part [MaxColumns][32]float32
	lanePartials(kernels[t], row, []*Activations{act}, lanes, &part)
	return part[0]
}

// SetSlowHFMA makes the path use HalfDot (f16.FMA2) for its loop; it returns a function
// restoring the fast loop.
func SetSlowHFMA() func() { slowHFMA = true; return func() { slowHFMA = false } }

// HFMACode is one fast HFMA step.
func HFMACode(c uint8, h, acc f16.Half) f16.Half { return hfmaCode(c, h, acc) }

// SetStandInMUFU replaces the path's expf and rsqrtf (MUFU.EX2 and MUFU.RSQ under
// -use_fast_math: by default sim's measured models) with stand-ins. NOT HARDWARE: the stand-ins are the correctly
// rounded float64 functions rounded to float32; MUFU's approximations give other bits.
// They only let the tests check the epilogues' structure (which values meet in which
// order, what is cached), never bits a GPU would give. It returns a function restoring
// the real ones.
func SetStandInMUFU() (restore func()) {
	e, r := expf, rsqrtf
	expf = StandInExpf
	rsqrtf = StandInRsqrtf
	return func() { expf, rsqrtf = e, r }
}

// StandInExpf is the NOT HARDWARE stand-in for expf: float32(math.Exp(x)).
func StandInExpf(x float32) (float32, error) { return float32(math.Exp(float64(x))), nil }

// StandInRsqrtf is the NOT HARDWARE stand-in for rsqrtf: float32(1/math.Sqrt(x)).
func StandInRsqrtf(x float32) (float32, error) { return float32(1 / math.Sqrt(float64(x))), nil }
