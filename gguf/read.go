package gguf

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strings"

	"github.com/ggsim/ggsim/quant"
)

// Format constants (gguf.h and ggml.h at ggml d99724f2b141).
const (
	Magic            = "GGUF" // the first four bytes of every GGUF file
	Version          = 3      // the version Writer writes (GGUF_VERSION)
	DefaultAlignment = 32     // GGUF_DEFAULT_ALIGNMENT, used when general.alignment is absent
	MaxDims          = 4      // GGML_MAX_DIMS: a tensor has at most this many dimensions
	MaxNameLen       = 63     // GGML_MAX_NAME-1: the longest tensor name ggml accepts, in bytes
	MaxArrayDepth    = 16     // the deepest nesting of arrays this package reads
	KeyAlignment     = "general.alignment"
)

// FormatError reports a malformed or unsupported GGUF file: what is wrong and where.
type FormatError struct {
	Offset  int64  // byte offset in the file of the field found wrong
	Context string // what was being read: `header`, `key "general.name"`, `tensor "w" (#3)`
	Msg     string
	Err     error // the underlying error (io.ErrUnexpectedEOF, an I/O error), or nil
}

func (e *FormatError) Error() string {
	s := fmt.Sprintf("gguf: byte %d: ", e.Offset)
	if e.Context != "" {
		s += e.Context + ": "
	}
	s += e.Msg
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

func (e *FormatError) Unwrap() error { return e.Err }

// TensorInfo describes one tensor as its info record in the file does.
type TensorInfo struct {
	// Name is the name as ggml takes it: the stored bytes up to the first NUL, if any
	// (ggml keeps names as C strings).
	Name string
	Type quant.Type
	// Dims are the n_dims dimensions stored in the file, ggml order (Dims[0] is the
	// contiguous one). ggml's writer drops trailing 1s, so a [K, 1] tensor is stored as [K].
	Dims []int64
	// Offset is the tensor's start relative to the data section (a multiple of the
	// alignment); File.DataOffset+Offset is its position in the file.
	Offset uint64
	// Size is the tensor's size in bytes: ggml_nbytes = ne[0]/blck·type_size·ne[1]·ne[2]·ne[3].
	Size int64
	// InfoOffset is where the tensor's info record starts in the file.
	InfoOffset int64
}

// NE returns the shape as ggml's ne[4]: Dims padded with 1s.
func (t TensorInfo) NE() [MaxDims]int64 {
	ne := [MaxDims]int64{1, 1, 1, 1}
	copy(ne[:], t.Dims)
	return ne
}

// NumElements returns ne[0]·ne[1]·ne[2]·ne[3] (validated not to overflow when read).
func (t TensorInfo) NumElements() int64 {
	n := int64(1)
	for _, d := range t.Dims {
		n *= d
	}
	return n
}

// File is a parsed GGUF file: header, metadata and tensor infos, and the means to read
// tensor data on demand. Every tensor's data was checked, when the file was read, to lie
// inside the file, aligned and not overlapping another tensor.
type File struct {
	Version   uint32       // 2 or 3
	KV        []KV         // metadata in file order; keys are unique
	Tensors   []TensorInfo // tensor infos in file order; names are unique
	Alignment int64        // general.alignment, or DefaultAlignment
	// DataOffset is the start of the data section: the end of the tensor infos rounded up
	// to Alignment.
	DataOffset int64
	Size       int64 // the file's size in bytes

	r       io.ReaderAt
	closer  io.Closer
	kvIdx   map[string]int
	tensIdx map[string]int
}

// Open reads the GGUF file at path. The file stays open for tensor data until Close.
func Open(path string) (*File, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	st, err := fh.Stat()
	if err != nil {
		fh.Close()
		return nil, err
	}
	f, err := Read(fh, st.Size())
	if err != nil {
		fh.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	f.closer = fh
	return f, nil
}

// Close closes the file Open opened; it does nothing for a File from Read.
func (f *File) Close() error {
	if f.closer == nil {
		return nil
	}
	c := f.closer
	f.closer = nil
	return c.Close()
}

// Lookup returns the value of key.
func (f *File) Lookup(key string) (Value, bool) {
	i, ok := f.kvIdx[key]
	if !ok {
		return Value{}, false
	}
	return f.KV[i].Value, true
}

// ErrKeyNotFound and ErrWrongType are wrapped by the errors of Get and GetArray.
var (
	ErrKeyNotFound = errors.New("key not found")
	ErrWrongType   = errors.New("wrong value type")
)

// Get returns the scalar of type T stored under key, or an error naming the key if it is
// missing (wrapping ErrKeyNotFound) or of another type (wrapping ErrWrongType).
func Get[T Scalar](f *File, key string) (T, error) {
	var zero T
	v, ok := f.Lookup(key)
	if !ok {
		return zero, fmt.Errorf("gguf: key %q: %w", key, ErrKeyNotFound)
	}
	x, ok := As[T](v)
	if !ok {
		return zero, fmt.Errorf("gguf: key %q is %s, want %v: %w", key, typeDesc(v), scalarType(zero), ErrWrongType)
	}
	return x, nil
}

// GetArray returns the array of T stored under key, with errors as Get's.
func GetArray[T Scalar](f *File, key string) ([]T, error) {
	v, ok := f.Lookup(key)
	if !ok {
		return nil, fmt.Errorf("gguf: key %q: %w", key, ErrKeyNotFound)
	}
	x, ok := AsSlice[T](v)
	if !ok {
		var zero T
		return nil, fmt.Errorf("gguf: key %q is %s, want array of %v: %w", key, typeDesc(v), scalarType(zero), ErrWrongType)
	}
	return x, nil
}

func typeDesc(v Value) string {
	if v.typ == TypeArray {
		return "array of " + v.elem.String()
	}
	return v.typ.String()
}

// Tensor returns the info of the tensor called name.
func (f *File) Tensor(name string) (TensorInfo, bool) {
	i, ok := f.tensIdx[name]
	if !ok {
		return TensorInfo{}, false
	}
	return f.Tensors[i], true
}

// TensorReader returns a reader of exactly the bytes of tensor name, read from the file on
// demand.
func (f *File) TensorReader(name string) (*io.SectionReader, error) {
	t, ok := f.Tensor(name)
	if !ok {
		return nil, fmt.Errorf("gguf: no tensor %q", name)
	}
	return io.NewSectionReader(f.r, f.DataOffset+int64(t.Offset), t.Size), nil
}

// TensorData reads the bytes of tensor name (exactly its Size).
func (f *File) TensorData(name string) ([]byte, error) {
	t, ok := f.Tensor(name)
	if !ok {
		return nil, fmt.Errorf("gguf: no tensor %q", name)
	}
	b := make([]byte, t.Size)
	off := f.DataOffset + int64(t.Offset)
	if n, err := f.r.ReadAt(b, off); n != len(b) {
		if err == nil || err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, &FormatError{Offset: off + int64(n), Context: fmt.Sprintf("tensor %q", name), Msg: "reading tensor data", Err: err}
	}
	return b, nil
}

// CheckGGMLLayout reports whether ggml's own reader (gguf_init_from_file at d99724f2b141)
// would accept the file. Read already refuses every tensor layout ggml refuses (tensor i
// must start where tensor i-1 ends, padded to the alignment, and the padded data section
// must lie in the file); what remains is the metadata: ggml does not read nested arrays,
// which the GGUF spec allows and Read reads.
func (f *File) CheckGGMLLayout() error {
	for _, kv := range f.KV {
		if kv.Value.typ == TypeArray && kv.Value.elem == TypeArray {
			return fmt.Errorf("gguf: key %q is a nested array, which ggml does not read", kv.Key)
		}
	}
	return nil
}

var neName = [MaxDims]string{"ne[0]", "ne[1]", "ne[2]", "ne[3]"}

func alignUp(x, a int64) int64 { return (x + a - 1) / a * a }

// decoder reads the sequential part of a file (header, metadata, tensor infos).
type decoder struct {
	br   *bufio.Reader
	off  int64 // bytes consumed so far
	size int64 // file size
	// what is being read, formatted only for an error (context): its kind, the key or
	// tensor name, and its index
	ctxKind ctxKind
	ctxName string
	ctxIdx  uint64
	buf     [8]byte
}

type ctxKind uint8

const (
	ctxHeader ctxKind = iota
	ctxMetadata
	ctxKey
	ctxTensor
	ctxTensorNamed
	ctxData
)

// context names what was being read, for a FormatError.
func (d *decoder) context() string {
	switch d.ctxKind {
	case ctxMetadata:
		return fmt.Sprintf("metadata #%d", d.ctxIdx)
	case ctxKey:
		return fmt.Sprintf("key %q", d.ctxName)
	case ctxTensor:
		return fmt.Sprintf("tensor #%d", d.ctxIdx)
	case ctxTensorNamed:
		return fmt.Sprintf("tensor %q (#%d)", d.ctxName, d.ctxIdx)
	case ctxData:
		return "data section"
	}
	return "header"
}

// setCtx says what is being read next.
func (d *decoder) setCtx(k ctxKind, name string, i uint64) {
	d.ctxKind, d.ctxName, d.ctxIdx = k, name, i
}

func (d *decoder) remain() int64 { return d.size - d.off }

func (d *decoder) errf(at int64, format string, args ...any) error {
	return &FormatError{Offset: at, Context: d.context(), Msg: fmt.Sprintf(format, args...)}
}

// read fills p or returns an error naming what was being read.
func (d *decoder) read(p []byte, what string) error {
	at := d.off
	if int64(len(p)) > d.remain() {
		return &FormatError{Offset: at, Context: d.context(), Msg: fmt.Sprintf("reading %s: need %d bytes, %d remain", what, len(p), d.remain()), Err: io.ErrUnexpectedEOF}
	}
	n, err := io.ReadFull(d.br, p)
	d.off += int64(n)
	if err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return &FormatError{Offset: at, Context: d.context(), Msg: "reading " + what, Err: err}
	}
	return nil
}

func (d *decoder) u32(what string) (uint32, error) {
	if err := d.read(d.buf[:4], what); err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint32(d.buf[:4]), nil
}

func (d *decoder) u64(what string) (uint64, error) {
	if err := d.read(d.buf[:8], what); err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint64(d.buf[:8]), nil
}

// str reads a GGUF string: u64 length then bytes.
func (d *decoder) str(what string) (string, error) {
	at := d.off
	n, err := d.u64(what + " length")
	if err != nil {
		return "", err
	}
	if n > MaxStringLen {
		return "", &FormatError{Offset: at, Context: d.context(), Msg: fmt.Sprintf("%s of %d bytes is longer than ggml's limit of %d", what, n, MaxStringLen)}
	}
	if n > uint64(d.remain()) {
		return "", &FormatError{Offset: at, Context: d.context(), Msg: fmt.Sprintf("%s of %d bytes runs past the end of the file (%d bytes remain)", what, n, d.remain()), Err: io.ErrUnexpectedEOF}
	}
	b := make([]byte, n)
	if err := d.read(b, what); err != nil {
		return "", err
	}
	return string(b), nil
}

// Read parses the GGUF file of size bytes that r reads: header, metadata and tensor infos,
// with every check of ggml's reader and more (see the package doc). Tensor data is not read
// until asked for; r must stay readable while the File is used.
func Read(r io.ReaderAt, size int64) (*File, error) {
	if size < 0 {
		return nil, fmt.Errorf("gguf: negative file size %d", size)
	}
	// The buffer: 64 KiB, or the file's size if smaller (bufio's least is 16 bytes), so a
	// tiny file costs no more than a small multiple of its size.
	d := &decoder{br: bufio.NewReaderSize(io.NewSectionReader(r, 0, size), int(min(size, 64<<10))), size: size}
	f := &File{r: r, Size: size, kvIdx: map[string]int{}, tensIdx: map[string]int{}}

	var magic [4]byte
	if err := d.read(magic[:], "magic"); err != nil {
		return nil, err
	}
	if string(magic[:]) != Magic {
		return nil, d.errf(0, "bad magic %q, want %q", magic[:], Magic)
	}
	v, err := d.u32("version")
	if err != nil {
		return nil, err
	}
	switch {
	case v == 0:
		return nil, d.errf(4, "bad GGUF version 0")
	case v&0xFFFF == 0:
		return nil, d.errf(4, "GGUF version %#x: a big-endian file? only little-endian files are read", v)
	case v == 1:
		return nil, d.errf(4, "GGUF version 1 is not supported (ggml dropped it)")
	case v > Version:
		return nil, d.errf(4, "GGUF version %d is newer than the supported %d", v, Version)
	}
	f.Version = v

	nt, err := d.u64("tensor count")
	if err != nil {
		return nil, err
	}
	nkv, err := d.u64("metadata count")
	if err != nil {
		return nil, err
	}
	// Every key/value takes at least 8 (key length) + 1 (key) + 4 (type) + 1 (value)
	// bytes and every tensor info 8 + 4 + 4 + 8; validate the counts before using them.
	const minKV, minTensor = 14, 24
	if nkv > uint64(d.remain())/minKV {
		return nil, d.errf(16, "metadata count %d cannot fit in the %d bytes after the header", nkv, d.remain())
	}
	if nt > uint64(d.remain()-int64(nkv)*minKV)/minTensor {
		return nil, d.errf(8, "tensor count %d cannot fit in the %d bytes after the header", nt, d.remain())
	}

	f.KV = make([]KV, 0, nkv)
	alignAt := int64(0)
	for i := uint64(0); i < nkv; i++ {
		at := d.off
		d.setCtx(ctxMetadata, "", i)
		key, err := d.str("key")
		if err != nil {
			return nil, err
		}
		if key == "" {
			return nil, d.errf(at, "empty key")
		}
		d.setCtx(ctxKey, key, i)
		if _, dup := f.kvIdx[key]; dup {
			return nil, d.errf(at, "duplicate key")
		}
		tat := d.off
		t, err := d.u32("value type")
		if err != nil {
			return nil, err
		}
		val, err := d.value(ValueType(t), tat, 0)
		if err != nil {
			return nil, err
		}
		if key == KeyAlignment {
			alignAt = at
		}
		f.kvIdx[key] = len(f.KV)
		f.KV = append(f.KV, KV{Key: key, Value: val})
	}

	f.Alignment = DefaultAlignment
	if v, ok := f.Lookup(KeyAlignment); ok {
		a, ok := As[uint32](v)
		if !ok {
			return nil, &FormatError{Offset: alignAt, Context: fmt.Sprintf("key %q", KeyAlignment), Msg: fmt.Sprintf("is %s, must be u32", typeDesc(v))}
		}
		if a == 0 || a&(a-1) != 0 {
			return nil, &FormatError{Offset: alignAt, Context: fmt.Sprintf("key %q", KeyAlignment), Msg: fmt.Sprintf("alignment %d is not a power of 2", a)}
		}
		f.Alignment = int64(a)
	}

	f.Tensors = make([]TensorInfo, 0, nt)
	for i := uint64(0); i < nt; i++ {
		t, err := d.tensorInfo(i)
		if err != nil {
			return nil, err
		}
		if _, dup := f.tensIdx[t.Name]; dup {
			return nil, d.errf(t.InfoOffset, "duplicate tensor name")
		}
		f.tensIdx[t.Name] = len(f.Tensors)
		f.Tensors = append(f.Tensors, t)
	}
	d.setCtx(ctxData, "", 0)

	f.DataOffset = alignUp(d.off, f.Alignment)
	if len(f.Tensors) > 0 && f.DataOffset > size {
		return nil, d.errf(d.off, "the data section would start at byte %d (alignment %d), past the end of the file (%d bytes)", f.DataOffset, f.Alignment, size)
	}
	// ggml's layout (gguf.cpp, gguf_init_from_file_impl): tensor i starts where tensor
	// i-1 ends, padded to the alignment, the first at 0; and the whole padded data
	// section, which ggml reads in one piece, lies in the file. Tensors are therefore in
	// file order, aligned, disjoint and without gaps.
	dataLen := size - f.DataOffset
	var want int64 // where ggml expects the next tensor
	for i := range f.Tensors {
		t := &f.Tensors[i]
		ctx := fmt.Sprintf("tensor %q (#%d)", t.Name, i)
		if t.Offset != uint64(want) {
			why := "tensors must follow each other in file order, each padded to the alignment"
			if t.Offset%uint64(f.Alignment) != 0 {
				why = fmt.Sprintf("not a multiple of the alignment %d", f.Alignment)
			}
			return nil, &FormatError{Offset: t.InfoOffset, Context: ctx, Msg: fmt.Sprintf("data offset %d, ggml expects %d (%s)", t.Offset, want, why)}
		}
		p, ok := paddedSize(t.Size, f.Alignment)
		if !ok || p > dataLen-want {
			return nil, &FormatError{Offset: t.InfoOffset, Context: ctx, Msg: fmt.Sprintf("data [%d, +%d) padded to %d of the data section at byte %d runs past the end of the file (%d bytes)", t.Offset, t.Size, f.Alignment, f.DataOffset, size)}
		}
		want += p
	}
	return f, nil
}

// value reads a value of type t whose type field was at byte tat; depth counts enclosing
// arrays.
func (d *decoder) value(t ValueType, tat int64, depth int) (Value, error) {
	var b [8]byte
	switch t {
	case TypeString:
		s, err := d.str("string value")
		return ScalarOf(s), err
	case TypeArray:
		return d.array(tat, depth)
	}
	n := t.fixedSize()
	if n == 0 {
		return Value{}, d.errf(tat, "unknown value type %d", uint32(t))
	}
	if err := d.read(b[:n], t.String()+" value"); err != nil {
		return Value{}, err
	}
	le := binary.LittleEndian
	switch t {
	case TypeUint8:
		return ScalarOf(b[0]), nil
	case TypeInt8:
		return ScalarOf(int8(b[0])), nil
	case TypeUint16:
		return ScalarOf(le.Uint16(b[:])), nil
	case TypeInt16:
		return ScalarOf(int16(le.Uint16(b[:]))), nil
	case TypeUint32:
		return ScalarOf(le.Uint32(b[:])), nil
	case TypeInt32:
		return ScalarOf(int32(le.Uint32(b[:]))), nil
	case TypeFloat32:
		return ScalarOf(math.Float32frombits(le.Uint32(b[:]))), nil
	case TypeBool:
		return ScalarOf(b[0] != 0), nil // as ggml: any non-zero byte is true
	case TypeUint64:
		return ScalarOf(le.Uint64(b[:])), nil
	case TypeInt64:
		return ScalarOf(int64(le.Uint64(b[:]))), nil
	default: // TypeFloat64
		return ScalarOf(math.Float64frombits(le.Uint64(b[:]))), nil
	}
}

// array reads an array's element type, length and elements (the array type field was at
// tat).
func (d *decoder) array(tat int64, depth int) (Value, error) {
	if depth >= MaxArrayDepth {
		return Value{}, d.errf(tat, "arrays nested deeper than %d", MaxArrayDepth)
	}
	eat := d.off
	e32, err := d.u32("array element type")
	if err != nil {
		return Value{}, err
	}
	et := ValueType(e32)
	if !et.Valid() {
		return Value{}, d.errf(eat, "array of unknown value type %d", e32)
	}
	lat := d.off
	n, err := d.u64("array length")
	if err != nil {
		return Value{}, err
	}
	if n > MaxArrayLen {
		return Value{}, &FormatError{Offset: lat, Context: d.context(), Msg: fmt.Sprintf("array of %d %v has more elements than ggml's limit of %d", n, et, MaxArrayLen)}
	}
	if min := et.minSize(); n > uint64(d.remain())/uint64(min) {
		return Value{}, &FormatError{Offset: lat, Context: d.context(), Msg: fmt.Sprintf("array of %d %v needs at least %d bytes each, only %d bytes remain", n, et, min, d.remain()), Err: io.ErrUnexpectedEOF}
	}
	switch et {
	case TypeString:
		s := make([]string, n)
		for i := range s {
			if s[i], err = d.str("string element"); err != nil {
				// name the element only now: a Sprintf per element would cost more
				// than the element
				if fe, ok := err.(*FormatError); ok {
					fe.Msg = strings.Replace(fe.Msg, "string element", fmt.Sprintf("string element %d", i), 1)
				}
				return Value{}, err
			}
		}
		return ArrayOf(s), nil
	case TypeArray:
		vs := make([]Value, n)
		for i := range vs {
			if vs[i], err = d.array(d.off, depth+1); err != nil {
				return Value{}, err
			}
		}
		return Value{typ: TypeArray, elem: TypeArray, x: vs}, nil
	}
	raw := make([]byte, n*uint64(et.fixedSize()))
	if err := d.read(raw, "array of "+et.String()); err != nil {
		return Value{}, err
	}
	return decodeArray(et, raw, int(n)), nil
}

func decodeArray(et ValueType, raw []byte, n int) Value {
	le := binary.LittleEndian
	switch et {
	case TypeUint8:
		return ArrayOf(raw)
	case TypeInt8:
		s := make([]int8, n)
		for i := range s {
			s[i] = int8(raw[i])
		}
		return ArrayOf(s)
	case TypeBool:
		s := make([]bool, n)
		for i := range s {
			s[i] = raw[i] != 0
		}
		return ArrayOf(s)
	case TypeUint16:
		s := make([]uint16, n)
		for i := range s {
			s[i] = le.Uint16(raw[2*i:])
		}
		return ArrayOf(s)
	case TypeInt16:
		s := make([]int16, n)
		for i := range s {
			s[i] = int16(le.Uint16(raw[2*i:]))
		}
		return ArrayOf(s)
	case TypeUint32:
		s := make([]uint32, n)
		for i := range s {
			s[i] = le.Uint32(raw[4*i:])
		}
		return ArrayOf(s)
	case TypeInt32:
		s := make([]int32, n)
		for i := range s {
			s[i] = int32(le.Uint32(raw[4*i:]))
		}
		return ArrayOf(s)
	case TypeFloat32:
		s := make([]float32, n)
		for i := range s {
			s[i] = math.Float32frombits(le.Uint32(raw[4*i:]))
		}
		return ArrayOf(s)
	case TypeUint64:
		s := make([]uint64, n)
		for i := range s {
			s[i] = le.Uint64(raw[8*i:])
		}
		return ArrayOf(s)
	case TypeInt64:
		s := make([]int64, n)
		for i := range s {
			s[i] = int64(le.Uint64(raw[8*i:]))
		}
		return ArrayOf(s)
	default: // TypeFloat64
		s := make([]float64, n)
		for i := range s {
			s[i] = math.Float64frombits(le.Uint64(raw[8*i:]))
		}
		return ArrayOf(s)
	}
}

// tensorInfo reads one tensor info record and checks it as ggml does (shape.go): name
// length, n_dims, non-negative ne, the element count, a supported type whose block divides
// ne[0], and a representable byte size.
func (d *decoder) tensorInfo(i uint64) (TensorInfo, error) {
	d.setCtx(ctxTensor, "", i)
	t := TensorInfo{InfoOffset: d.off}
	name, err := d.str("tensor name")
	if err != nil {
		return t, err
	}
	if err := checkNameLen(name); err != nil {
		return t, d.errf(t.InfoOffset, "%v", err)
	}
	t.Name = ggmlName(name)
	d.setCtx(ctxTensorNamed, t.Name, i)
	nat := d.off
	nd, err := d.u32("n_dims")
	if err != nil {
		return t, err
	}
	if nd > MaxDims {
		return t, d.errf(nat, "n_dims %d is more than %d", nd, MaxDims)
	}
	t.Dims = make([]int64, nd)
	for j := range t.Dims {
		at := d.off
		u, err := d.u64(neName[j])
		if err != nil {
			return t, err
		}
		if u > math.MaxInt64 {
			return t, d.errf(at, "ne[%d] = %d is negative", j, int64(u))
		}
		t.Dims[j] = int64(u)
	}
	nel, err := numElements(t.Dims)
	if err != nil {
		return t, d.errf(nat, "%v", err)
	}
	tat := d.off
	ty, err := d.u32("type")
	if err != nil {
		return t, err
	}
	t.Type = quant.Type(ty)
	if err := typeError(t.Type); err != nil {
		return t, d.errf(tat, "%v", err)
	}
	if t.Size, err = tensorBytes(nel, t.NE()[0], t.Type); err != nil {
		return t, d.errf(tat, "%v", err)
	}
	if t.Offset, err = d.u64("data offset"); err != nil {
		return t, err
	}
	return t, nil
}
