package ggml

import (
	"fmt"
	"math"
	"slices"

	"github.com/ggsim/ggsim/ggmlsrc"
	"github.com/ggsim/ggsim/gguf"
	"github.com/ggsim/ggsim/gguf/golden"
	"github.com/ggsim/ggsim/quant"
)

// Runner computes matrix products on one backend (a *Backend, or a fake in tests).
type Runner interface {
	// MulMat returns ggml_mul_mat(a, b): a is N rows of K values of type t, b is M
	// columns of K float32; the result is [N, M] (N contiguous).
	MulMat(t quant.Type, a []byte, k, n int, b []float32, m int) ([]float32, error)
	// MulMatID returns ggml_mul_mat_id(as, b, ids): as [K, N, E], b [K, B1, T],
	// ids [U, T]; the result is [N, U, T].
	MulMatID(t quant.Type, as []byte, k, n, e int, b []float32, b1, tok int, ids []int32, u int) ([]float32, error)
	// Info describes the device.
	Info() (DeviceInfo, error)
}

// Quantizer quantizes rows on the host (ggml_quantize_chunk).
type Quantizer interface {
	// Quantize quantizes rows of K values; imatrix is nil or K importance weights.
	Quantize(t quant.Type, x []float32, rows, k int, imatrix []float32) ([]byte, error)
}

// MMVQTypes are the weight types ggml's MMVQ kernel handles whose reference quantizer
// needs no importance matrix, as in the shared golden file ggml-h200-dev-mmvq.gguf.
var MMVQTypes = []quant.Type{
	quant.Q4_0, quant.Q4_1, quant.Q5_0, quant.Q5_1, quant.Q8_0, quant.Q2_K, quant.Q3_K,
	quant.Q4_K, quant.Q5_K, quant.Q6_K, quant.IQ4_NL, quant.IQ4_XS, quant.MXFP4,
}

// MoEShape is one mul_mat_id case: E experts, U experts per token, T tokens, and B1 = 1
// (src1 broadcast to every slot) or B1 = U (one src1 column per slot).
type MoEShape struct{ E, U, T, B1 int }

// Plan says what to capture.
type Plan struct {
	Types     []quant.Type // weight types, one weight matrix each
	K, N      int          // weights are N rows of K
	Batches   []int        // a mul_mat case per type and batch size M
	QuantRows int          // rows of each type's quantize case (0: no quantize cases)
	MoE       []MoEShape   // mul_mat_id cases per type (N rows of K per expert)
	Seed      uint64       // the input generator's seed
	Repeat    int          // run each product this many times and require equal bits (min 1)
}

// DefaultPlan is the shared MMVQ golden file's plan: every MMVQ type at batch 1..8,
// K = 1024, N = 128, a 64-row quantize case per type, each product run twice.
func DefaultPlan(seed uint64) Plan {
	return Plan{
		Types:     slices.Clone(MMVQTypes),
		K:         1024,
		N:         128,
		Batches:   []int{1, 2, 3, 4, 5, 6, 7, 8},
		QuantRows: 64,
		Seed:      seed,
		Repeat:    2,
	}
}

// Meta is what the caller knows about the build that the library cannot tell.
type Meta struct {
	Producer string // golden.producer; a default describing the method is used if ""
	Commit   string // golden.ggml.commit; ggml_commit() of the build if ""
	Build    string // golden.ggml.build: toolkit and options, e.g. "CUDA 13.0.88, ..."
	// Kernel is the hash of the build's ggml kernel sources (ggmlsrc.HashDir of its
	// source tree), recorded as golden.ggml.kernel_fingerprint and kernel_files; nil
	// records none.
	Kernel ggmlsrc.Set
}

// Summary counts what Capture wrote.
type Summary struct {
	MulMat, MulMatID, Quantize int
	Tensors                    int
	Device                     DeviceInfo
}

// Gen is the synthetic input generator of captured golden files: xorshift64* from a
// seed; Uniform returns (top 24 bits)/2^23 - 1, exactly a float32 in [-1, 1). Values
// returns n uniform values of which each, with probability 1/64 (the next draw's top
// six bits all zero), is scaled by 8 (an outlier); weights are Values scaled by
// float32(0.05) (one rounding). The shared golden files were made with inputs of this
// description but not this generator: their inputs are stored, as these are.
type Gen struct{ s uint64 }

