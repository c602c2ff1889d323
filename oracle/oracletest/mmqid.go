package oracletest

import (
	"fmt"
	"math/rand/v2"
	"slices"

	"pgregory.net/rapid"

	"github.com/ggsim/ggsim/moe"
	"github.com/ggsim/ggsim/oracle"
	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
	"github.com/ggsim/ggsim/sim/mmq"
	"github.com/ggsim/ggsim/tiling"
)

// MUL_MAT_ID with more than 8 tokens, which ggml sends to mul_mat_q in ID mode (package
// tiling decides; the routing is package moe's, the simulation sim/mmq's MulMatID).

// routingKind is how the expert ids of an MMQ MUL_MAT_ID case are drawn. Every kind gives
// each token U distinct experts: ggml's mm_ids_helper races on a repeat (moe.Route
// refuses one as unsupported), so none is drawn.
type routingKind int

const (
	routeUniform routingKind = iota // each token: U distinct experts uniformly at random
	routeHot                        // every token names one hot expert (in a random slot), the rest uniform
	routeSparse                     // only a few experts (U..U+3) are ever named: most experts have no columns
	routeSame                       // every token names the same U experts (in its own slot order)
	routeTopK                       // the U largest of per-token gate scores with a popularity skew, best first
	nRoutingKinds
)

var routingKindNames = [...]string{"uniform", "one-hot-expert", "sparse", "same-experts", "top-k"}

func (k routingKind) String() string { return routingKindNames[k] }

// mmqIDMACs bounds K·N·T·U of a default MMQ MUL_MAT_ID case (K and N are cut to it; T
// and U are not); mmqIDMACsLarge is the bound when ChecksEnv asks for a long run.
const (
	mmqIDMACs      = 1 << 20
	mmqIDMACsLarge = 1 << 24
	mmqIDMaxTokens = 1024
	mmqIDMaxExpert = 256
	// mmqIDCheckedExperts: the structural property compares at most this many experts
	// (those with the most columns) per case.
	mmqIDCheckedExperts = 6
)

// mmqIDMaxT returns the largest T <= mmqIDMaxTokens such that ggml dispatches MUL_MAT_ID
// of t with every token count in 9..T to MMQ on dev, for 4 and 256 experts (0: none).
func mmqIDMaxT(dev sim.Device, t quant.Type) int {
	m := 0
	for c := tiling.MMVQMaxBatchSize + 1; c <= mmqIDMaxTokens; c++ {
		for _, e := range []int64{4, mmqIDMaxExpert} {
			if tiling.MulMatID(dev, t, tiling.Shape{K: int64(t.BlockSize()), N: 128, M: int64(c), Experts: e}).Kernel != tiling.KernelMMQ {
				return m
			}
		}
		m = c
	}
	return m
}

// drawRouting draws the expert ids of T tokens of U distinct experts out of E, of kind k;
// the ids come from r (seeded by a rapid draw: a thousand tokens are too many draws to
// shrink one by one).
func drawRouting(k routingKind, T, U, E int, r *rand.Rand) []int32 {
	ids := make([]int32, 0, T*U)
	pick := func(pool []int32, skip int32) {
		// U distinct experts of pool (a permutation prefix), skip excluded.
		p := slices.Clone(pool)
		r.Shuffle(len(p), func(i, j int) { p[i], p[j] = p[j], p[i] })
		n := 0
		for _, e := range p {
			if n == U || (skip >= 0 && n == U-1) {
				break
			}
			if e != skip {
				ids = append(ids, e)
				n++
			}
		}
	}
	all := make([]int32, E)
	for e := range all {
		all[e] = int32(e)
	}
	switch k {
	case routeUniform:
		for range T {
			pick(all, -1)
		}
	case routeHot:
		hot := int32(r.IntN(E))
		for range T {
			lo := len(ids)
			pick(all, hot)
			slot := r.IntN(U)
			ids = slices.Insert(ids, lo+slot, hot)
		}
	case routeSparse:
		pool := slices.Clone(all)
		r.Shuffle(E, func(i, j int) { pool[i], pool[j] = pool[j], pool[i] })
		pool = pool[:min(E, U+r.IntN(4))]
		for range T {
			pick(pool, -1)
		}
	case routeSame:
		pool := slices.Clone(all)
		r.Shuffle(E, func(i, j int) { pool[i], pool[j] = pool[j], pool[i] })
		pool = pool[:U]
		for range T {
			pick(pool, -1)
		}
	case routeTopK:
		pop := make([]float64, E)
		for e := range pop {
			pop[e] = 2 * r.NormFloat64()
		}
		score := make([]float64, E)
		for range T {
			for e := range score {
				score[e] = pop[e] + r.NormFloat64()
			}
			order := slices.Clone(all)
			slices.SortStableFunc(order, func(a, b int32) int {
				switch {
				case score[a] > score[b]:
					return -1
				case score[a] < score[b]:
					return 1
				}
				return 0
			})
			ids = append(ids, order[:U]...)
		}
	}
	return ids
}

