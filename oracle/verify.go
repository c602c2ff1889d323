package oracle

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/ggsim/ggsim/ggmlsrc"
	"github.com/ggsim/ggsim/gguf/golden"
	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
	"github.com/ggsim/ggsim/sim/glu"
	"github.com/ggsim/ggsim/tiling"
)

// GGMLCommit is the ggml commit whose kernels ggsim models (ggmlsrc.Commit).
const GGMLCommit = ggmlsrc.Commit

// Status is a case's verdict.
type Status string

const (
	StatusBitExact    Status = "bit-exact"
	StatusMismatch    Status = "MISMATCH"
	StatusUnsupported Status = "UNSUPPORTED"
	StatusError       Status = "ERROR"
)

// CaseResult is the verdict on one golden case.
type CaseResult struct {
	File   string     `json:"file"`
	Index  int        `json:"case"`
	Op     golden.Op  `json:"op"`
	Type   string     `json:"type,omitempty"`
	Shape  string     `json:"shape,omitempty"`
	Kernel string     `json:"kernel,omitempty"` // what ggml dispatches to, and why
	Status Status     `json:"status"`
	Bits   *Compare   `json:"bits,omitempty"`
	FP64   *FP64Check `json:"fp64,omitempty"`
	Detail string     `json:"detail,omitempty"` // first divergence, or why unsupported / error
	// Sources is set when the file is from another ggml commit and was accepted because
	// its kernel fingerprint is the modelled commit's: it says so.
	Sources string `json:"sources,omitempty"`
}

// FP64Check is the second part of a verdict: the expected (GPU) output against the fp64
// truth. It passes if no element is outside its bound (MulMatRefOn / MulMatIDRefOn: the
// kernel bound of the path ggml takes on the file's device, MulMatRef's where that is
// not modelled). The error metrics are
// reported, not judged: their size for a correct kernel depends on the data (tiny
// activations have half-subnormal q8_1 scales and large relative errors).
type FP64Check struct {
	Errors
	Outside int `json:"outside"` // elements outside the bound
	N       int `json:"n"`       // elements compared
}

// OK reports whether the check passed.
func (c *FP64Check) OK() bool { return c.Outside == 0 }

// MarshalJSON writes the check with lower-case keys and a non-finite metric as null
// (JSON has no NaN or Inf; encoding/json would fail on them).
func (c FP64Check) MarshalJSON() ([]byte, error) {
	fin := func(x float64) *float64 {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil
		}
		return &x
	}
	return json.Marshal(struct {
		NMSE      *float64 `json:"nmse"`
		RelRMS    *float64 `json:"rel_rms"`
		MaxAbs    *float64 `json:"max_abs"`
		NonFinite int      `json:"non_finite"`
		Outside   int      `json:"outside"`
		N         int      `json:"n"`
	}{fin(c.NMSE), fin(c.RelRMS), fin(c.MaxAbs), c.NonFinite, c.Outside, c.N})
}

// OK reports whether the case passed: bit-exact, and within the fp64 bound where that
// was checked.
func (r *CaseResult) OK() bool {
	return r.Status == StatusBitExact && (r.FP64 == nil || r.FP64.OK())
}

// Line is the one-line report of r.
func (r *CaseResult) Line() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s case %d: %s", r.File, r.Index, r.Op)
	if r.Type != "" {
		fmt.Fprintf(&b, " %s", r.Type)
	}
	if r.Shape != "" {
		fmt.Fprintf(&b, " %s", r.Shape)
	}
	if r.Kernel != "" {
		fmt.Fprintf(&b, " [%s]", r.Kernel)
	}
	fmt.Fprintf(&b, ": %s", r.Status)
	if r.Bits != nil && r.Status == StatusMismatch {
		fmt.Fprintf(&b, " (%d/%d elements differ, max %d ulp)", r.Bits.Differing, r.Bits.N, r.Bits.MaxULP)
	}
	if r.FP64 != nil {
		fmt.Fprintf(&b, "; fp64 rel.rms %.3g", r.FP64.RelRMS)
		if r.FP64.Outside > 0 {
			fmt.Fprintf(&b, ", %d OUTSIDE the bound", r.FP64.Outside)
		}
	}
	if r.Detail != "" {
		fmt.Fprintf(&b, ": %s", r.Detail)
	}
	if r.Sources != "" {
		fmt.Fprintf(&b, " [%s]", r.Sources)
	}
	return b.String()
}

