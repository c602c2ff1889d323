package ggsim

import (
	"fmt"

	"github.com/ggsim/ggsim/internal/errs"
	"github.com/ggsim/ggsim/moe"
	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
	"github.com/ggsim/ggsim/sim/mmq"
	"github.com/ggsim/ggsim/sim/mmvq"
	"github.com/ggsim/ggsim/tiling"
)

// Weights is a quantized weight tensor as ggml stores it (ne[0] = K contiguous): E
// matrices (experts; 1 for MulMat) of N rows of K values of Type, row i of matrix e at
// Data[(e*N+i)*RowSize:], RowSize = Type.RowSize(K).
type Weights struct {
	Type quant.Type
	K, N int
	// E is the number of experts for MulMatID; MulMat needs 0 or 1.
	E    int
	Data []byte
}

// Result is what MulMat and MulMatID return.
type Result struct {
	// Out is the float32 output with the GPU's bits: dst[j*N+i] = row i · column j for
	// MulMat; dst[(t*U+u)*N+i] for token t's slot u for MulMatID.
	Out []float32
	// Decision is the kernel ggml dispatches to on the device, with ggml's reason.
	Decision tiling.Decision
	// Trace is set with WithTrace.
	Trace *Trace
}

// Trace is the record of one simulated launch in its lane-by-lane mode.
type Trace struct {
	// Kernel is the kernel that ran.
	Kernel tiling.Kernel
	// MMVQ holds every float step of an MMVQ launch, in the order the simulation
	// performs them (mmvq.Event: vec_dot calls, cross-warp adds, shuffles, stores).
	MMVQ []mmvq.Event
	// Counters counts the reduction's instructions (mmvq.Options.Counters).
	Counters sim.Counters
}

// Option configures MulMat and MulMatID.
type Option func(*config)

type config struct {
	laneByLane bool
	record     bool
	workers    int
}

// WithTrace runs the kernel lane by lane (CUDA block by block, warp by warp, through
// simulated shared memory and shuffles) and records every float step in Result.Trace.
// The bits are the same as without it; it is much slower, and the record holds several
// events per output and k block, so it is for small shapes.
func WithTrace() Option { return func(c *config) { c.laneByLane, c.record = true, true } }

// LaneByLane runs the kernel lane by lane like WithTrace but records nothing: a check
// that the step-through model gives the same bits as the fast one.
func LaneByLane() Option { return func(c *config) { c.laneByLane = true } }

// Workers sets the number of goroutines of the fast mode (0, the default: GOMAXPROCS).
func Workers(n int) Option { return func(c *config) { c.workers = n } }

// kernel is a simulated kernel family: MUL_MAT of M columns and MUL_MAT_ID of T tokens
// on the shapes ggml dispatches to it (the arguments are checked before).
type kernel struct {
	mulMat   func(dev sim.Device, w Weights, b []float32, M int, c *config, tr *Trace) ([]float32, error)
	mulMatID func(dev sim.Device, w Weights, b []float32, B1, T int, ids []int32, U int, c *config, tr *Trace) ([]float32, error)
}

// simulated lists the kernels ggsim simulates: the one place where ggml's dispatch
// decision meets a simulator.
var simulated = map[tiling.Kernel]kernel{
	tiling.KernelMMVQ:    {mulMat: mmvqMulMat, mulMatID: mmvqMulMatID},
	tiling.KernelMMVQMoE: {mulMat: mmvqMulMat, mulMatID: mmvqMulMatID},
	tiling.KernelMMQ:     {mulMat: mmqMulMat, mulMatID: mmqMulMatID},
}

