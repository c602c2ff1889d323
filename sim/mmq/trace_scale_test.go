package mmq_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ggsim/ggsim/oracle/oracletest"
	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
	"github.com/ggsim/ggsim/sim/mmq"
)

// wantScaleSteps is the number of scale steps of one iteration of each dot family (8
// blocks of 32 values): a dropped or added step fails here even where the bits agree.
func wantScaleSteps(t quant.Type) int {
	switch t {
	case quant.Q4_1, quant.Q5_1, quant.Q4_K, quant.Q5_K, quant.IQ1_S: // q8_1: iadd, fmul, i2f, 2 ffma
		return 8 * 5
	case quant.Q3_K, quant.IQ2_XS, quant.IQ2_S, quant.NVFP4: // q8_0_16: 2 i2f, fmul, 2 ffma
		return 8 * 5
	case quant.Q6_K: // per half: 4 x (2 imul, iadd, i2f, ffma), ffma
		return 2 * (4*5 + 1)
	case quant.Q2_K: // per half: 4 x (2 i2f, fmul, 2 ffma) + the mins (2 i2f, fmul, ffma, fsub) + 3 x (2 fneg, 2 ffma)
		return 2 * (4*5 + 5 + 3*4)
	}
	return 8 * 4 // q8_0: iadd, i2f, fmul, ffma
}

// TestScaleStepsMatchDot: on the MMA path (H200) every type's traced iterations carry
// their scale steps, which recompute from their operands, use every result, have the
// family's count and end with the bits of the type's dot (the step's Out).
func TestScaleStepsMatchDot(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 5))
	dev, err := sim.Lookup("H200")
	if err != nil {
		t.Fatal(err)
	}
	const K, N, M = 512, 64, 16
	ntypes := 0
	for typ := quant.Type(0); typ < quant.TypeCount; typ++ {
		if !typ.Valid() || typ.BlockSize() <= 1 || K%typ.BlockSize() != 0 {
			continue
		}
		p, err := mmq.MakePlan(dev, typ, K, N, M)
		if err != nil {
			continue
		}
		w, err := oracletest.RealisticWeights(typ, K, N, r.Uint64())
		if err != nil {
			continue
		}
		b := oracletest.RealisticActivations(K, M, r.Uint64())
		tr, err := mmq.TraceOutput(dev, typ, w, K, N, b, M, p, r.IntN(N), r.IntN(M))
		if errors.Is(err, errors.ErrUnsupported) {
			continue
		}
		if err != nil {
			t.Fatalf("%v: %v", typ, err)
		}
		ntypes++
		for _, st := range tr.Steps {
			sc := st.Scale
			if len(sc) != wantScaleSteps(typ) {
				t.Fatalf("%v: %d scale steps, want %d", typ, len(sc), wantScaleSteps(typ))
			}
			used := make([]bool, len(sc))
			for i, s := range sc {
				if len(s.Args) != s.Op.Arity() {
					t.Fatalf("%v: step %d %v has %d operands", typ, i, s.Op, len(s.Args))
				}
				for k, a := range s.Args {
					if a.Ref >= i {
						t.Fatalf("%v: step %d refers to step %d", typ, i, a.Ref)
					}
					if a.Ref >= 0 {
						if a.Int != sc[a.Ref].Int || math.Float32bits(a.Float) != math.Float32bits(sc[a.Ref].Float) {
							t.Fatalf("%v: step %d operand %d is not step %d's result", typ, i, k, a.Ref)
						}
						used[a.Ref] = true
					} else if a.Name == "sum" && math.Float32bits(a.Float) != math.Float32bits(st.In) {
						t.Fatalf("%v: step %d reads sum %v, the iteration's In is %v", typ, i, a.Float, st.In)
					}
				}
				if iv, fv := s.Op.Eval(s.Args); iv != s.Int || math.Float32bits(fv) != math.Float32bits(s.Float) {
					t.Fatalf("%v: step %d %v does not recompute", typ, i, s.Op)
				}
			}
			for i := range len(sc) - 1 {
				if !used[i] {
					t.Fatalf("%v: step %d (%s) is not used", typ, i, sc[i].What)
				}
			}
			if last := sc[len(sc)-1]; math.Float32bits(last.Float) != math.Float32bits(st.Out) {
				t.Fatalf("seed %d: %v kb0 %d: explained %#08x, dot %#08x", seed, typ, st.KB0, math.Float32bits(last.Float), math.Float32bits(st.Out))
			}
		}
	}
	if ntypes < 20 {
		t.Errorf("only %d types traced on the MMA path", ntypes)
	}
	t.Logf("%d types", ntypes)
}
