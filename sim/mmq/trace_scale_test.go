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
func wantScaleSteps(dp4a bool, t quant.Type) int {
	if dp4a {
		switch t {
		case quant.Q4_1, quant.Q5_1, quant.IQ1_S: // iadd, 2 hmul, i2f, ffma, fadd
			return 8 * 6
		case quant.Q4_0: // iadd, i2f, fmul, fneg, 2 ffma
			return 8 * 6
		case quant.Q3_K: // 2 imul, iadd, fmul, i2f, ffma
			return 8 * 6
		case quant.Q4_K, quant.Q5_K: // per 64 values: 2 x (iadd, imul, 2 i2f, 2 ffma), fmul, fneg, ffma, fadd
			return 4 * (2*6 + 4)
		case quant.Q6_K: // per 64 values: 2 x (2 imul, iadd, i2f, ffma), ffma
			return 4 * (2*5 + 1)
		case quant.Q2_K: // per half of a y block: 2 x (2 i2f, 2 ffma) + the mins (4 or 6) + ffma, fadd
			return 2 * ((8 + 8 + 2) + (8 + 4 + 6 + 2))
		case quant.IQ2_XS, quant.IQ2_S, quant.NVFP4: // 2 i2f, 3 ffma
			return 8 * 5
		}
		return 8 * 4 // q8_0: iadd, fmul, i2f, ffma
	}
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

// TestScaleStepsMatchDot: on the MMA path (H200) and the dp4a path every type's traced iterations carry
// their scale steps, which recompute from their operands, use every result, have the
// family's count and end with the bits of the type's dot (the step's Out).
func TestScaleStepsMatchDot(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 5))
	h200, err := sim.Lookup("H200")
	if err != nil {
		t.Fatal(err)
	}
	dp4a := h200
	dp4a.NoTuringMMA, dp4a.ForceMMQ = true, true
	dp4a.Int8MMA = dp4a.HasInt8MMA()
	const K, N, M = 512, 64, 16
	ntypes := 0
	for i := 0; i < 2*int(quant.TypeCount); i++ {
		typ, dev, path := quant.Type(i/2), h200, "mma"
		if i%2 == 1 {
			dev, path = dp4a, "dp4a"
		}
		if !typ.Valid() || typ.BlockSize() <= 1 || K%typ.BlockSize() != 0 {
			continue
		}
		p, err := mmq.MakePlan(dev, typ, K, N, M)
		if err != nil {
			continue
		}
		if p.DP4A != (path == "dp4a") {
			t.Fatalf("%v: plan on the %s device has DP4A %v", typ, path, p.DP4A)
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
			t.Fatalf("%v %s: %v", typ, path, err)
		}
		ntypes++
		for _, st := range tr.Steps {
			sc := st.Scale
			if len(sc) != wantScaleSteps(p.DP4A, typ) {
				t.Fatalf("%v %s: %d scale steps, want %d", typ, path, len(sc), wantScaleSteps(p.DP4A, typ))
			}
			if err := sim.CheckSteps(sc); err != nil {
				t.Fatalf("%v %s: %v", typ, path, err)
			}
			for i, s := range sc {
				for _, a := range s.Args {
					if a.Ref < 0 && a.Name == "sum" && math.Float32bits(a.Float) != math.Float32bits(st.In) {
						t.Fatalf("%v %s: step %d reads sum %v, the iteration's In is %v", typ, path, i, a.Float, st.In)
					}
				}
			}
			if last := sc[len(sc)-1]; math.Float32bits(last.Float) != math.Float32bits(st.Out) {
				t.Fatalf("seed %d: %v %s kb0 %d: explained %#08x, dot %#08x", seed, typ, path, st.KB0, math.Float32bits(last.Float), math.Float32bits(st.Out))
			}
		}
	}
	if ntypes < 40 {
		t.Errorf("only %d (type, path) pairs traced", ntypes)
	}
	t.Logf("%d types", ntypes)
}