// MulMat computes ggml_mul_mat(w, b) as ggml's CUDA backend does on dev: b holds M
// columns of w.K float32 activations (b[j*K+k]); the result has w.N*M values. The kernel
// is the one ggml dispatches to (tiling.MulMat); if ggsim does not simulate it the error
// wraps ErrNotSimulated (errors.ErrUnsupported) and Result.Decision still says which
// kernel and why.
func MulMat(dev sim.Device, w Weights, b []float32, M int, opts ...Option) (Result, error) {
	if err := w.check(false); err != nil {
		return Result{}, err
	}
	if M < 1 || int64(len(b)) != int64(w.K)*int64(M) {
		return Result{}, fmt.Errorf("ggsim: MulMat: activations: %d values given for %d columns of %d", len(b), M, w.K)
	}
	d := tiling.MulMat(dev, w.Type, tiling.Shape{K: int64(w.K), N: int64(w.N), M: int64(M)})
	res := Result{Decision: d}
	k, err := kernelOf(d, func() string { return fmt.Sprintf("MUL_MAT of %v with %d columns on %s", w.Type, M, dev.Name) })
	if err != nil {
		return res, err
	}
	c, tr := configure(opts, d)
	res.Out, err = k.mulMat(dev, w, b, M, c, tr)
	if err != nil {
		return Result{Decision: d}, err
	}
	res.Trace = tr
	return res, nil
}

// MulMatID computes ggml_mul_mat_id(w, b, ids) as ggml's CUDA backend does on dev for T
// tokens: w holds w.E experts; b holds T tokens of B1 activation rows of w.K values
// (b[(t*B1+r)*K+k]); ids holds T tokens of U expert ids (ids[t*U+u]), U a multiple of B1
// (slot u reads activation row u % B1; B1 = 1 broadcasts one row to every slot). The
// result has T*U*w.N values, dst[(t*U+u)*N+i]. The kernel is the one ggml dispatches to
// (tiling.MulMatID); if ggsim does not simulate it the error wraps ErrNotSimulated
// (errors.ErrUnsupported).
func MulMatID(dev sim.Device, w Weights, b []float32, B1, T int, ids []int32, U int, opts ...Option) (Result, error) {
	if err := w.check(true); err != nil {
		return Result{}, err
	}
	if T < 1 || B1 < 1 || U < 1 || U%B1 != 0 {
		return Result{}, fmt.Errorf("ggsim: MulMatID: %d tokens of %d slots and %d activation rows: want T >= 1 and U a positive multiple of B1", T, U, B1)
	}
	if int64(len(b)) != int64(w.K)*int64(B1)*int64(T) {
		return Result{}, fmt.Errorf("ggsim: MulMatID: activations: %d values given for %d tokens of %d rows of %d", len(b), T, B1, w.K)
	}
	if len(ids) != T*U {
		return Result{}, fmt.Errorf("ggsim: MulMatID: %d expert ids given for %d tokens of %d slots", len(ids), T, U)
	}
	for i, id := range ids {
		if id < 0 || int(id) >= w.E {
			return Result{}, fmt.Errorf("ggsim: MulMatID: expert id %d of token %d, slot %d is outside [0, %d)", id, i/U, i%U, w.E)
		}
	}
	d := tiling.MulMatID(dev, w.Type, tiling.Shape{K: int64(w.K), N: int64(w.N), M: int64(T), Experts: int64(w.E)})
	res := Result{Decision: d}
	k, err := kernelOf(d, func() string {
		return fmt.Sprintf("MUL_MAT_ID of %v with %d tokens and %d experts on %s", w.Type, T, w.E, dev.Name)
	})
	if err != nil {
		return res, err
	}
	c, tr := configure(opts, d)
	res.Out, err = k.mulMatID(dev, w, b, B1, T, ids, U, c, tr)
	if err != nil {
		return Result{Decision: d}, err
	}
	res.Trace = tr
	return res, nil
}

// check checks the weights' sizes (E experts for MulMatID, one matrix for MulMat).
func (w *Weights) check(id bool) error {
	e := w.E
	switch {
	case id && e < 1:
		return fmt.Errorf("ggsim: MulMatID: %d experts", e)
	case !id && e > 1:
		return fmt.Errorf("ggsim: MulMat: weights of %d experts (use MulMatID)", e)
	case !id:
		e = 1
	}
	if w.K <= 0 || w.N <= 0 {
		return fmt.Errorf("ggsim: weights: K = %d, N = %d: want positive", w.K, w.N)
	}
	rs, err := w.Type.RowSize(int64(w.K))
	if err != nil {
		return fmt.Errorf("ggsim: weights: %w", err)
	}
	if want := rs * int64(w.N) * int64(e); int64(len(w.Data)) != want {
		return fmt.Errorf("ggsim: weights: %d bytes given, want %d (%d×%d rows of %d %v values)", len(w.Data), want, e, w.N, w.K, w.Type)
	}
	return nil
}

