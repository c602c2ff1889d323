package golden

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/ggsim/ggsim/ggmlsrc"
	"github.com/ggsim/ggsim/gguf"
	"github.com/ggsim/ggsim/quant"
)

// Writer builds a golden file: the schema's file keys from a Meta, extra keys, tensors and
// cases. Each case is validated as a reader validates it (including expert ids) when it is
// added, so a Writer cannot produce a file whose cases a reader rejects.
//
// The metadata order is: general.architecture, golden.version, the Meta keys, the extra keys
// in the order added, golden.case.count, then each case's op, src, dst, glu, fusion,
// glu_alpha, glu_limit. Tensors are stored in the order added.
type Writer struct {
	meta    Meta
	kernel  Kernel // the kernel keys' values as added, checked together when written
	hasFP   bool
	files   []string
	extra   []gguf.KV
	keys    map[string]bool
	tensors []wtensor
	byName  map[string]int
	cases   []Case
}

type wtensor struct {
	info gguf.TensorInfo
	data []byte
}

// NewWriter returns a Writer for a file with the provenance m.
func NewWriter(m Meta) *Writer {
	return &Writer{meta: m, keys: map[string]bool{}, byName: map[string]int{}}
}

// Add adds an extra metadata key (for example golden.slice.source). The schema's own keys,
// golden.case.* and general.alignment are refused.
func (w *Writer) Add(key string, v gguf.Value) error {
	switch key {
	case KeyArchitecture, KeyVersion, KeyProducer, KeyDeviceName, KeyDeviceCC, KeyDeviceSMs,
		KeyDriver, KeyCommit, KeyBuild, KeyCaseCount, gguf.KeyAlignment:
		return fmt.Errorf("golden: key %q is written by the Writer itself", key)
	}
	if strings.HasPrefix(key, "golden.case.") {
		return fmt.Errorf("golden: key %q: case keys are written by AddCase", key)
	}
	if key == "" || w.keys[key] {
		return fmt.Errorf("golden: empty or duplicate key %q", key)
	}
	if !v.IsValid() {
		return fmt.Errorf("golden: key %q: invalid value", key)
	}
	switch key {
	case KeyKernelFingerprint:
		fp, ok := gguf.As[string](v)
		if !ok || !ggmlsrc.IsHex256(fp) {
			return fmt.Errorf("golden: key %q must be a str of 64 lowercase hex digits, is %v", key, v)
		}
		w.kernel.Fingerprint, w.hasFP = fp, true
	case KeyKernelFiles:
		lines, ok := gguf.AsSlice[string](v)
		if !ok {
			return fmt.Errorf("golden: key %q must be an array of str, is %v", key, v.Type())
		}
		if _, err := ggmlsrc.ParseLines(lines); err != nil {
			return fmt.Errorf("golden: key %q: %v", key, err)
		}
		w.files = append([]string{}, lines...)
	}
	w.keys[key] = true
	w.extra = append(w.extra, gguf.KV{Key: key, Value: v})
	return nil
}

// SetKernel records the kernel sources s (from ggmlsrc.HashDir) as
// golden.ggml.kernel_fingerprint and golden.ggml.kernel_files.
func (w *Writer) SetKernel(s ggmlsrc.Set) error {
	s, err := ggmlsrc.NewSet(s)
	if err != nil {
		return fmt.Errorf("golden: kernel sources: %w", err)
	}
	if err := w.Add(KeyKernelFingerprint, gguf.ScalarOf(s.Fingerprint())); err != nil {
		return err
	}
	return w.Add(KeyKernelFiles, gguf.ArrayOf(s.Lines()))
}

// AddTensor adds a tensor (dims in ggml order, stored as given); data is kept, not copied.
// The checks are gguf.Writer.AddTensor's.
func (w *Writer) AddTensor(name string, typ quant.Type, dims []int64, data []byte) error {
	if _, dup := w.byName[name]; dup {
		return fmt.Errorf("golden: duplicate tensor %q", name)
	}
	// Let gguf check the tensor now rather than at WriteTo.
	if err := gguf.NewWriter().AddTensor(name, typ, dims, data); err != nil {
		return err
	}
	w.byName[name] = len(w.tensors)
	w.tensors = append(w.tensors, wtensor{gguf.TensorInfo{Name: name, Type: typ, Dims: append([]int64(nil), dims...), Size: int64(len(data))}, data})
	return nil
}

// AddF32 adds an f32 tensor holding v.
func (w *Writer) AddF32(name string, dims []int64, v []float32) error {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return w.AddTensor(name, quant.F32, dims, b)
}

// AddI32 adds an i32 tensor holding v.
func (w *Writer) AddI32(name string, dims []int64, v []int32) error {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], uint32(x))
	}
	return w.AddTensor(name, quant.I32, dims, b)
}