// DeviceOf returns the simulated device for a golden file's device: the catalog entry of
// that name (or else of that compute capability), with the file's SM count.
func DeviceOf(m golden.Meta) (sim.Device, error) {
	d, err := sim.Lookup(strings.TrimPrefix(m.Device.Name, "NVIDIA "))
	if err != nil || d.CC != m.Device.CC {
		found := false
		for _, c := range sim.Catalog() {
			if c.CC == m.Device.CC {
				d, found = c, true
				break
			}
		}
		if !found {
			return sim.Device{}, fmt.Errorf("%w: no device of compute capability %d in the catalog (file device %q)", ErrUnsupported, m.Device.CC, m.Device.Name)
		}
		d.Name = m.Device.Name
	}
	if m.Device.SMCount > 0 {
		d.SMCount = m.Device.SMCount
	}
	return d, nil
}

// Options control VerifyFile.
type Options struct {
	// SkipFP64 skips the fp64 part of the verdict (faster; bits only).
	SkipFP64 bool
}

// VerifyFile runs every case of f through impl and returns one result per case. It
// returns an error only if the file as a whole cannot be used.
func VerifyFile(f *golden.File, impl Impl, opt Options) ([]CaseResult, error) {
	name := f.Name
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		name = name[i+1:]
	}
	// A file whose kernel sources are not the modelled ones is not modelled at all; an
	// unknown device only matters to the GPU kernels (quantize cases are the CPU's
	// reference quantizers).
	sources, fileErr := CheckSources(f)
	dev, devErr := DeviceOf(f.Meta)
	res := make([]CaseResult, len(f.Cases))
	for i := range f.Cases {
		c := &f.Cases[i]
		r := &res[i]
		r.File, r.Index, r.Op, r.Sources = name, c.Index, c.Op, sources
		if c.Err == nil {
			r.Type = c.WeightType.String()
			r.Shape = shapeString(c)
		}
		switch {
		case c.Err != nil:
			r.Status, r.Detail = statusOf(c.Err), c.Err.Error()
		case fileErr != nil:
			r.Status, r.Detail = statusOf(fileErr), fileErr.Error()
		case devErr != nil && c.Op != golden.OpQuantize:
			r.Status, r.Detail = statusOf(devErr), devErr.Error()
		default:
			verifyCase(f, c, dev, impl, opt, r)
		}
	}
	return res, nil
}

// CheckSources decides whether f's outputs come from the kernel sources ggsim models. A
// file of GGMLCommit is accepted unless it records a kernel fingerprint (ggmlsrc) other
// than the modelled one (a modified tree). A file of another commit is accepted only if
// its fingerprint is the modelled one; then note says so. Otherwise the error wraps
// ErrUnsupported and names the files whose hashes differ, or says that the file records
// no fingerprint (or no per-file hashes).
func CheckSources(f *golden.File) (note string, err error) {
	k := f.Kernel
	want := ggmlsrc.ModelledFingerprint()
	same := commitMatches(f.GGMLCommit)
	switch {
	case k.Fingerprint == want && same:
		return "", nil
	case k.Fingerprint == want:
		return fmt.Sprintf("ggml %s accepted: its kernel sources are those of %s (fingerprint %s)", f.GGMLCommit, GGMLCommit, short(want)), nil
	case k.Fingerprint == "" && same:
		return "", nil
	case k.Fingerprint == "":
		return "", fmt.Errorf("%w: file is from ggml %q, ggsim models ggml %s, and no kernel fingerprint is recorded (%s; capture with --ggml-src) to show the kernel sources are the same",
			ErrUnsupported, f.GGMLCommit, GGMLCommit, golden.KeyKernelFingerprint)
	}
	what := fmt.Sprintf("file is from ggml %q and", f.GGMLCommit)
	if same {
		what = fmt.Sprintf("file says ggml %q, the modelled commit, but", f.GGMLCommit)
	}
	if k.Files == nil {
		return "", fmt.Errorf("%w: %s its kernel fingerprint %s is not that of ggml %s (%s), and no per-file hashes are recorded to say which files differ",
			ErrUnsupported, what, short(k.Fingerprint), GGMLCommit, short(want))
	}
	return "", fmt.Errorf("%w: %s its kernel sources differ from ggml %s's in %s",
		ErrUnsupported, what, GGMLCommit, strings.Join(ggmlsrc.Modelled().Diff(k.Files), ", "))
}

// short abbreviates a fingerprint for messages.
func short(fp string) string {
	if len(fp) > 12 {
		return fp[:12] + "…"
	}
	return fp
}

func commitMatches(c string) bool {
	c = strings.TrimSpace(c)
	if len(c) < 7 {
		return false
	}
	return strings.HasPrefix(c, GGMLCommit) || strings.HasPrefix(GGMLCommit, c)
}

// statusOf classifies an error with errors.Is, never by its text: UNSUPPORTED for
// anything that wraps errors.ErrUnsupported (not modelled) or an op the schema does not
// know, ERROR for everything else (bad files, bad data, failures).
func statusOf(err error) Status {
	if errors.Is(err, errors.ErrUnsupported) || errors.Is(err, golden.ErrUnknownOp) {
		return StatusUnsupported
	}
	return StatusError
}

