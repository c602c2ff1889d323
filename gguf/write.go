package gguf

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"

	"github.com/ggsim/ggsim/quant"
)

// Writer builds a GGUF v3 file the way ggml's gguf_write_to_file does: header, metadata in
// the order added, tensor infos in the order added, zero padding to the alignment, then
// each tensor's data in the same order, each padded with zeros to the alignment (the last
// one too). Tensor i's offset is the sum of the padded sizes of tensors 0..i-1, which is
// the only layout ggml's reader accepts.
//
// The files it writes are read by ggml except in one case: ggml's reader rejects nested
// arrays (arrays of arrays), which the GGUF spec allows and Writer writes.
type Writer struct {
	kv        []KV
	keys      map[string]bool
	tensors   []wtensor
	names     map[string]bool
	alignment int64
}

type wtensor struct {
	info TensorInfo
	data []byte
}

// NewWriter returns an empty Writer (alignment DefaultAlignment).
func NewWriter() *Writer {
	return &Writer{keys: map[string]bool{}, names: map[string]bool{}, alignment: DefaultAlignment}
}

// Alignment returns the alignment the file will use.
func (w *Writer) Alignment() int64 { return w.alignment }

// Add appends the metadata pair key = v. It returns an error for an empty or duplicate
// key, an invalid Value, or a general.alignment that is not a u32 power of two (which
// otherwise sets the file's alignment; it must be added before any tensor).
func (w *Writer) Add(key string, v Value) error {
	if key == "" {
		return fmt.Errorf("gguf: empty metadata key")
	}
	if w.keys[key] {
		return fmt.Errorf("gguf: duplicate metadata key %q", key)
	}
	if err := checkValue(v, 0); err != nil {
		return fmt.Errorf("gguf: key %q: %w", key, err)
	}
	if key == KeyAlignment {
		a, ok := As[uint32](v)
		if !ok {
			return fmt.Errorf("gguf: key %q must be u32, not %s", key, typeDesc(v))
		}
		if a == 0 || a&(a-1) != 0 {
			return fmt.Errorf("gguf: alignment %d is not a power of 2", a)
		}
		if len(w.tensors) > 0 {
			return fmt.Errorf("gguf: %s must be set before the first tensor", KeyAlignment)
		}
		w.alignment = int64(a)
	}
	w.keys[key] = true
	w.kv = append(w.kv, KV{Key: key, Value: v})
	return nil
}

func checkValue(v Value, depth int) error {
	if v.x == nil {
		return fmt.Errorf("invalid (zero) Value")
	}
	if v.typ != TypeArray {
		return nil
	}
	if depth+1 > MaxArrayDepth {
		return fmt.Errorf("arrays nested deeper than %d", MaxArrayDepth)
	}
	if vs, ok := v.x.([]Value); ok {
		for _, e := range vs {
			if err := checkValue(e, depth+1); err != nil {
				return err
			}
		}
	}
	return nil
}

// AddTensor appends a tensor of type typ and shape dims (ggml order, at most MaxDims,
// written as given) whose bytes are data. It refuses what ggml's reader refuses (shape.go,
// the same rules as Read): a name longer than MaxNameLen bytes, a duplicate name, an unknown
// or removed type, negative dims, a shape with too many elements (none of these checks for
// a shape with a zero dimension, which has no elements), ne[0] not a multiple of the block
// size, and len(data) other than the tensor's size. A name with a NUL byte is refused too:
// ggml would cut it there. data is kept, not copied, until WriteTo.
func (w *Writer) AddTensor(name string, typ quant.Type, dims []int64, data []byte) error {
	if err := checkNameLen(name); err != nil {
		return fmt.Errorf("gguf: tensor %q: %w", name, err)
	}
	if ggmlName(name) != name {
		return fmt.Errorf("gguf: tensor name %q has a NUL byte, where ggml's name would end", name)
	}
	if w.names[name] {
		return fmt.Errorf("gguf: duplicate tensor name %q", name)
	}
	if len(dims) > MaxDims {
		return fmt.Errorf("gguf: tensor %q: n_dims %d is more than %d", name, len(dims), MaxDims)
	}
	for j, d := range dims {
		if d < 0 {
			return fmt.Errorf("gguf: tensor %q: ne[%d] = %d is negative", name, j, d)
		}
	}
	nel, err := numElements(dims)
	if err != nil {
		return fmt.Errorf("gguf: tensor %q: %w", name, err)
	}
	if err := typeError(typ); err != nil {
		return fmt.Errorf("gguf: tensor %q: %w", name, err)
	}
	ne0 := int64(1)
	if len(dims) > 0 {
		ne0 = dims[0]
	}
	size, err := tensorBytes(nel, ne0, typ)
	if err != nil {
		return fmt.Errorf("gguf: tensor %q: %w", name, err)
	}
	if int64(len(data)) != size {
		return fmt.Errorf("gguf: tensor %q: %v %v needs %d bytes, got %d", name, typ, dims, size, len(data))
	}
	w.names[name] = true
	w.tensors = append(w.tensors, wtensor{
		info: TensorInfo{Name: name, Type: typ, Dims: append([]int64(nil), dims...), Size: size},
		data: data,
	})
	return nil
}

