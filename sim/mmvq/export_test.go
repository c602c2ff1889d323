package mmvq

import (
	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
	"github.com/ggsim/ggsim/sim/q8"
)

// UseUnfusedQ8_0 replaces the Q8_0 vec_dot by a wrong model, the accumulation not fused
// (tmp + d*sumi with two roundings), and returns the function that restores the right
// one: the golden tests (an external test package) show that the comparison catches it.
func UseUnfusedQ8_0() (restore func()) {
	orig := kernels[quant.Q8_0]
	k := orig
	k.Dot = func(tmp float32, xrow []byte, kbx, iqs int, y []q8.Block) float32 {
		b := quant.BlockQ8_0(xrow[kbx*34 : kbx*34+34])
		yb := &y[0]
		var sumi int32
		for i := 0; i < 2; i++ {
			sumi = sim.Dp4a(le32(b.Qs()[4*(iqs+i):]), yb.Int(iqs+i), sumi)
		}
		d := sim.Mul(sim.H2F(b.D()), sim.H2F(yb.D))
		return sim.Add(tmp, sim.Mul(d, sim.I2F(sumi)))
	}
	kernels[quant.Q8_0] = k
	return func() { kernels[quant.Q8_0] = orig }
}