// NewGen returns a generator; seed 0 is replaced by a fixed nonzero constant.
func NewGen(seed uint64) *Gen {
	if seed == 0 {
		seed = 0x9e3779b97f4a7c15
	}
	return &Gen{s: seed}
}

func (g *Gen) next() uint64 {
	g.s ^= g.s >> 12
	g.s ^= g.s << 25
	g.s ^= g.s >> 27
	return g.s * 0x2545f4914f6cdd1d
}

// Uniform returns a float32 uniform in [-1, 1) (multiples of 2^-23).
func (g *Gen) Uniform() float32 { return float32(g.next()>>40)/(1<<23) - 1 }

// Values returns n activations: Uniform, one in 64 (at random) times 8.
func (g *Gen) Values(n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = g.Uniform()
		if g.next()>>58 == 0 {
			v[i] *= 8
		}
	}
	return v
}

// Weights returns n weights: Values times float32(0.05).
func (g *Gen) Weights(n int) []float32 {
	v := g.Values(n)
	for i := range v {
		v[i] *= 0.05
	}
	return v
}

// Experts returns, for each of t tokens, u distinct expert ids in [0, e) in random order.
func (g *Gen) Experts(e, u, t int) []int32 {
	ids := make([]int32, 0, u*t)
	for range t {
		perm := make([]int32, e)
		for i := range perm {
			perm[i] = int32(i)
		}
		for i := e - 1; i > 0; i-- {
			j := int(g.next() % uint64(i+1))
			perm[i], perm[j] = perm[j], perm[i]
		}
		ids = append(ids, perm[:u]...)
	}
	return ids
}

func (p Plan) validate() error {
	if len(p.Types) == 0 {
		return fmt.Errorf("ggml: capture plan has no types")
	}
	if p.K <= 0 || p.N <= 0 {
		return fmt.Errorf("ggml: capture plan K=%d N=%d must be positive", p.K, p.N)
	}
	for _, t := range p.Types {
		if _, err := t.RowSize(int64(p.K)); err != nil {
			return fmt.Errorf("ggml: capture plan: %w", err)
		}
		if !quantizable(t) {
			return fmt.Errorf("ggml: capture plan: ggml cannot quantize %v", t)
		}
	}
	for _, m := range p.Batches {
		if m <= 0 {
			return fmt.Errorf("ggml: capture plan: batch %d", m)
		}
	}
	for _, s := range p.MoE {
		if s.E <= 0 || s.U <= 0 || s.U > s.E || s.T <= 0 || (s.B1 != 1 && s.B1 != s.U) {
			return fmt.Errorf("ggml: capture plan: MoE shape %+v (want 0 < U <= E, T > 0, B1 = 1 or U)", s)
		}
	}
	if p.QuantRows < 0 || p.QuantRows > p.N {
		return fmt.Errorf("ggml: capture plan: %d quantize rows, weights have %d", p.QuantRows, p.N)
	}
	return nil
}

func f32bytes(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		u := math.Float32bits(x)
		b[4*i], b[4*i+1], b[4*i+2], b[4*i+3] = byte(u), byte(u>>8), byte(u>>16), byte(u>>24)
	}
	return b
}

func i32bytes(v []int32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		u := uint32(x)
		b[4*i], b[4*i+1], b[4*i+2], b[4*i+3] = byte(u), byte(u>>8), byte(u>>16), byte(u>>24)
	}
	return b
}

func sameBits(a, b []float32) (int, bool) {
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return i, false
		}
	}
	return -1, len(a) == len(b)
}

// imatrixFor returns an importance matrix of ones for the types ggml requires one for
// (as the shared golden files did), else nil.
func imatrixFor(t quant.Type, k int) []float32 {
	if !requiresImatrix(t) {
		return nil
	}
	im := make([]float32, k)
	for i := range im {
		im[i] = 1
	}
	return im
}

type capCase struct {
	op  golden.Op
	src []string
	dst string
}

