package golden

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/ggsim/ggsim/ggmlsrc"
	"github.com/ggsim/ggsim/gguf"
	"github.com/ggsim/ggsim/quant"
)

// SchemaVersion is the golden.version this package reads and writes.
const SchemaVersion = 1

// Metadata keys of the schema.
const (
	KeyArchitecture = "general.architecture" // always Architecture
	KeyVersion      = "golden.version"
	KeyProducer     = "golden.producer"
	KeyDeviceName   = "golden.device.name"
	KeyDeviceCC     = "golden.device.cc"
	KeyDeviceSMs    = "golden.device.sm_count"
	KeyDriver       = "golden.device.driver"
	KeyCommit       = "golden.ggml.commit"
	KeyBuild        = "golden.ggml.build"
	KeyCaseCount    = "golden.case.count"

	// Optional: the fingerprint of the ggml kernel sources (package ggmlsrc) and the
	// per-file hashes it is computed from ("PATH SHA256" lines, sorted by path). Files
	// require the fingerprint and must give it.
	KeyKernelFingerprint = "golden.ggml.kernel_fingerprint"
	KeyKernelFiles       = "golden.ggml.kernel_files"

	Architecture = "golden"
)

// Op is a case's operation, as golden.case.{i}.op spells it.
type Op string

// The operations of schema version 1.
const (
	OpMulMat      Op = "mul_mat"
	OpMulMatID    Op = "mul_mat_id"
	OpQuantize    Op = "quantize"
	OpMulMatGLU   Op = "mul_mat_glu"
	OpMulMatIDGLU Op = "mul_mat_id_glu"
)

// Known reports whether o is one of the schema's operations.
func (o Op) Known() bool { return o.NumSrc() > 0 }

// NumSrc returns the number of source tensors of o (0 for an unknown op): mul_mat a, b;
// mul_mat_id as, b, ids; quantize x; mul_mat_glu gate, up, b; mul_mat_id_glu gate, up, b, ids.
func (o Op) NumSrc() int {
	switch o {
	case OpQuantize:
		return 1
	case OpMulMat:
		return 2
	case OpMulMatID, OpMulMatGLU:
		return 3
	case OpMulMatIDGLU:
		return 4
	}
	return 0
}

// IsGLU reports whether o carries a GLU (mul_mat_glu, mul_mat_id_glu).
func (o Op) IsGLU() bool { return o == OpMulMatGLU || o == OpMulMatIDGLU }

// IsID reports whether o routes through expert ids (mul_mat_id, mul_mat_id_glu).
func (o Op) IsID() bool { return o == OpMulMatID || o == OpMulMatIDGLU }

// The GLU kinds and fusion settings of GLU cases.
const (
	GLUSwiGLU    = "swiglu"     // ggml_swiglu_split(gate, up)
	GLUGeGLU     = "geglu"      // ggml_geglu_split(gate, up)
	GLUSwiGLUOAI = "swiglu_oai" // ggml_swiglu_oai(gate, up, alpha, limit)

	FusionAllowed  = "allowed"
	FusionDisabled = "disabled" // GGML_CUDA_DISABLE_FUSION=1
)

// ErrUnknownOp is wrapped by the Err of a case whose op this package does not know.
var ErrUnknownOp = errors.New("unknown op")

// Device is the GPU that computed the outputs.
type Device struct {
	Name    string // golden.device.name, e.g. "NVIDIA H200"
	CC      int    // golden.device.cc, compute capability as ggml writes it: 900 for 9.0
	SMCount int    // golden.device.sm_count
	Driver  string // golden.device.driver
}

// Meta is a golden file's provenance: who computed the outputs, on what, with which ggml.
type Meta struct {
	Producer   string // golden.producer
	Device     Device
	GGMLCommit string // golden.ggml.commit
	GGMLBuild  string // golden.ggml.build
}

// Kernel is the optional record of the ggml kernel sources the outputs were computed
// with (package ggmlsrc).
type Kernel struct {
	Fingerprint string      // golden.ggml.kernel_fingerprint, "" if absent
	Files       ggmlsrc.Set // golden.ggml.kernel_files, nil if absent
}