// distinctPerToken reports the first token naming an expert twice (-1: none).
func distinctPerToken(ids []int32, T, U int) int {
	for tok := 0; tok < T; tok++ {
		row := ids[tok*U : (tok+1)*U]
		for i := range row {
			if slices.Contains(row[i+1:], row[i]) {
				return tok
			}
		}
	}
	return -1
}

// drawMMQIDShape draws the shape of an MMQ MUL_MAT_ID case of t, biased to small sizes:
// T = 9..32 in about 7 cases of 10, 33..256 in 2, 257..maxT in 1; E = 4..256; U =
// 1..min(8, E); B1 = 1 or U; K one MMQ iteration (256 values: no tile is split by
// stream-K and no row is read past its end) in 4 cases of 10, up to 2048 in 5, up to
// MaxK in 1; N = 1..300. K, then N, are cut so that K·N·T·U stays within the budget,
// then N so that the E·N·K weights stay within twice it.
func (s *suite) drawMMQIDShape(rt *rapid.T, t quant.Type) (K, N, E, T, U, B1 int) {
	qk := t.BlockSize()
	maxT := s.mmqID[t]
	switch c := rapid.IntRange(0, 9).Draw(rt, "T class (0-6: 9..32, 7-8: 33..256, 9: 257..)"); {
	case c == 9 && maxT > 256:
		T = rapid.IntRange(257, maxT).Draw(rt, "T (tokens)")
	case c >= 7 && maxT > 32:
		T = rapid.IntRange(33, min(256, maxT)).Draw(rt, "T (tokens)")
	default:
		T = rapid.IntRange(9, min(32, maxT)).Draw(rt, "T (tokens)")
	}
	E = rapid.IntRange(4, mmqIDMaxExpert).Draw(rt, "E (experts)")
	U = rapid.IntRange(1, min(8, E)).Draw(rt, "U (expert slots per token, top-k)")
	B1 = 1
	if rapid.Bool().Draw(rt, "B1 = U (one activation row per slot; else 1, broadcast)") {
		B1 = U
	}
	iterK := max(qk, tiling.MMQIterK)
	switch c := rapid.IntRange(0, 9).Draw(rt, "K class (0-3: one iteration, 4-8: <=2048, 9: <=MaxK)"); {
	case c <= 3:
		K = iterK
	case c <= 8:
		K = qk * rapid.IntRange(1, max(1, 2048/qk)).Draw(rt, "K blocks")
	default:
		K = qk * rapid.IntRange(1, max(1, s.maxK/qk)).Draw(rt, "K blocks")
	}
	N = rapid.IntRange(1, 300).Draw(rt, "N (rows per expert)")
	budget := mmqIDMACs
	if s.large {
		budget = mmqIDMACsLarge
	}
	for K > qk && K*N*T*U > budget {
		K = max(qk, K/2/qk*qk)
	}
	for N > 1 && K*N*T*U > budget {
		N = N * 3 / 4
	}
	// The weights of all E experts are made (and quantized) whatever the routing uses:
	// N is cut so that they stay within the budget too.
	for N > 1 && E*N*K > 2*budget {
		N = N * 3 / 4
	}
	return K, N, E, T, U, B1
}