// Capture runs plan on r (weights quantized by q on the host) and returns a golden file
// in schema version 1 (shared/golden/README.md) as a gguf/golden Writer, ready for
// WriteFile: tensors w.i (type i's weights), x.j (activations of batch j, shared by all
// types), y.c (outputs), qsrc.i/qdst.i (quantize cases: the first QuantRows rows of type
// i's float weights and their quantization), and for MoE as.i.s, xb.s, ids.s, ym.c.
// Besides the schema's keys it records golden.ggml.version, golden.ggml.build_commit
// (what the build says its commit is), golden.backend, golden.device.description and
// golden.inputs, and the kernel fingerprint keys when meta.Kernel is set. With Repeat >= 2
// every product is computed that many times and must give identical bits.
func Capture(plan Plan, r Runner, q Quantizer, meta Meta) (*golden.Writer, Summary, error) {
	var sum Summary
	if err := plan.validate(); err != nil {
		return nil, sum, err
	}
	rep := max(plan.Repeat, 1)
	info, err := r.Info()
	if err != nil {
		return nil, sum, fmt.Errorf("ggml: capture: device info: %w", err)
	}
	sum.Device = info
	g := NewGen(plan.Seed)
	K, N := plan.K, plan.N

	producer := meta.Producer
	if producer == "" {
		producer = fmt.Sprintf("ggsim gpu/ggml.Capture: mul_mat / mul_mat_id: ggml backend %s through ggml_backend_graph_compute, one node per graph, each run %d times with identical bits; quantize: ggml_quantize_chunk on the host CPU (importance matrix of ones only where ggml requires one)",
			info.Backend, rep)
	}
	commit := meta.Commit
	if commit == "" {
		commit = info.GGMLCommit
	}
	w := golden.NewWriter(golden.Meta{
		Producer:   producer,
		Device:     golden.Device{Name: info.Name, CC: info.CC, SMCount: info.SMCount, Driver: info.Driver},
		GGMLCommit: commit,
		GGMLBuild:  meta.Build,
	})
	for _, kv := range []struct{ k, v string }{
		{"golden.ggml.version", info.GGMLVersion},
		{"golden.ggml.build_commit", info.GGMLCommit},
		{"golden.backend", info.Backend},
		{"golden.device.description", info.Description},
		{"golden.inputs", fmt.Sprintf("gpu/ggml.Gen seed %d: activations uniform in [-1,1) with one in 64 (at random) times 8, weights the same times 0.05", plan.Seed)},
	} {
		if err := w.Add(kv.k, gguf.ScalarOf(kv.v)); err != nil {
			return nil, sum, fmt.Errorf("ggml: capture: %w", err)
		}
	}
	if meta.Kernel != nil {
		if err := w.SetKernel(meta.Kernel); err != nil {
			return nil, sum, fmt.Errorf("ggml: capture: %w", err)
		}
	}
	addT := func(name string, t quant.Type, data []byte, ne ...int64) error {
		if err := w.AddTensor(name, t, ne, data); err != nil {
			return fmt.Errorf("ggml: capture: tensor %s: %w", name, err)
		}
		sum.Tensors++
		return nil
	}
	var cases, quantCases []capCase

	run := func(what string, f func() ([]float32, error)) ([]float32, error) {
		y, err := f()
		if err != nil {
			return nil, fmt.Errorf("ggml: capture %s: %w", what, err)
		}
		for i := 1; i < rep; i++ {
			y2, err := f()
			if err != nil {
				return nil, fmt.Errorf("ggml: capture %s (run %d): %w", what, i+1, err)
			}
			if at, ok := sameBits(y, y2); !ok {
				return nil, fmt.Errorf("ggml: capture %s: run %d differs from run 1 at element %d (%#08x vs %#08x): the backend is not deterministic",
					what, i+1, at, math.Float32bits(y2[at]), math.Float32bits(y[at]))
			}
		}
		return y, nil
	}

	// Activations shared by every type.
	xs := make([][]float32, len(plan.Batches))
	for j, m := range plan.Batches {
		xs[j] = g.Values(K * m)
		if err := addT(fmt.Sprintf("x.%d", j), quant.F32, f32bytes(xs[j]), int64(K), int64(m)); err != nil {
			return nil, sum, err
		}
	}
	type moeIn struct {
		x   []float32
		ids []int32
	}
	moe := make([]moeIn, len(plan.MoE))
	for s, sh := range plan.MoE {
		moe[s] = moeIn{g.Values(K * sh.B1 * sh.T), g.Experts(sh.E, sh.U, sh.T)}
		if err := addT(fmt.Sprintf("xb.%d", s), quant.F32, f32bytes(moe[s].x), int64(K), int64(sh.B1), int64(sh.T)); err != nil {
			return nil, sum, err
		}
		if err := addT(fmt.Sprintf("ids.%d", s), quant.I32, i32bytes(moe[s].ids), int64(sh.U), int64(sh.T)); err != nil {
			return nil, sum, err
		}
	}

	ny, nym := 0, 0
	for i, t := range plan.Types {
		wf := g.Weights(K * N)
		wq, err := q.Quantize(t, wf, N, K, imatrixFor(t, K))
		if err != nil {
			return nil, sum, fmt.Errorf("ggml: capture: quantizing %v weights: %w", t, err)
		}
		wn := fmt.Sprintf("w.%d", i)
		if err := addT(wn, t, wq, int64(K), int64(N)); err != nil {
			return nil, sum, err
		}
		for j, m := range plan.Batches {
			y, err := run(fmt.Sprintf("mul_mat %v K=%d N=%d M=%d", t, K, N, m), func() ([]float32, error) {
				return r.MulMat(t, wq, K, N, xs[j], m)
			})
			if err != nil {
				return nil, sum, err
			}
			yn := fmt.Sprintf("y.%d", ny)
			ny++
			if err := addT(yn, quant.F32, f32bytes(y), int64(N), int64(m)); err != nil {
				return nil, sum, err
			}
			cases = append(cases, capCase{golden.OpMulMat, []string{wn, fmt.Sprintf("x.%d", j)}, yn})
			sum.MulMat++
		}
		for s, sh := range plan.MoE {
			asf := g.Weights(K * N * sh.E)
			as, err := q.Quantize(t, asf, N*sh.E, K, imatrixFor(t, K))
			if err != nil {
				return nil, sum, fmt.Errorf("ggml: capture: quantizing %v expert weights: %w", t, err)
			}
			an := fmt.Sprintf("as.%d.%d", i, s)
			if err := addT(an, t, as, int64(K), int64(N), int64(sh.E)); err != nil {
				return nil, sum, err
			}
			y, err := run(fmt.Sprintf("mul_mat_id %v K=%d N=%d %+v", t, K, N, sh), func() ([]float32, error) {
				return r.MulMatID(t, as, K, N, sh.E, moe[s].x, sh.B1, sh.T, moe[s].ids, sh.U)
			})
			if err != nil {
				return nil, sum, err
			}
			yn := fmt.Sprintf("ym.%d", nym)
			nym++
			if err := addT(yn, quant.F32, f32bytes(y), int64(N), int64(sh.U), int64(sh.T)); err != nil {
				return nil, sum, err
			}
			cases = append(cases, capCase{golden.OpMulMatID, []string{an, fmt.Sprintf("xb.%d", s), fmt.Sprintf("ids.%d", s)}, yn})
			sum.MulMatID++
		}
		if plan.QuantRows > 0 && !requiresImatrix(t) {
			src := wf[:K*plan.QuantRows]
			qd, err := q.Quantize(t, src, plan.QuantRows, K, nil)
			if err != nil {
				return nil, sum, fmt.Errorf("ggml: capture: quantize case %v: %w", t, err)
			}
			sn, dn := fmt.Sprintf("qsrc.%d", i), fmt.Sprintf("qdst.%d", i)
			if err := addT(sn, quant.F32, f32bytes(src), int64(K), int64(plan.QuantRows)); err != nil {
				return nil, sum, err
			}
			if err := addT(dn, t, qd, int64(K), int64(plan.QuantRows)); err != nil {
				return nil, sum, err
			}
			quantCases = append(quantCases, capCase{golden.OpQuantize, []string{sn}, dn})
			sum.Quantize++
		}
	}
	for _, c := range append(cases, quantCases...) {
		if _, err := w.AddCase(golden.Case{Op: c.op, Src: c.src, Dst: c.dst}); err != nil {
			return nil, sum, fmt.Errorf("ggml: capture: %w", err)
		}
	}
	return w, sum, nil
}