// Shape holds a valid case's dimensions, named as in the schema. Which are set depends on
// the op (the others are 0):
//
//	mul_mat, mul_mat_glu:       K, N, M            a [K,N], b [K,M], dst [N,M]
//	mul_mat_id, mul_mat_id_glu: K, N, E, B1, T, U  as [K,N,E], b [K,B1,T], ids [U,T], dst [N,U,T]
//	quantize:                   K, R               src f32 [K,R], dst [K,R]
type Shape struct {
	K, N, M, E, B1, T, U, R int64
}

// Case is one golden case. A case with Err == nil has a known op, the right number of
// sources, existing tensors of the right types, shapes consistent per the schema table,
// and GLU parameters where the op needs them; its Shape and WeightType are filled in.
// Expert ids are checked only by File.CheckIDs (they are data).
type Case struct {
	Index int // i of golden.case.{i}
	Op    Op  // as the file spells it, known or not
	Src   []string
	Dst   string

	GLU          string  // golden.case.{i}.glu, "" if absent
	GLUAlpha     float32 // golden.case.{i}.glu_alpha (swiglu_oai)
	GLULimit     float32 // golden.case.{i}.glu_limit (swiglu_oai)
	HasGLUParams bool    // glu_alpha and glu_limit are present
	Fusion       string  // golden.case.{i}.fusion, "" if absent

	Shape Shape
	// WeightType is the type of the quantized operand: a, as or gate (and up) for the
	// matmuls, dst for quantize.
	WeightType quant.Type

	// Err says why the case cannot be run: an unknown op (wrapping ErrUnknownOp) or the
	// first problem found. It is a *CaseError.
	Err error
}

// CaseError is a problem with one case: the file, the case index and what is wrong.
type CaseError struct {
	File  string // the file's name, "" if none was given
	Index int
	Op    Op
	Msg   string
	Err   error // ErrUnknownOp or nil
}

func (e *CaseError) Error() string {
	s := "golden: "
	if e.File != "" {
		s += e.File + ": "
	}
	s += fmt.Sprintf("case %d", e.Index)
	if e.Op != "" {
		s += fmt.Sprintf(" (%s)", e.Op)
	}
	return s + ": " + e.Msg
}

func (e *CaseError) Unwrap() error { return e.Err }

// File is an open golden file.
type File struct {
	Name    string // the path Open was given, or the name New was given
	Version uint32 // golden.version
	Meta
	// Kernel is the fingerprint of the file's ggml kernel sources, if it records one.
	Kernel Kernel
	// Cases are all golden.case.count cases, in order (Cases[i].Index == i), valid or not.
	Cases []Case
	// GGUF is the underlying GGUF file, for keys beyond the schema.
	GGUF *gguf.File
}

// Open reads the golden file at path: the GGUF structure, the schema's file keys (an error
// if one is missing, of the wrong type, or golden.version is not SchemaVersion) and every
// case (problems of a case go into its Err, not into the returned error). Close it when done.
func Open(path string) (*File, error) {
	g, err := gguf.Open(path)
	if err != nil {
		return nil, fmt.Errorf("golden: %w", err)
	}
	f, err := fromGGUF(g, path)
	if err != nil {
		g.Close()
		return nil, err
	}
	return f, nil
}

// New reads a golden file of size bytes from r, as Open does; name is used in messages.
func New(r io.ReaderAt, size int64, name string) (*File, error) {
	g, err := gguf.Read(r, size)
	if err != nil {
		if name != "" {
			return nil, fmt.Errorf("golden: %s: %w", name, err)
		}
		return nil, fmt.Errorf("golden: %w", err)
	}
	return fromGGUF(g, name)
}

// Close closes the file.
func (f *File) Close() error { return f.GGUF.Close() }

// Err returns the errors of all invalid cases joined, or nil if every case is valid.
func (f *File) Err() error {
	var errs []error
	for _, c := range f.Cases {
		if c.Err != nil {
			errs = append(errs, c.Err)
		}
	}
	return errors.Join(errs...)
}

func (f *File) fileErr(format string, args ...any) error {
	s := "golden: "
	if f.Name != "" {
		s += f.Name + ": "
	}
	return errors.New(s + fmt.Sprintf(format, args...))
}

var caseKeyRe = regexp.MustCompile(`^golden\.case\.([0-9]+)\.`)

