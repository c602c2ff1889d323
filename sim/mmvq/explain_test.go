package mmvq

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/ggsim/ggsim/f16"
	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
	"github.com/ggsim/ggsim/sim/q8"
)

// extremeHalves are binary16 scales at the ends of the range: the largest finite, the
// smallest normal and subnormal, their negatives, and zero.
var extremeHalves = []f16.Half{0x7bff, 0xfbff, 0x0400, 0x0001, 0x8001, 0x0000, 0x3c00}

// xHalfOffsets are the byte offsets of the binary16 scales (d, and dmin or m) of a block,
// for the types whose scale is a plain half; TestExplainMatchesVecDot checks them
// against the block views.
var xHalfOffsets = map[quant.Type][]int{
	quant.Q4_1: {0, 2}, quant.Q5_1: {0, 2}, quant.Q2_K: {80, 82}, quant.Q3_K: {108},
	quant.Q4_K: {0, 2}, quant.Q5_K: {0, 2}, quant.Q6_K: {208},
}

// makeExtreme overwrites the draw's scales (x block and q8_1 blocks) and tmp with
// extreme values chosen by r.
func makeExtreme(t *rapid.T, g *iqDraw, typ quant.Type) {
	pick := func(name string) f16.Half { return rapid.SampledFrom(extremeHalves).Draw(t, name) }
	offs, ok := xHalfOffsets[typ]
	switch {
	case ok:
	case typ == quant.MXFP4: // e8m0 exponent byte at 0
		g.blk[0] = rapid.SampledFrom([]byte{0x00, 0x01, 0x7f, 0xfe, 0xff}).Draw(t, "e8m0")
	case typ == quant.NVFP4: // four ue4m3 bytes
		for i := 0; i < 4; i++ {
			g.blk[i] = rapid.SampledFrom([]byte{0x00, 0x01, 0x7e, 0x7f, 0xfe, 0x08}).Draw(t, "ue4m3")
		}
	case typ == quant.IQ1_M: // the scale is spread over the scales' top nibbles
	default:
		offs = []int{0}
	}
	for _, o := range offs {
		h := pick("x half")
		g.blk[o], g.blk[o+1] = byte(h), byte(h>>8)
	}
	for i := range g.y {
		g.y[i].D, g.y[i].S = pick("y.d"), pick("y.s")
	}
	g.tmp = rapid.SampledFrom([]float32{0, float32(math.Copysign(0, -1)), math.MaxFloat32, -math.MaxFloat32,
		math.SmallestNonzeroFloat32, 1.1754942e-38, 1e30, -3}).Draw(t, "tmp")
}

// makeTypical gives the q8_1 blocks and the x scales magnitudes of one binade band, as
// in a real layer, so that the products of a vec_dot are comparable and their rounding
// shows in the sum (with independent random exponents one term dominates).
func makeTypical(t *rapid.T, g *iqDraw, typ quant.Type) {
	r := rand.New(rand.NewPCG(rapid.Uint64().Draw(t, "typical seed"), 0))
	h := func(e int) f16.Half { return f16.Half(uint16(e+r.IntN(2))<<10 | uint16(r.IntN(1024))) }
	offs, ok := xHalfOffsets[typ]
	if !ok && typ != quant.MXFP4 && typ != quant.NVFP4 && typ != quant.IQ1_M {
		offs = []int{0}
	}
	for _, o := range offs {
		v := h(5) // about 2^-10
		g.blk[o], g.blk[o+1] = byte(v), byte(v>>8)
	}
	for i := range g.y {
		g.y[i].D, g.y[i].S = h(8), h(15)|f16.Half(r.IntN(2))<<15 // about 2^-7; s about ±1
	}
	g.tmp = float32(math.Ldexp(r.Float64()*2-1, r.IntN(4)-2))
}