func shapeString(c *golden.Case) string {
	s := c.Shape
	switch c.Op {
	case golden.OpMulMat, golden.OpMulMatGLU:
		return fmt.Sprintf("K=%d N=%d M=%d", s.K, s.N, s.M)
	case golden.OpMulMatID, golden.OpMulMatIDGLU:
		return fmt.Sprintf("K=%d N=%d E=%d B1=%d T=%d U=%d", s.K, s.N, s.E, s.B1, s.T, s.U)
	case golden.OpQuantize:
		return fmt.Sprintf("K=%d R=%d", s.K, s.R)
	}
	return ""
}

func verifyCase(f *golden.File, c *golden.Case, dev sim.Device, impl Impl, opt Options, r *CaseResult) {
	fail := func(err error) {
		r.Status, r.Detail = statusOf(err), err.Error()
	}
	tensors := make([]*golden.Tensor, len(c.Src))
	for i, s := range c.Src {
		t, err := f.Tensor(s)
		if err != nil {
			fail(err)
			return
		}
		tensors[i] = t
	}
	dstT, err := f.Tensor(c.Dst)
	if err != nil {
		fail(err)
		return
	}
	s := c.Shape
	switch c.Op {
	case golden.OpQuantize:
		verifyQuantize(c, tensors[0], dstT, r)
	case golden.OpMulMat:
		d := tiling.MulMat(dev, c.WeightType, tiling.Shape{K: s.K, N: s.N, M: s.M})
		r.Kernel = d.Kernel.String()
		b, err := tensors[1].F32()
		if err != nil {
			fail(err)
			return
		}
		want, err := dstT.F32()
		if err != nil {
			fail(err)
			return
		}
		got, err := impl.MulMat(dev, c.WeightType, tensors[0].Data, int(s.K), int(s.N), b, int(s.M))
		if err != nil {
			fail(fmt.Errorf("%s: %w", impl.Name(), err))
			return
		}
		judge(r, got, want, int(s.N))
		if loc, ok := impl.(Localizer); ok && r.Bits != nil && r.Bits.First >= 0 {
			r.Detail += "; " + loc.Locate(dev, c.WeightType, int(s.K), int(s.N), int(s.M), r.Bits.First)
		}
		if !opt.SkipFP64 {
			ref, err := MulMatRefOn(dev, c.WeightType, tensors[0].Data, int(s.K), int(s.N), b, int(s.M))
			if err != nil {
				fail(err)
				return
			}
			out, _ := ref.WithinBound(want)
			r.FP64 = &FP64Check{Errors: ErrorsOf(want, ref.Value), Outside: out, N: len(want)}
		}
	case golden.OpMulMatID:
		d := tiling.MulMatID(dev, c.WeightType, tiling.Shape{K: s.K, N: s.N, M: s.T, Experts: s.E})
		r.Kernel = d.Kernel.String()
		if err := f.CheckIDs(c); err != nil {
			fail(err)
			return
		}
		b, err := tensors[1].F32()
		if err != nil {
			fail(err)
			return
		}
		ids, err := tensors[2].I32()
		if err != nil {
			fail(err)
			return
		}
		want, err := dstT.F32()
		if err != nil {
			fail(err)
			return
		}
		got, err := impl.MulMatID(dev, c.WeightType, tensors[0].Data, int(s.K), int(s.N), int(s.E), b, int(s.B1), int(s.T), ids, int(s.U))
		if err != nil {
			fail(fmt.Errorf("%s: %w", impl.Name(), err))
			return
		}
		judge(r, got, want, int(s.N))
		if !opt.SkipFP64 {
			ref, err := MulMatIDRefOn(dev, c.WeightType, tensors[0].Data, int(s.K), int(s.N), int(s.E), b, int(s.B1), int(s.T), ids, int(s.U))
			if err != nil {
				fail(err)
				return
			}
			out, _ := ref.WithinBound(want)
			r.FP64 = &FP64Check{Errors: ErrorsOf(want, ref.Value), Outside: out, N: len(want)}
		}
	default: // GLU ops
		verifyGLU(f, c, tensors, dstT, dev, impl, r, fail)
	}
}

// judge fills r's bit comparison; n is the row count (dst[j*n+i]) for the report.
func judge(r *CaseResult, got, want []float32, n int) {
	if len(got) != len(want) {
		r.Status = StatusError
		r.Detail = fmt.Sprintf("result has %d elements, golden has %d", len(got), len(want))
		return
	}
	c := CompareBits(got, want)
	r.Bits = &c
	if c.BitExact() {
		r.Status = StatusBitExact
		return
	}
	r.Status = StatusMismatch
	i := c.First
	r.Detail = fmt.Sprintf("first divergence at element %d (row %d, column %d): got %g (%#08x), want %g (%#08x)",
		i, i%n, i/n, got[i], f32bits(got[i]), want[i], f32bits(want[i]))
}