func fromGGUF(g *gguf.File, name string) (*File, error) {
	f := &File{Name: name, GGUF: g}
	str := func(key string) (string, error) {
		s, err := gguf.Get[string](g, key)
		if err != nil {
			return "", f.fileErr("%v", err)
		}
		return s, nil
	}
	u32 := func(key string) (uint32, error) {
		x, err := gguf.Get[uint32](g, key)
		if err != nil {
			return 0, f.fileErr("%v", err)
		}
		return x, nil
	}
	arch, err := str(KeyArchitecture)
	if err != nil {
		return nil, err
	}
	if arch != Architecture {
		return nil, f.fileErr("%s is %q, not %q: not a golden file", KeyArchitecture, arch, Architecture)
	}
	if f.Version, err = u32(KeyVersion); err != nil {
		return nil, err
	}
	if f.Version != SchemaVersion {
		return nil, f.fileErr("golden schema version %d is not supported (this reader knows version %d)", f.Version, SchemaVersion)
	}
	var cc, sms, count uint32
	for _, p := range []struct {
		key string
		s   *string
		u   *uint32
	}{
		{KeyProducer, &f.Producer, nil},
		{KeyDeviceName, &f.Device.Name, nil},
		{KeyDeviceCC, nil, &cc},
		{KeyDeviceSMs, nil, &sms},
		{KeyDriver, &f.Device.Driver, nil},
		{KeyCommit, &f.GGMLCommit, nil},
		{KeyBuild, &f.GGMLBuild, nil},
		{KeyCaseCount, nil, &count},
	} {
		if p.s != nil {
			*p.s, err = str(p.key)
		} else {
			*p.u, err = u32(p.key)
		}
		if err != nil {
			return nil, err
		}
	}
	if cc > math.MaxInt32 || sms > math.MaxInt32 {
		return nil, f.fileErr("absurd device: cc %d, sm_count %d", cc, sms)
	}
	f.Device.CC, f.Device.SMCount = int(cc), int(sms)
	if f.Kernel, err = readKernel(g); err != nil {
		return nil, f.fileErr("%v", err)
	}
	// Every case has at least op, src and dst keys: bound the count before allocating.
	if uint64(count)*3 > uint64(len(g.KV)) {
		return nil, f.fileErr("%s is %d but the file has only %d keys (3 per case at least)", KeyCaseCount, count, len(g.KV))
	}
	for _, kv := range g.KV {
		if m := caseKeyRe.FindStringSubmatch(kv.Key); m != nil {
			i, err := strconv.ParseUint(m[1], 10, 64)
			if err != nil || i >= uint64(count) || m[1] != strconv.FormatUint(i, 10) {
				return nil, f.fileErr("key %q names a case outside 0..%d (%s = %d)", kv.Key, int64(count)-1, KeyCaseCount, count)
			}
		}
	}
	f.Cases = make([]Case, count)
	for i := range f.Cases {
		f.Cases[i] = f.readCase(i)
	}
	return f, nil
}

// readKernel reads the optional kernel keys.
func readKernel(g *gguf.File) (Kernel, error) {
	var k Kernel
	hasFP := false
	if v, ok := g.Lookup(KeyKernelFingerprint); ok {
		if k.Fingerprint, ok = gguf.As[string](v); !ok {
			return k, fmt.Errorf("key %q is %v, want str", KeyKernelFingerprint, v.Type())
		}
		hasFP = true
	}
	var lines []string
	if _, ok := g.Lookup(KeyKernelFiles); ok {
		var err error
		if lines, err = gguf.GetArray[string](g, KeyKernelFiles); err != nil {
			return k, err
		}
		if lines == nil {
			lines = []string{}
		}
	}
	return k, checkKernel(&k, hasFP, lines)
}