// TestExplainMatchesVecDot: for every registered type, on random blocks (half of the
// draws with extreme scales and running sums), the step-through ends with the bits of
// the fast vec_dot, and Check (every step's result its operation on its operands:
// sim.CheckSteps, whose Eval sim/steps_test.go checks) accepts the steps but refuses them with any one step dropped.
func TestExplainMatchesVecDot(t *testing.T) {
	for _, typ := range Types() {
		t.Run(typ.String(), func(t *testing.T) {
			if offs, ok := xHalfOffsets[typ]; ok {
				checkHalfOffsets(t, typ, offs)
			}
			rapid.Check(t, func(t *rapid.T) {
				g := drawIQ(t, typ)
				switch rapid.IntRange(0, 2).Draw(t, "scales") {
				case 1:
					makeExtreme(t, &g, typ)
				case 2:
					makeTypical(t, &g, typ)
				}
				want := g.kern.Dot(g.tmp, g.row, 1, g.iqs, g.y)
				st, err := ExplainVecDot(typ, g.tmp, g.row, 1, g.iqs, g.y)
				if err != nil {
					t.Fatal(err)
				}
				if math.Float32bits(st.Out) != math.Float32bits(want) {
					t.Fatalf("explained tmp %v (%#08x), vec_dot %v (%#08x)", st.Out, math.Float32bits(st.Out), want, math.Float32bits(want))
				}
				var dp4a, ffma int
				for _, s := range st.Steps {
					switch s.Op {
					case sim.StepDp4a:
						dp4a++
					case sim.StepFFMA:
						ffma++
					}
				}
				if dp4a == 0 || ffma == 0 {
					t.Fatalf("%d dp4a and %d FFMA steps", dp4a, ffma)
				}
				if err := st.Check(); err != nil {
					t.Fatalf("Check: %v", err)
				}
				for i := range st.Steps {
					c := *st
					c.Steps = slices.Delete(slices.Clone(st.Steps), i, i+1)
					if c.Check() == nil {
						t.Fatalf("Check accepts the steps without step %d (%v %s)", i, st.Steps[i].Op, st.Steps[i].What)
					}
				}
			})
		})
	}
}

// checkHalfOffsets checks xHalfOffsets against the type's block view.
func checkHalfOffsets(t *testing.T, typ quant.Type, offs []int) {
	row := make([]byte, typ.TypeSize())
	for i, o := range offs {
		row[o], row[o+1] = byte(0x11*(i+1)), 0x3c
	}
	var got []f16.Half
	switch typ {
	case quant.Q4_1:
		b := quant.Q4_1Block(row, 0)
		got = []f16.Half{b.D(), b.M()}
	case quant.Q5_1:
		b := quant.Q5_1Block(row, 0)
		got = []f16.Half{b.D(), b.M()}
	case quant.Q2_K:
		d, m := quant.Q2_KBlock(row, 0).DM()
		got = []f16.Half{d, m}
	case quant.Q3_K:
		got = []f16.Half{quant.Q3_KBlock(row, 0).D()}
	case quant.Q4_K:
		d, m := quant.Q4_KBlock(row, 0).DM()
		got = []f16.Half{d, m}
	case quant.Q5_K:
		d, m := quant.Q5_KBlock(row, 0).DM()
		got = []f16.Half{d, m}
	case quant.Q6_K:
		got = []f16.Half{quant.Q6_KBlock(row, 0).D()}
	}
	for i := range offs {
		if want := f16.Half(0x3c00 | 0x11*(i+1)); i >= len(got) || got[i] != want {
			t.Fatalf("%v: half %d at byte %d not read by the block view (%v)", typ, i, offs[i], got)
		}
	}
}

func TestExplainVecDotErrors(t *testing.T) {
	y := make([]q8.Block, 8)
	if _, err := ExplainVecDot(quant.F16, 0, make([]byte, 64), 0, 0, y); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("f16: %v, want ErrUnsupported", err)
	}
	if _, err := ExplainVecDot(quant.Q4_0, 0, make([]byte, 18), 1, 0, y); err == nil {
		t.Error("block past the row: no error")
	}
	if _, err := ExplainVecDot(quant.Q4_K, 0, make([]byte, 144), 0, 0, y[:4]); err == nil {
		t.Error("too few q8_1 blocks: no error")
	}
	if _, err := ExplainVecDot(quant.Q4_0, 0, make([]byte, 18), 0, 1, y); err == nil {
		t.Error("odd iqs for VDR 2: no error")
	}
	if _, err := ExplainVecDot(quant.Q4_0, 0, make([]byte, 18), 0, 2, y); err != nil {
		t.Errorf("valid call: %v", err)
	}
}