// AddCase validates c against the tensors added so far (op known, sources, types, shapes,
// GLU keys, expert ids in range) and appends it; it returns the case's index. c.Index,
// c.Shape, c.WeightType and c.Err are ignored (they are derived).
func (w *Writer) AddCase(c Case) (int, error) {
	i := len(w.cases)
	c.Index, c.Err, c.Shape, c.WeightType = i, nil, Shape{}, 0
	c.Src = append([]string(nil), c.Src...)
	fail := func(msg string) (int, error) {
		return 0, &CaseError{Index: i, Op: c.Op, Msg: msg}
	}
	if !c.Op.Known() {
		return fail(fmt.Sprintf("op %q is not supported", c.Op))
	}
	lookup := func(name string) (gguf.TensorInfo, bool) {
		k, ok := w.byName[name]
		if !ok {
			return gguf.TensorInfo{}, false
		}
		return w.tensors[k].info, true
	}
	if msg := validate(&c, lookup); msg != "" {
		return fail(msg)
	}
	if c.Op.IsID() {
		t := w.tensors[w.byName[c.Src[len(c.Src)-1]]]
		ids := make([]int32, len(t.data)/4)
		for k := range ids {
			ids[k] = int32(binary.LittleEndian.Uint32(t.data[4*k:]))
		}
		if msg := checkIDs(ids, c.Shape); msg != "" {
			return fail(fmt.Sprintf("ids %q: %s", t.info.Name, msg))
		}
	}
	w.cases = append(w.cases, c)
	return i, nil
}

// gguf builds the GGUF writer.
func (w *Writer) gguf() (*gguf.Writer, error) {
	g := gguf.NewWriter()
	m := w.meta
	kvs := []gguf.KV{
		{Key: KeyArchitecture, Value: gguf.ScalarOf(Architecture)},
		{Key: KeyVersion, Value: gguf.ScalarOf(uint32(SchemaVersion))},
		{Key: KeyProducer, Value: gguf.ScalarOf(m.Producer)},
		{Key: KeyDeviceName, Value: gguf.ScalarOf(m.Device.Name)},
		{Key: KeyDeviceCC, Value: gguf.ScalarOf(uint32(m.Device.CC))},
		{Key: KeyDeviceSMs, Value: gguf.ScalarOf(uint32(m.Device.SMCount))},
		{Key: KeyDriver, Value: gguf.ScalarOf(m.Device.Driver)},
		{Key: KeyCommit, Value: gguf.ScalarOf(m.GGMLCommit)},
		{Key: KeyBuild, Value: gguf.ScalarOf(m.GGMLBuild)},
	}
	if m.Device.CC < 0 || int64(m.Device.CC) > math.MaxUint32 || m.Device.SMCount < 0 || int64(m.Device.SMCount) > math.MaxUint32 {
		return nil, fmt.Errorf("golden: device cc %d / sm_count %d out of range", m.Device.CC, m.Device.SMCount)
	}
	if w.files != nil || w.hasFP {
		k := Kernel{Fingerprint: w.kernel.Fingerprint}
		if err := checkKernel(&k, w.hasFP, w.files); err != nil {
			return nil, fmt.Errorf("golden: %v", err)
		}
	}
	kvs = append(kvs, w.extra...)
	kvs = append(kvs, gguf.KV{Key: KeyCaseCount, Value: gguf.ScalarOf(uint32(len(w.cases)))})
	for _, c := range w.cases {
		key := func(k string) string { return fmt.Sprintf("golden.case.%d.%s", c.Index, k) }
		kvs = append(kvs,
			gguf.KV{Key: key("op"), Value: gguf.ScalarOf(string(c.Op))},
			gguf.KV{Key: key("src"), Value: gguf.ArrayOf(c.Src)},
			gguf.KV{Key: key("dst"), Value: gguf.ScalarOf(c.Dst)})
		if c.GLU != "" {
			kvs = append(kvs, gguf.KV{Key: key("glu"), Value: gguf.ScalarOf(c.GLU)})
		}
		if c.Fusion != "" {
			kvs = append(kvs, gguf.KV{Key: key("fusion"), Value: gguf.ScalarOf(c.Fusion)})
		}
		if c.HasGLUParams {
			kvs = append(kvs,
				gguf.KV{Key: key("glu_alpha"), Value: gguf.ScalarOf(c.GLUAlpha)},
				gguf.KV{Key: key("glu_limit"), Value: gguf.ScalarOf(c.GLULimit)})
		}
	}
	for _, kv := range kvs {
		if err := g.Add(kv.Key, kv.Value); err != nil {
			return nil, err
		}
	}
	for _, t := range w.tensors {
		if err := g.AddTensor(t.info.Name, t.info.Type, t.info.Dims, t.data); err != nil {
			return nil, err
		}
	}
	return g, nil
}

// WriteTo writes the golden file to out.
func (w *Writer) WriteTo(out io.Writer) (int64, error) {
	g, err := w.gguf()
	if err != nil {
		return 0, err
	}
	return g.WriteTo(out)
}

// WriteFile writes the golden file to path.
func (w *Writer) WriteFile(path string) error {
	g, err := w.gguf()
	if err != nil {
		return err
	}
	return g.WriteFile(path)
}