// WriteTo writes the file to out and returns the number of bytes written.
func (w *Writer) WriteTo(out io.Writer) (int64, error) {
	e := &encoder{w: bufio.NewWriterSize(out, 64<<10)}
	e.raw([]byte(Magic))
	e.u32(Version)
	e.u64(uint64(len(w.tensors)))
	e.u64(uint64(len(w.kv)))
	for _, kv := range w.kv {
		e.str(kv.Key)
		e.u32(uint32(kv.Value.typ))
		e.value(kv.Value)
	}
	var off int64
	for _, t := range w.tensors {
		e.str(t.info.Name)
		e.u32(uint32(len(t.info.Dims)))
		for _, d := range t.info.Dims {
			e.u64(uint64(d))
		}
		e.u32(uint32(t.info.Type))
		e.u64(uint64(off))
		off += alignUp(t.info.Size, w.alignment)
	}
	e.pad(w.alignment)
	for _, t := range w.tensors {
		e.raw(t.data)
		e.pad(w.alignment)
	}
	if e.err == nil {
		e.err = e.w.Flush()
	}
	return e.n, e.err
}

// WriteFile writes the file to path (created or truncated).
func (w *Writer) WriteFile(path string) error {
	fh, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := w.WriteTo(fh); err != nil {
		fh.Close()
		return fmt.Errorf("gguf: writing %s: %w", path, err)
	}
	return fh.Close()
}

type encoder struct {
	w   *bufio.Writer
	n   int64
	err error
	buf [8]byte
}

func (e *encoder) raw(p []byte) {
	if e.err != nil {
		return
	}
	n, err := e.w.Write(p)
	e.n += int64(n)
	e.err = err
}

func (e *encoder) u32(x uint32) {
	binary.LittleEndian.PutUint32(e.buf[:4], x)
	e.raw(e.buf[:4])
}

func (e *encoder) u64(x uint64) {
	binary.LittleEndian.PutUint64(e.buf[:8], x)
	e.raw(e.buf[:8])
}

func (e *encoder) str(s string) {
	e.u64(uint64(len(s)))
	if e.err == nil {
		n, err := e.w.WriteString(s)
		e.n += int64(n)
		e.err = err
	}
}

func (e *encoder) pad(a int64) {
	var zero [64]byte
	for e.n%a != 0 && e.err == nil {
		k := min(a-e.n%a, int64(len(zero)))
		e.raw(zero[:k])
	}
}

func b2u(b bool) uint8 {
	if b {
		return 1
	}
	return 0
}

// value writes v's payload (its type field is already written).
func (e *encoder) value(v Value) {
	switch x := v.x.(type) {
	case uint8:
		e.raw([]byte{x})
	case int8:
		e.raw([]byte{uint8(x)})
	case bool:
		e.raw([]byte{b2u(x)})
	case uint16:
		binary.LittleEndian.PutUint16(e.buf[:2], x)
		e.raw(e.buf[:2])
	case int16:
		binary.LittleEndian.PutUint16(e.buf[:2], uint16(x))
		e.raw(e.buf[:2])
	case uint32:
		e.u32(x)
	case int32:
		e.u32(uint32(x))
	case float32:
		e.u32(math.Float32bits(x))
	case uint64:
		e.u64(x)
	case int64:
		e.u64(uint64(x))
	case float64:
		e.u64(math.Float64bits(x))
	case string:
		e.str(x)
	default:
		e.u32(uint32(v.elem))
		e.u64(uint64(v.Len()))
		e.array(v)
	}
}

func (e *encoder) array(v Value) {
	le := binary.LittleEndian
	switch s := v.x.(type) {
	case []uint8:
		e.raw(s)
	case []int8:
		for _, x := range s {
			e.raw([]byte{uint8(x)})
		}
	case []bool:
		for _, x := range s {
			e.raw([]byte{b2u(x)})
		}
	case []uint16:
		for _, x := range s {
			le.PutUint16(e.buf[:2], x)
			e.raw(e.buf[:2])
		}
	case []int16:
		for _, x := range s {
			le.PutUint16(e.buf[:2], uint16(x))
			e.raw(e.buf[:2])
		}
	case []uint32:
		for _, x := range s {
			e.u32(x)
		}
	case []int32:
		for _, x := range s {
			e.u32(uint32(x))
		}
	case []float32:
		for _, x := range s {
			e.u32(math.Float32bits(x))
		}
	case []uint64:
		for _, x := range s {
			e.u64(x)
		}
	case []int64:
		for _, x := range s {
			e.u64(uint64(x))
		}
	case []float64:
		for _, x := range s {
			e.u64(math.Float64bits(x))
		}
	case []string:
		for _, x := range s {
			e.str(x)
		}
	case []Value:
		for _, x := range s {
			e.u32(uint32(x.elem))
			e.u64(uint64(x.Len()))
			e.array(x)
		}
	default:
		panic("gguf: corrupt Value")
	}
}
