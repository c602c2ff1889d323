package mmvq

import (
	"github.com/ggsim/ggsim/sim"
	"github.com/ggsim/ggsim/sim/q8"
)

// Helpers shared by the i-quant and extra-type vec_dots (iq*.go, extra.go).

// dxdy returns d = h2f(dx) * h2f(y.ds.x), FMUL.FTZ: the scale product of the vec_dots
// that end in `const float d = __half2float(x->d) * __low2float(bq8_1->ds); return d*sumi;`.
func dxdy(dx float32, y *q8.Block) float32 { return sim.Mul(dx, sim.H2F(y.D)) }