// unsplit reports whether every output tile of the plan that is computed is computed
// whole by one CUDA block from k = 0 (no stream-K split, no fixup).
func unsplit(p *mmq.Plan) bool {
	for _, w := range p.Tiles {
		if w.Empty {
			continue
		}
		if len(w.Ranges) != 1 || w.Adds != nil || w.Ranges[0].Start != 0 || w.Ranges[0].Stop != p.BPN {
			return false
		}
	}
	return true
}

// mmqIDCase draws and checks one MUL_MAT_ID case of more than 8 tokens (mul_mat_q in ID
// mode): bound, determinism, non-finite handling and IDAsMulMat. It returns the routing
// kind, whether the data were adversarial, and false if the case was unsupported.
func (c *caseRun) mmqIDCase() (routingKind, bool, bool) {
	rt, s, t := c.rt, c.s, c.t
	K, N, E, T, U, B1 := s.drawMMQIDShape(rt, t)
	kind := routingKind(rapid.IntRange(0, int(nRoutingKinds)-1).Draw(rt, "routing (0 uniform, 1 one hot expert, 2 sparse, 3 same experts, 4 top-k)"))
	ids := drawRouting(kind, T, U, E, rand.New(rand.NewPCG(rapid.Uint64().Draw(rt, "routing seed"), 0x1d5)))
	if tok := distinctPerToken(ids, T, U); tok >= 0 || len(ids) != T*U {
		rt.Fatalf("oracletest: the %v routing of %d tokens drew %d ids, token %d names an expert twice", kind, T, len(ids), tok)
	}
	if d := tiling.MulMatID(s.dev, t, tiling.Shape{K: int64(K), N: int64(N), M: int64(T), Experts: int64(E)}); d.Kernel != tiling.KernelMMQ {
		rt.Fatalf("oracletest: drew MUL_MAT_ID %v K=%d N=%d E=%d T=%d for MMQ, but ggml dispatches it to %v (%s)", t, K, N, E, T, d.Kernel, d.Reason)
	}
	adv, a, prow, b := c.drawData(rt, t, K, E*N, T*B1)
	pact := infColumns(b, K, T*B1)
	rs := len(a) / (E * N)
	rapid.Just(fmt.Sprintf("K=%d N=%d E=%d T=%d U=%d B1=%d (%v)", K, N, E, T, U, B1, kind)).Draw(rt, "MMQ MUL_MAT_ID shape")
	shape := fmt.Sprintf("MUL_MAT_ID %v K=%d N=%d E=%d T=%d U=%d B1=%d (MMQ, %v routing)", t, K, N, E, T, U, B1, kind)
	if T*U <= 64 {
		shape += fmt.Sprintf(" ids=%v", ids)
	}

	out, ok := c.mulMatID(shape, a, K, N, E, b, B1, T, ids, U)
	if !ok {
		return kind, adv, false
	}
	at := func(idx int) string {
		return fmt.Sprintf("row %d, slot %d, token %d (expert %d)", idx%N, idx/N%U, idx/(N*U), ids[idx/N])
	}
	actRow := func(tok, u int) []float32 { q := tok*B1 + u%B1; return b[q*K : (q+1)*K] }
	expert := func(e int) []byte { return a[e*N*rs : (e+1)*N*rs] }
	if c.has(Determinism) {
		c.checked |= Determinism
		again, ok := c.mulMatID(shape+" (second call)", a, K, N, E, b, B1, T, ids, U)
		if !ok {
			return kind, adv, false
		}
		c.sameBits(shape+": two calls", out, again, at)
	}
	if c.has(Bound) && !adv && K*N*T*U <= mmqBoundMACs {
		c.checked |= Bound
		for tok := 0; tok < T; tok++ {
			for u := 0; u < U; u++ {
				e := int(ids[tok*U+u])
				ref, err := oracle.MulMatRef(t, expert(e), K, N, actRow(tok, u), 1)
				if err != nil {
					rt.Fatalf("%s: fp64 reference: %v", shape, err)
				}
				c.withinBound(fmt.Sprintf("%s, token %d slot %d (expert %d)", shape, tok, u, e), ref, out[(tok*U+u)*N:(tok*U+u+1)*N],
					func(i int) string { return fmt.Sprintf("row %d", i) })
			}
		}
	}
	if c.has(IDAsMulMat) {
		done, ok := c.idAsMulMat(shape, a, rs, K, N, E, b, B1, T, ids, U, out)
		if !ok {
			return kind, adv, false
		}
		if done {
			c.checked |= IDAsMulMat
		}
	}
	if c.has(NonFiniteOutputs) && (slices.Contains(prow, true) || slices.Contains(pact, true)) {
		c.checked |= NonFiniteOutputs
		for tok := 0; tok < T; tok++ {
			for u := 0; u < U; u++ {
				e, ar := int(ids[tok*U+u]), tok*B1+u%B1
				for i := 0; i < N; i++ {
					if v := out[(tok*U+u)*N+i]; (prow[e*N+i] || pact[ar]) && isFinite(v) {
						rt.Fatalf("%s: output (row %d, slot %d, token %d) = %v is finite, but it meets a non-finite scale (expert %d row poisoned %v, activation row %d holds ±Inf %v)",
							shape, i, u, tok, v, e, prow[e*N+i], ar, pact[ar])
					}
				}
			}
		}
	}
	return kind, adv, true
}