// checkKernel checks a fingerprint (if hasFP) and the lines of the files it is said to
// be computed from (nil if absent), and fills k.Files.
func checkKernel(k *Kernel, hasFP bool, lines []string) error {
	if hasFP && !ggmlsrc.IsHex256(k.Fingerprint) {
		return fmt.Errorf("%s %q is not 64 lowercase hex digits", KeyKernelFingerprint, k.Fingerprint)
	}
	if lines == nil {
		return nil
	}
	if !hasFP {
		return fmt.Errorf("%s without %s", KeyKernelFiles, KeyKernelFingerprint)
	}
	s, err := ggmlsrc.ParseLines(lines)
	if err != nil {
		return fmt.Errorf("%s: %v", KeyKernelFiles, err)
	}
	if fp := s.Fingerprint(); fp != k.Fingerprint {
		return fmt.Errorf("%s %s is not the fingerprint of %s (%s)", KeyKernelFingerprint, k.Fingerprint, KeyKernelFiles, fp)
	}
	k.Files = s
	return nil
}

// readCase reads the keys of case i and validates it.
func (f *File) readCase(i int) Case {
	c := Case{Index: i}
	key := func(k string) string { return fmt.Sprintf("golden.case.%d.%s", i, k) }
	fail := func(format string, args ...any) Case {
		c.Err = &CaseError{File: f.Name, Index: i, Op: c.Op, Msg: fmt.Sprintf(format, args...)}
		return c
	}
	op, err := gguf.Get[string](f.GGUF, key("op"))
	if err != nil {
		return fail("%v", err)
	}
	c.Op = Op(op)
	if c.Src, err = gguf.GetArray[string](f.GGUF, key("src")); err != nil {
		return fail("%v", err)
	}
	c.Src = append([]string(nil), c.Src...)
	if c.Dst, err = gguf.Get[string](f.GGUF, key("dst")); err != nil {
		return fail("%v", err)
	}
	if v, ok := f.GGUF.Lookup(key("glu")); ok {
		if c.GLU, ok = gguf.As[string](v); !ok {
			return fail("key %q is %v, want str", key("glu"), v.Type())
		}
	}
	if v, ok := f.GGUF.Lookup(key("fusion")); ok {
		if c.Fusion, ok = gguf.As[string](v); !ok {
			return fail("key %q is %v, want str", key("fusion"), v.Type())
		}
	}
	va, okA := f.GGUF.Lookup(key("glu_alpha"))
	vl, okL := f.GGUF.Lookup(key("glu_limit"))
	if okA != okL {
		return fail("glu_alpha and glu_limit must be given together")
	}
	if okA {
		var ok1, ok2 bool
		c.GLUAlpha, ok1 = gguf.As[float32](va)
		c.GLULimit, ok2 = gguf.As[float32](vl)
		if !ok1 || !ok2 {
			return fail("glu_alpha and glu_limit must be f32, are %v and %v", va.Type(), vl.Type())
		}
		c.HasGLUParams = true
	}
	if !c.Op.Known() {
		c.Err = &CaseError{File: f.Name, Index: i, Op: c.Op, Msg: fmt.Sprintf("op %q is not supported (schema version %d knows mul_mat, mul_mat_id, quantize, mul_mat_glu, mul_mat_id_glu)", op, SchemaVersion), Err: ErrUnknownOp}
		return c
	}
	if msg := validate(&c, f.GGUF.Tensor); msg != "" {
		return fail("%s", msg)
	}
	return c
}

