package mmq

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/ggsim/ggsim/moe"
	"github.com/ggsim/ggsim/quant"
)

// BenchmarkMulMatID measures a whole MoE expert matmul as mul_mat_q computes it in
// MUL_MAT_ID mode: 8 experts of an FFN up projection (K=4096, N=14336 each), 512
// tokens, each routed to 2 distinct experts drawn uniformly (seeded), one activation
// row per token broadcast to both slots (B1=1, as llama.cpp's ffn_up_exps). It reports
// N·K·T·U int8 multiply-accumulates per second and getrusage CPU seconds per op. One
// op is tens of seconds of CPU: run it with -benchtime=1x.
func BenchmarkMulMatID(b *testing.B) {
	const k, n, e, u, tok = 4096, 14336, 8, 2, 512
	for _, typ := range []quant.Type{quant.Q4_K} {
		b.Run(fmt.Sprintf("type=%v/k=%d/n=%d/experts=%d/used=%d/tokens=%d", typ, k, n, e, u, tok), func(b *testing.B) {
			dev := benchH200(b, false)
			one, x := benchCase(b, typ, k, n, tok, 3)
			as := make([]byte, 0, e*len(one))
			for range e {
				as = append(as, one...)
			}
			ids := benchRouting(tok, u, e, 4)
			r, err := moe.Route(ids, tok, u, e, 1)
			if err != nil {
				b.Fatal(err)
			}
			p, err := MakePlanID(dev, typ, k, n, r)
			if err != nil {
				b.Fatal(err)
			}
			cpu0 := cpuSeconds()
			b.ResetTimer()
			for b.Loop() {
				if _, err := MulMatID(dev, typ, as, k, n, e, x, 1, tok, ids, u, p); err != nil {
					b.Fatal(err)
				}
			}
			cpu := cpuSeconds() - cpu0
			macs := float64(n) * float64(k) * float64(tok) * float64(u)
			b.ReportMetric(macs*float64(b.N)/b.Elapsed().Seconds(), "MAC/s")
			b.ReportMetric(cpu/float64(b.N), "cpu-s/op")
		})
	}
}

// benchRouting returns tok tokens of u distinct expert ids in [0, e), drawn with seed.
func benchRouting(tok, u, e int, seed uint64) []int32 {
	r := rand.New(rand.NewPCG(seed, 0x1d5))
	ids := make([]int32, 0, tok*u)
	for range tok {
		perm := r.Perm(e)
		for s := range u {
			ids = append(ids, int32(perm[s]))
		}
	}
	return ids
}