// idAsMulMat checks IDAsMulMat on the experts with the most columns: where ggml computes
// both launches unsplit on the same MMQ path, with whole MMQ iterations (no row read
// past its end: the ID launch reads the next expert's row there, MUL_MAT the buffer's
// padding), MUL_MAT_ID's output for token t's slot u equals MUL_MAT of expert ids[t,u]'s
// matrix by the expert's activation rows in token order (padded to 9 columns by
// repeating the last, so that MUL_MAT goes to MMQ). It returns whether the property
// applied, and false as its second value if a call was unsupported.
func (c *caseRun) idAsMulMat(shape string, a []byte, rs, K, N, E int, b []float32, B1, T int, ids []int32, U int, out []float32) (bool, bool) {
	s, t := c.s, c.t
	ro, err := moe.Route(ids, T, U, E, B1)
	if err != nil {
		c.rt.Fatalf("%s: moe.Route: %v", shape, err)
	}
	pid, err := mmq.MakePlanID(s.dev, t, K, N, ro)
	if err != nil || !unsplit(pid) || pid.BPN%pid.BPI != 0 {
		return false, true
	}
	cols := make([][]int, E) // dst columns t*U+u of each expert, in token order
	for d, e := range ids {
		cols[e] = append(cols[e], d)
	}
	order := make([]int, 0, E)
	for e := range cols {
		if len(cols[e]) > 0 {
			order = append(order, e)
		}
	}
	slices.SortStableFunc(order, func(x, y int) int { return len(cols[y]) - len(cols[x]) })
	applied := false
	for _, e := range order[:min(len(order), mmqIDCheckedExperts)] {
		M := max(len(cols[e]), tiling.MMVQMaxBatchSize+1)
		if tiling.MulMat(s.dev, t, tiling.Shape{K: int64(K), N: int64(N), M: int64(M)}).Kernel != tiling.KernelMMQ {
			continue
		}
		p, err := mmq.MakePlan(s.dev, t, K, N, M)
		if err != nil || !unsplit(p) || p.DP4A != pid.DP4A || p.I != pid.I || p.Launch.Config.Fallback != pid.Launch.Config.Fallback {
			continue
		}
		y := make([]float32, 0, M*K)
		for j := 0; j < M; j++ {
			d := cols[e][min(j, len(cols[e])-1)]
			q := d/U*B1 + d%U%B1
			y = append(y, b[q*K:(q+1)*K]...)
		}
		mm, ok := c.mulMat(fmt.Sprintf("%s, expert %d's %d columns as MUL_MAT (M=%d)", shape, e, len(cols[e]), M), a[e*N*rs:(e+1)*N*rs], K, N, y, M)
		if !ok {
			return applied, false
		}
		applied = true
		for j, d := range cols[e] {
			c.sameBits(fmt.Sprintf("%s: token %d slot %d against column %d of MUL_MAT of expert %d (unsplit MMQ, J %d and %d)", shape, d/U, d%U, j, e, pid.J, p.J),
				out[d*N:(d+1)*N], mm[j*N:(j+1)*N], func(i int) string { return fmt.Sprintf("row %d", i) })
		}
	}
	return applied, true
}