// ErrNotSimulated is wrapped by the error of MulMat and MulMatID where ggml dispatches to
// a kernel ggsim does not simulate (yet), or a type the kernel has no simulation of. It
// matches errors.ErrUnsupported. (A device whose arithmetic is not modelled is refused by
// the kernel with sim.ErrUnsupported, which matches errors.ErrUnsupported too.)
var ErrNotSimulated = errs.Unsupported("ggsim: kernel not simulated")

// kernelOf returns the simulated kernel for ggml's decision d, or an error wrapping
// ErrNotSimulated that names the kernel, the call and ggml's reason.
func kernelOf(d tiling.Decision, what func() string) (kernel, error) {
	k, ok := simulated[d.Kernel]
	if !ok {
		return kernel{}, fmt.Errorf("%w: ggml dispatches %s to %s (%s)", ErrNotSimulated, what(), d.Kernel, d.Reason)
	}
	return k, nil
}

func configure(opts []Option, d tiling.Decision) (*config, *Trace) {
	c := &config{}
	for _, o := range opts {
		o(c)
	}
	if !c.record {
		return c, nil
	}
	return c, &Trace{Kernel: d.Kernel}
}

// mmvqOptions are the options of the MMVQ simulation for c, recording into tr.
func mmvqOptions(t quant.Type, c *config, tr *Trace) (*mmvq.Options, error) {
	if _, ok := mmvq.KernelOf(t); !ok {
		return nil, fmt.Errorf("%w: ggml dispatches %v to mmvq, ggsim has no mul_mat_vec_q for it", ErrNotSimulated, t)
	}
	o := &mmvq.Options{Trace: c.laneByLane, Workers: c.workers}
	if tr != nil {
		o.Watch = func(e mmvq.Event) { tr.MMVQ = append(tr.MMVQ, e) }
		o.Counters = &tr.Counters
	}
	return o, nil
}

func mmvqMulMat(dev sim.Device, w Weights, b []float32, M int, c *config, tr *Trace) ([]float32, error) {
	o, err := mmvqOptions(w.Type, c, tr)
	if err != nil {
		return nil, err
	}
	return mmvq.MulMatOpts(dev, w.Type, w.Data, w.K, w.N, b, M, o)
}

func mmvqMulMatID(dev sim.Device, w Weights, b []float32, B1, T int, ids []int32, U int, c *config, tr *Trace) ([]float32, error) {
	o, err := mmvqOptions(w.Type, c, tr)
	if err != nil {
		return nil, err
	}
	return mmvq.MulMatIDOpts(dev, w.Type, w.Data, w.K, w.N, w.E, b, B1, T, ids, U, o)
}

func mmqMulMat(dev sim.Device, w Weights, b []float32, M int, c *config, tr *Trace) ([]float32, error) {
	p, err := mmq.MakePlan(dev, w.Type, w.K, w.N, M)
	if err != nil {
		return nil, err
	}
	return mmq.MulMat(dev, w.Type, w.Data, w.K, w.N, b, M, p)
}

func mmqMulMatID(dev sim.Device, w Weights, b []float32, B1, T int, ids []int32, U int, c *config, tr *Trace) ([]float32, error) {
	r, err := moe.Route(ids, T, U, w.E, B1)
	if err != nil {
		return nil, err
	}
	p, err := mmq.MakePlanID(dev, w.Type, w.K, w.N, r)
	if err != nil {
		return nil, err
	}
	return mmq.MulMatID(dev, w.Type, w.Data, w.K, w.N, w.E, b, B1, T, ids, U, p)
}