// validate checks a case of known op against the tensors lookup finds and fills Shape and
// WeightType; it returns what is wrong, or "".
func validate(c *Case, lookup func(string) (gguf.TensorInfo, bool)) string {
	op := c.Op
	if len(c.Src) != op.NumSrc() {
		return fmt.Sprintf("%d sources %q, %s takes %d", len(c.Src), c.Src, op, op.NumSrc())
	}
	for _, s := range c.Src {
		if s == c.Dst {
			return fmt.Sprintf("tensor %q is both a source and the destination", s)
		}
	}
	// GLU keys.
	if op.IsGLU() {
		switch c.GLU {
		case GLUSwiGLU, GLUGeGLU:
			if c.HasGLUParams {
				return fmt.Sprintf("glu_alpha/glu_limit given for glu %q (only swiglu_oai takes them)", c.GLU)
			}
		case GLUSwiGLUOAI:
			if !c.HasGLUParams {
				return "glu swiglu_oai needs glu_alpha and glu_limit"
			}
		case "":
			return "missing glu (swiglu, geglu or swiglu_oai)"
		default:
			return fmt.Sprintf("unknown glu %q (want swiglu, geglu or swiglu_oai)", c.GLU)
		}
		switch c.Fusion {
		case "", FusionAllowed, FusionDisabled:
		default:
			return fmt.Sprintf("unknown fusion %q (want allowed or disabled)", c.Fusion)
		}
	} else if c.GLU != "" || c.HasGLUParams || c.Fusion != "" {
		return fmt.Sprintf("GLU keys (glu, glu_alpha, glu_limit, fusion) on a %s case", op)
	}

	type ten struct {
		role string
		info gguf.TensorInfo
		ne   [4]int64
	}
	get := func(role, name string) (ten, string) {
		t, ok := lookup(name)
		if !ok {
			return ten{}, fmt.Sprintf("%s tensor %q does not exist", role, name)
		}
		return ten{role, t, t.NE()}, ""
	}
	var ts []ten
	for k, name := range append(append([]string(nil), c.Src...), c.Dst) {
		role := "dst"
		if k < len(c.Src) {
			role = srcRoles[op][k]
		}
		t, msg := get(role, name)
		if msg != "" {
			return msg
		}
		ts = append(ts, t)
	}
	wantType := func(t ten, want quant.Type) string {
		if t.info.Type != want {
			return fmt.Sprintf("%s %q is %v, want %v", t.role, t.info.Name, t.info.Type, want)
		}
		return ""
	}
	wantQuant := func(t ten) string {
		if tr, _ := t.info.Type.Traits(); !tr.Quantized {
			return fmt.Sprintf("%s %q is %v, want a quantized type", t.role, t.info.Name, t.info.Type)
		}
		return ""
	}
	wantShape := func(t ten, want [4]int64, form string) string {
		if t.ne != want {
			return fmt.Sprintf("%s %q has shape %v, want %s = %v", t.role, t.info.Name, t.info.Dims, form, want[:strings.Count(form, ",")+1])
		}
		return ""
	}
	first := func(msgs ...string) string {
		for _, m := range msgs {
			if m != "" {
				return m
			}
		}
		return ""
	}
	positive := func(names string, xs ...int64) string {
		for _, x := range xs {
			if x <= 0 {
				return fmt.Sprintf("empty case: %s = %v", names, xs)
			}
		}
		return ""
	}

	switch op {
	case OpQuantize:
		x, dst := ts[0], ts[1]
		K, R := x.ne[0], x.ne[1]
		c.Shape = Shape{K: K, R: R}
		c.WeightType = dst.info.Type
		return first(wantType(x, quant.F32), wantQuant(dst), positive("K, R", K, R),
			wantShape(x, [4]int64{K, R, 1, 1}, "[K, R]"), wantShape(dst, [4]int64{K, R, 1, 1}, "[K, R] like the source"))

	case OpMulMat, OpMulMatGLU:
		ws, b, dst := ts[:len(ts)-2], ts[len(ts)-2], ts[len(ts)-1]
		K, N, M := ws[0].ne[0], ws[0].ne[1], b.ne[1]
		c.Shape = Shape{K: K, N: N, M: M}
		c.WeightType = ws[0].info.Type
		for _, w := range ws {
			if m := first(wantQuant(w), wantShape(w, [4]int64{K, N, 1, 1}, "[K, N]")); m != "" {
				return m
			}
		}
		return first(positive("K, N, M", K, N, M), wantType(b, quant.F32), wantShape(b, [4]int64{K, M, 1, 1}, "[K, M]"),
			wantType(dst, quant.F32), wantShape(dst, [4]int64{N, M, 1, 1}, "[N, M]"))

	default: // OpMulMatID, OpMulMatIDGLU
		ws, b, ids, dst := ts[:len(ts)-3], ts[len(ts)-3], ts[len(ts)-2], ts[len(ts)-1]
		K, N, E := ws[0].ne[0], ws[0].ne[1], ws[0].ne[2]
		B1, T, U := b.ne[1], b.ne[2], ids.ne[0]
		c.Shape = Shape{K: K, N: N, E: E, B1: B1, T: T, U: U}
		c.WeightType = ws[0].info.Type
		for _, w := range ws {
			if m := first(wantQuant(w), wantShape(w, [4]int64{K, N, E, 1}, "[K, N, E]")); m != "" {
				return m
			}
		}
		if m := first(positive("K, N, E, B1, T, U", K, N, E, B1, T, U),
			wantType(b, quant.F32), wantShape(b, [4]int64{K, B1, T, 1}, "[K, B1, T]"),
			wantType(ids, quant.I32), wantShape(ids, [4]int64{U, T, 1, 1}, "[U, T]"),
			wantType(dst, quant.F32), wantShape(dst, [4]int64{N, U, T, 1}, "[N, U, T]")); m != "" {
			return m
		}
		if U%B1 != 0 {
			return fmt.Sprintf("b's B1 = %d does not divide ids' U = %d (ggml_mul_mat_id broadcasts b over the U slots)", B1, U)
		}
		return ""
	}
}

