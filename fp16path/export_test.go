package fp16path

import (
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