// verifyQuantize checks a quantize case: ggsim's reference quantizer on each row of the
// source must give the golden bytes exactly. A type without a reference quantizer in
// ggsim is UNSUPPORTED; sizes that do not fit the case (a corrupt file) are an ERROR.
func verifyQuantize(c *golden.Case, src, dst *golden.Tensor, r *CaseResult) {
	fail := func(err error) { r.Status, r.Detail = statusOf(err), err.Error() }
	x, err := src.F32()
	if err != nil {
		fail(err)
		return
	}
	K, R := int(c.Shape.K), int(c.Shape.R)
	rs, err := c.WeightType.RowSize(int64(K))
	if err != nil {
		fail(fmt.Errorf("quantize case: %w", err))
		return
	}
	if K <= 0 || R <= 0 || len(x) != K*R {
		fail(fmt.Errorf("quantize case: source has %d values, the shape says %d rows of %d", len(x), R, K))
		return
	}
	if len(dst.Data) != int(rs)*R {
		fail(fmt.Errorf("quantize case: destination has %d bytes, %d rows of %d %v values need %d", len(dst.Data), R, K, c.WeightType, int(rs)*R))
		return
	}
	r.Kernel = "ggml_quantize_chunk (CPU reference quantizer)"
	got := make([]byte, int(rs)*R)
	for row := 0; row < R; row++ {
		if err := quant.QuantizeRowRef(c.WeightType, x[row*K:(row+1)*K], got[row*int(rs):(row+1)*int(rs)]); err != nil {
			fail(err)
			return
		}
	}
	if bytes.Equal(got, dst.Data) {
		r.Status = StatusBitExact
		return
	}
	r.Status = StatusMismatch
	for i := range got {
		if got[i] != dst.Data[i] {
			row, off := i/int(rs), i%int(rs)
			r.Detail = fmt.Sprintf("first differing byte %d: row %d, block %d, byte %d of the block: got %#02x, want %#02x",
				i, row, off/c.WeightType.TypeSize(), off%c.WeightType.TypeSize(), got[i], dst.Data[i])
			break
		}
	}
}

func f32bits(f float32) uint32 { return math.Float32bits(f) }

// verifyGLU runs a mul_mat_glu or mul_mat_id_glu case through impl's GLUImpl (an Impl
// without one has the case UNSUPPORTED) with the case's fusion setting (absent: allowed,
// ggml's default) and judges the bits. There is no fp64 check of GLU outputs.
func verifyGLU(f *golden.File, c *golden.Case, src []*golden.Tensor, dstT *golden.Tensor, dev sim.Device, impl Impl, r *CaseResult, fail func(error)) {
	s := c.Shape
	if c.Op.IsID() {
		r.Kernel = tiling.MulMatID(dev, c.WeightType, tiling.Shape{K: s.K, N: s.N, M: s.T, Experts: s.E}).Kernel.String()
	} else {
		r.Kernel = tiling.MulMat(dev, c.WeightType, tiling.Shape{K: s.K, N: s.N, M: s.M}).Kernel.String()
	}
	gi, ok := impl.(GLUImpl)
	if !ok {
		fail(fmt.Errorf("%w: op %s: %s computes no GLU", ErrUnsupported, c.Op, impl.Name()))
		return
	}
	g := glu.Spec{Op: glu.Op(c.GLU), Alpha: c.GLUAlpha, Limit: c.GLULimit}
	allowed := c.Fusion != golden.FusionDisabled
	b, err := src[2].F32()
	if err != nil {
		fail(err)
		return
	}
	want, err := dstT.F32()
	if err != nil {
		fail(err)
		return
	}
	var got []float32
	if c.Op.IsID() {
		if err := f.CheckIDs(c); err != nil {
			fail(err)
			return
		}
		ids, err := src[3].I32()
		if err != nil {
			fail(err)
			return
		}
		got, err = gi.MulMatIDGLU(dev, c.WeightType, src[0].Data, src[1].Data, int(s.K), int(s.N), int(s.E), b, int(s.B1), int(s.T), ids, int(s.U), g, allowed)
		if err != nil {
			fail(fmt.Errorf("%s: %w", impl.Name(), err))
			return
		}
	} else {
		got, err = gi.MulMatGLU(dev, c.WeightType, src[0].Data, src[1].Data, int(s.K), int(s.N), b, int(s.M), g, allowed)
		if err != nil {
			fail(fmt.Errorf("%s: %w", impl.Name(), err))
			return
		}
	}
	judge(r, got, want, int(s.N))
}