var srcRoles = map[Op][]string{
	OpMulMat:      {"a", "b"},
	OpMulMatID:    {"as", "b", "ids"},
	OpQuantize:    {"src"},
	OpMulMatGLU:   {"gate", "up", "b"},
	OpMulMatIDGLU: {"gate", "up", "b", "ids"},
}

// Tensor is a tensor's description and bytes.
type Tensor struct {
	Name string
	Type quant.Type
	NE   [4]int64 // ggml's ne, padded with 1s
	Dims []int64  // the dims as stored
	Data []byte   // exactly the tensor's bytes (row-major in ggml order)
}

// Tensor reads the tensor called name.
func (f *File) Tensor(name string) (*Tensor, error) {
	ti, ok := f.GGUF.Tensor(name)
	if !ok {
		return nil, f.fileErr("no tensor %q", name)
	}
	data, err := f.GGUF.TensorData(name)
	if err != nil {
		return nil, f.fileErr("%v", err)
	}
	return &Tensor{Name: name, Type: ti.Type, NE: ti.NE(), Dims: ti.Dims, Data: data}, nil
}

// F32 decodes an f32 tensor's data.
func (t *Tensor) F32() ([]float32, error) {
	if t.Type != quant.F32 {
		return nil, fmt.Errorf("golden: tensor %q is %v, not f32", t.Name, t.Type)
	}
	v := make([]float32, len(t.Data)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(t.Data[4*i:]))
	}
	return v, nil
}

// I32 decodes an i32 tensor's data.
func (t *Tensor) I32() ([]int32, error) {
	if t.Type != quant.I32 {
		return nil, fmt.Errorf("golden: tensor %q is %v, not i32", t.Name, t.Type)
	}
	v := make([]int32, len(t.Data)/4)
	for i := range v {
		v[i] = int32(binary.LittleEndian.Uint32(t.Data[4*i:]))
	}
	return v, nil
}

// CheckIDs reads the expert ids of case c (mul_mat_id or mul_mat_id_glu, valid) and returns
// an error naming the first id outside [0, E), with its slot and token.
func (f *File) CheckIDs(c *Case) error {
	if c.Err != nil {
		return c.Err
	}
	if !c.Op.IsID() {
		return &CaseError{File: f.Name, Index: c.Index, Op: c.Op, Msg: "has no expert ids"}
	}
	t, err := f.Tensor(c.Src[len(c.Src)-1])
	if err != nil {
		return err
	}
	ids, err := t.I32()
	if err != nil {
		return err
	}
	if msg := checkIDs(ids, c.Shape); msg != "" {
		return &CaseError{File: f.Name, Index: c.Index, Op: c.Op, Msg: fmt.Sprintf("ids %q: %s", t.Name, msg)}
	}
	return nil
}

func checkIDs(ids []int32, s Shape) string {
	for k, id := range ids {
		if id < 0 || int64(id) >= s.E {
			return fmt.Sprintf("id %d at slot %d of token %d is outside [0, %d)", id, int64(k)%s.U, int64(k)/s.U, s.E)
		}
	}
	return ""
}

// OpenValid opens path like Open, then fails unless every case is valid and every expert id
// is in range.
func OpenValid(path string) (*File, error) {
	f, err := Open(path)
	if err != nil {
		return nil, err
	}
	if err := f.Err(); err != nil {
		f.Close()
		return nil, err
	}
	for i := range f.Cases {
		if f.Cases[i].Op.IsID() {
			if err := f.CheckIDs(&f.Cases[i]); err != nil {
				f.Close()
				return nil, err
			}
		}
	}
	return f, nil
}
