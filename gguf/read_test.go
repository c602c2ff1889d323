package gguf

import (
	"bytes"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/ggsim/ggsim/quant"
)

// TestWriterEncoding compares Writer's bytes with a file assembled by hand from the spec.
func TestWriterEncoding(t *testing.T) {
	w := NewWriter()
	if err := w.Add("a.b", ScalarOf(uint32(7))); err != nil {
		t.Fatal(err)
	}
	if err := w.Add("s", ArrayOf([]string{"xy"})); err != nil {
		t.Fatal(err)
	}
	if err := w.AddTensor("t0", quant.F32, []int64{3}, []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}); err != nil {
		t.Fatal(err)
	}
	if err := w.AddTensor("t1", quant.Q8_0, []int64{32, 1}, seq(34)); err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	n, err := w.WriteTo(&got)
	if err != nil || n != int64(got.Len()) {
		t.Fatalf("WriteTo = %d, %v; wrote %d", n, err, got.Len())
	}
	var want raw
	want.header(3, 2, 2)
	want.kvU32("a.b", 7)
	want.str("s").u32(uint32(TypeArray)).u32(uint32(TypeString)).u64(1).str("xy")
	want.tensor("t0", quant.F32, 0, 3)
	want.tensor("t1", quant.Q8_0, 32, 32, 1) // t0's 12 bytes padded to 32
	want.pad(32)
	want.Write([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12})
	want.pad(32)
	want.Write(seq(34))
	want.pad(32) // ggml pads after the last tensor too
	if !bytes.Equal(got.Bytes(), want.Bytes()) {
		t.Fatalf("Writer bytes differ from the spec encoding:\n got %x\nwant %x", got.Bytes(), want.Bytes())
	}
}

func TestReadSample(t *testing.T) {
	b := sample(t)
	f, err := readBytes(b)
	if err != nil {
		t.Fatal(err)
	}
	if f.Version != 3 || f.Alignment != 32 || f.DataOffset%32 != 0 || f.Size != int64(len(b)) {
		t.Fatalf("header: version %d alignment %d data %d size %d", f.Version, f.Alignment, f.DataOffset, f.Size)
	}
	if err := f.CheckGGMLLayout(); err == nil || !strings.Contains(err.Error(), "nested") {
		t.Errorf("CheckGGMLLayout = %v, want the nested-array complaint", err)
	}
	checks := []struct {
		key  string
		want Value
	}{
		{"t.u8", ScalarOf(uint8(200))},
		{"t.i8", ScalarOf(int8(-100))},
		{"t.u16", ScalarOf(uint16(65000))},
		{"t.i16", ScalarOf(int16(-32000))},
		{"t.u32", ScalarOf(uint32(4000000000))},
		{"t.i32", ScalarOf(int32(-2000000000))},
		{"t.f32", ScalarOf(float32(1.5))},
		{"t.bool", ScalarOf(true)},
		{"t.str", ScalarOf("héllo")},
		{"t.u64", ScalarOf(uint64(1) << 63)},
		{"t.i64", ScalarOf(int64(-1) << 62)},
		{"t.f64", ScalarOf(-2.25)},
		{"t.arr.u8", ArrayOf([]uint8{1, 2, 3})},
		{"t.arr.str", ArrayOf([]string{"a", "", "ccc"})},
		{"t.arr.f32", ArrayOf([]float32{0.5, float32(math.Copysign(0, -1))})},
		{"t.arr.bool", ArrayOf([]bool{true, false})},
		{"t.arr.nested", ArrayOfArrays([]Value{ArrayOf([]int16{-1, 2}), ArrayOf([]string{"x"}), ArrayOfArrays(nil)})},
	}
	if len(f.KV) != len(checks)+1 {
		t.Errorf("%d keys, want %d", len(f.KV), len(checks)+1)
	}
	for _, c := range checks {
		v, ok := f.Lookup(c.key)
		if !ok || !v.Equal(c.want) {
			t.Errorf("%s = %v (found %v), want %v", c.key, v, ok, c.want)
		}
	}
	// -0 and +0 differ under Equal.
	if v, _ := f.Lookup("t.arr.f32"); v.Equal(ArrayOf([]float32{0.5, 0})) {
		t.Error("Equal ignores the sign of zero")
	}
	if x, err := Get[uint32](f, "t.u32"); err != nil || x != 4000000000 {
		t.Errorf("Get[uint32] = %d, %v", x, err)
	}
	if _, err := Get[string](f, "t.u32"); !errors.Is(err, ErrWrongType) || !strings.Contains(err.Error(), "t.u32") {
		t.Errorf("Get[string] of a u32: %v", err)
	}
	if _, err := Get[uint32](f, "nope"); !errors.Is(err, ErrKeyNotFound) {
		t.Errorf("Get of a missing key: %v", err)
	}
	if s, err := GetArray[string](f, "t.arr.str"); err != nil || len(s) != 3 || s[2] != "ccc" {
		t.Errorf("GetArray[string] = %q, %v", s, err)
	}
	if _, err := GetArray[uint32](f, "t.arr.str"); !errors.Is(err, ErrWrongType) {
		t.Errorf("GetArray[uint32] of strings: %v", err)
	}

	tensors := []struct {
		name string
		typ  quant.Type
		dims []int64
		off  uint64
		data []byte
	}{
		{"w", quant.Q4_0, []int64{64, 3}, 0, seq(108)},
		{"x", quant.F32, []int64{5}, 128, seq(20)},
		{"ids", quant.I32, []int64{2, 1, 1}, 160, seq(8)},
	}
	for i, want := range tensors {
		ti, ok := f.Tensor(want.name)
		if !ok || f.Tensors[i].Name != want.name {
			t.Fatalf("tensor %q missing or out of order", want.name)
		}
		if ti.Type != want.typ || !equalDims(ti.Dims, want.dims) || ti.Offset != want.off || ti.Size != int64(len(want.data)) {
			t.Errorf("tensor %q: %v %v off %d size %d", want.name, ti.Type, ti.Dims, ti.Offset, ti.Size)
		}
		data, err := f.TensorData(want.name)
		if err != nil || !bytes.Equal(data, want.data) {
			t.Errorf("TensorData(%q) = %x, %v", want.name, data, err)
		}
		sr, err := f.TensorReader(want.name)
		if err != nil || sr.Size() != int64(len(want.data)) {
			t.Fatalf("TensorReader(%q): %v", want.name, err)
		}
		all, _ := io.ReadAll(sr)
		if !bytes.Equal(all, want.data) {
			t.Errorf("TensorReader(%q) read %x", want.name, all)
		}
	}
	if ti, _ := f.Tensor("ids"); ti.NE() != [4]int64{2, 1, 1, 1} || ti.NumElements() != 2 {
		t.Errorf("ids NE %v NumElements %d", ti.NE(), ti.NumElements())
	}
	if _, err := f.TensorData("nope"); err == nil {
		t.Error("TensorData of a missing tensor succeeded")
	}
}

func equalDims(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestReadV2 reads a version-2 file (the same layout as version 3).
func TestReadV2(t *testing.T) {
	var r raw
	r.header(2, 1, 1).kvU32("k", 1).tensor("t", quant.F32, 0, 2).pad(32)
	r.Write(seq(8))
	r.pad(32)
	f, err := readBytes(r.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if f.Version != 2 || len(f.Tensors) != 1 {
		t.Fatalf("version %d, %d tensors", f.Version, len(f.Tensors))
	}
}

// TestReadLayouts: Read accepts only ggml's layout (gguf.cpp:779, :860; the spec would
// allow any aligned, disjoint one).
func TestReadLayouts(t *testing.T) {
	var r raw // tensors in reverse order with a gap
	r.header(3, 2, 0).tensor("a", quant.F32, 64, 4).tensor("b", quant.F32, 0, 2).pad(32)
	r.Write(seq(64 + 16))
	r.pad(32)
	if _, err := readBytes(r.Bytes()); err == nil || !strings.Contains(err.Error(), `tensor "a" (#0): data offset 64, ggml expects 0`) {
		t.Errorf("reverse order with a gap: %v", err)
	}
	// ggml reads the padding after the last tensor: a file cut just after the data is
	// refused.
	var s raw
	s.header(3, 1, 0).tensor("a", quant.F32, 0, 4).pad(32)
	s.Write(seq(16))
	if _, err := readBytes(s.Bytes()); err == nil || !strings.Contains(err.Error(), "padded to 32") {
		t.Errorf("no padding after the last tensor: %v", err)
	}
	s.pad(32)
	if f, err := readBytes(s.Bytes()); err != nil || f.CheckGGMLLayout() != nil {
		t.Errorf("padded: %v", err)
	}
	// A file with only metadata needs no data section or padding.
	var m raw
	m.header(3, 0, 1).kvU32("k", 3)
	if f, err := readBytes(m.Bytes()); err != nil || f.CheckGGMLLayout() != nil {
		t.Errorf("metadata only: %v", err)
	}
	// Alignment 1 and 4096.
	for _, a := range []uint32{1, 4096} {
		var q raw
		q.header(3, 1, 1).kvU32(KeyAlignment, a).tensor("t", quant.I8, 0, 3).pad(int(a))
		q.Write(seq(3))
		q.pad(int(a))
		f, err := readBytes(q.Bytes())
		if err != nil || f.Alignment != int64(a) || f.CheckGGMLLayout() != nil {
			t.Errorf("alignment %d: %v", a, err)
		}
	}
}

// TestMalformed checks that each kind of bad file is rejected with a message that names
// the problem, the offset and the key or tensor.
func TestMalformed(t *testing.T) {
	hdr := func(nt, nkv uint64) *raw { r := &raw{}; return r.header(3, nt, nkv) }
	withData := func(r *raw, n int) []byte { r.pad(32); r.Write(make([]byte, n)); r.pad(32); return r.Bytes() }
	cases := []struct {
		name string
		b    []byte
		want []string // substrings of the error
	}{
		{"empty", nil, []string{"byte 0", "magic"}},
		{"magic", append([]byte("GGUG"), make([]byte, 20)...), []string{"byte 0", "bad magic"}},
		{"v0", (&raw{}).header(0, 0, 0).Bytes(), []string{"byte 4", "version 0"}},
		{"v1", (&raw{}).header(1, 0, 0).Bytes(), []string{"byte 4", "version 1"}},
		{"v4", (&raw{}).header(4, 0, 0).Bytes(), []string{"byte 4", "version 4"}},
		{"big-endian", (&raw{}).header(3<<24, 0, 0).Bytes(), []string{"byte 4", "big-endian"}},
		{"short header", []byte("GGUF\x03\x00\x00\x00\x00"), []string{"byte 8", "tensor count"}},
		{"kv count", hdr(0, 1<<40).Bytes(), []string{"byte 16", "metadata count 1099511627776"}},
		{"kv count max", hdr(0, math.MaxUint64).Bytes(), []string{"metadata count"}},
		{"tensor count", hdr(1<<62, 0).Bytes(), []string{"byte 8", "tensor count"}},
		{"key length", hdr(0, 1).u64(1 << 50).u32(0).u8(0).u64(0).Bytes(), []string{"byte 24", "metadata #0", "key of 1125899906842624 bytes"}},
		{"empty key", hdr(0, 1).str("").u32(0).u8(0).u64(0).Bytes(), []string{"byte 24", "empty key"}},
		{"dup key", hdr(0, 2).kvU32("k", 1).kvU32("k", 2).Bytes(), []string{"byte 41", `key "k"`, "duplicate key"}},
		{"value type", hdr(0, 1).str("k").u32(13).u64(0).Bytes(), []string{"byte 33", `key "k"`, "unknown value type 13"}},
		{"value type neg", hdr(0, 1).str("k").u32(0xFFFFFFFF).u64(0).Bytes(), []string{`key "k"`, "unknown value type 4294967295"}},
		{"truncated value", hdr(0, 1).str("k").u32(uint32(TypeUint64)).u32(0).Bytes(), []string{"byte 37", `key "k"`, "u64 value"}},
		{"string length", hdr(0, 1).str("k").u32(uint32(TypeString)).u64(1 << 40).Bytes(), []string{"byte 37", `key "k"`, "string value of 1099511627776 bytes"}},
		{"array elem type", hdr(0, 1).str("k").u32(uint32(TypeArray)).u32(77).u64(0).Bytes(), []string{"byte 37", `key "k"`, "array of unknown value type 77"}},
		{"array length", hdr(0, 1).str("k").u32(uint32(TypeArray)).u32(uint32(TypeUint32)).u64(1 << 60).Bytes(), []string{"byte 41", `key "k"`, "array of 1152921504606846976 u32"}},
		{"array length max", hdr(0, 1).str("k").u32(uint32(TypeArray)).u32(uint32(TypeUint8)).u64(math.MaxUint64).Bytes(), []string{`key "k"`, "array of"}},
		{"string array length", hdr(0, 1).str("k").u32(uint32(TypeArray)).u32(uint32(TypeString)).u64(3).u64(0).u64(0).Bytes(), []string{`key "k"`, "array of 3 str"}},
		{"nested array length", hdr(0, 1).str("k").u32(uint32(TypeArray)).u32(uint32(TypeArray)).u64(1 << 40).Bytes(), []string{`key "k"`, "array of 1099511627776 arr"}},
		{"truncated string elem", hdr(0, 1).str("k").u32(uint32(TypeArray)).u32(uint32(TypeString)).u64(2).str("abc").u64(9).u64(0).Bytes(), []string{`key "k"`, "string element 1"}},
		{"nesting", nested(MaxArrayDepth + 1), []string{`key "k"`, "nested deeper than 16"}},
		{"alignment type", hdr(0, 1).str(KeyAlignment).u32(uint32(TypeUint64)).u64(32).Bytes(), []string{"byte 24", KeyAlignment, "must be u32"}},
		{"alignment 0", hdr(0, 1).kvU32(KeyAlignment, 0).Bytes(), []string{KeyAlignment, "alignment 0 is not a power of 2"}},
		{"alignment 48", hdr(0, 1).kvU32(KeyAlignment, 48).Bytes(), []string{KeyAlignment, "alignment 48"}},
		{"name length", withData(hdr(1, 0).str(strings.Repeat("n", 64)).u32(1).u64(1).u32(0).u64(0), 4), []string{"byte 24", "tensor #0", "64 bytes"}},
		{"name truncated", hdr(1, 0).u64(100).u64(0).u64(0).Bytes(), []string{"byte 24", "tensor #0", "tensor name of 100 bytes"}},
		{"dup name", withData(hdr(2, 0).tensor("t", quant.F32, 0, 1).tensor("t", quant.F32, 32, 1), 36), []string{"byte 57", `tensor "t" (#1)`, "duplicate tensor name"}},
		{"n_dims", withData(hdr(1, 0).str("t").u32(5).u64(1).u64(1).u64(1).u64(1).u64(1).u32(0).u64(0), 4), []string{"byte 33", `tensor "t"`, "n_dims 5"}},
		{"n_dims huge", hdr(1, 0).str("t").u32(math.MaxUint32).u64(0).u32(0).u64(0).Bytes(), []string{`tensor "t"`, "n_dims 4294967295"}},
		{"negative ne", withData(hdr(1, 0).tensor("t", quant.F32, 0, 4, math.MaxUint64), 16), []string{"byte 45", `tensor "t"`, "ne[1] = -1 is negative"}},
		{"ne overflow", withData(hdr(1, 0).tensor("t", quant.F32, 0, 1<<32, 1<<31), 16), []string{"byte 33", `tensor "t"`, "too many elements: INT64_MAX/ne[1] <= ne[0]"}},
		{"ne overflow 4d", withData(hdr(1, 0).tensor("t", quant.I8, 0, 1<<20, 1<<20, 1<<20, 1<<4), 16), []string{`tensor "t"`, "INT64_MAX/ne[3] <= ne[0]·ne[1]·ne[2]"}},
		{"bytes overflow", withData(hdr(1, 0).tensor("t", quant.F64, 0, 1<<31, 1<<31), 16), []string{`tensor "t"`, "2^63-1 bytes"}},
		{"unknown type", withData(hdr(1, 0).tensor("t", 99, 0, 4), 16), []string{"byte 45", `tensor "t"`, "unknown ggml type 99"}},
		{"removed type", withData(hdr(1, 0).tensor("t", quant.Q4_2, 0, 32), 32), []string{`tensor "t"`, "type 4 (q4_2) was removed"}},
		{"removed type 36", withData(hdr(1, 0).tensor("t", quant.IQ4_NL_4_4, 0, 32), 32), []string{`tensor "t"`, "iq4_nl_4_4"}},
		{"block size", withData(hdr(1, 0).tensor("t", quant.Q4_K, 0, 255, 1), 144), []string{`tensor "t"`, "ne[0] = 255 is not a multiple of the q4_K block size 256"}},
		{"scalar quantized", withData(hdr(1, 0).tensor("t", quant.Q8_0, 0), 34), []string{`tensor "t"`, "ne[0] = 1"}},
		{"truncated offset", hdr(1, 0).str("t").u32(1).u64(4).u32(0).u32(0).Bytes(), []string{"byte 49", `tensor "t"`, "data offset"}},
		{"misaligned", withData(hdr(1, 0).tensor("t", quant.F32, 8, 4), 32), []string{"byte 24", `tensor "t" (#0)`, "data offset 8, ggml expects 0 (not a multiple of the alignment 32)"}},
		{"past EOF", withData(hdr(1, 0).tensor("t", quant.F32, 0, 9), 32), []string{"byte 24", `tensor "t" (#0)`, "runs past the end"}},
		{"offset huge", withData(hdr(1, 0).tensor("t", quant.F32, 1<<63, 1), 32), []string{`tensor "t" (#0)`, "data offset 9223372036854775808, ggml expects 0"}},
		{"overlap past empty", withData(hdr(3, 0).tensor("a", quant.F32, 0, 16).tensor("z", quant.F32, 32, 0).tensor("b", quant.F32, 32, 8), 64), []string{`tensor "z" (#1)`, "data offset 32, ggml expects 64"}},
		{"overlap inside", withData(hdr(3, 0).tensor("a", quant.F32, 0, 64).tensor("b", quant.F32, 32, 8).tensor("c", quant.F32, 288, 8), 320), []string{`tensor "b" (#1)`, "data offset 32, ggml expects 256"}},
		{"no data section", hdr(1, 0).tensor("t", quant.F32, 0, 1).Bytes(), []string{"data section", "past the end"}},
		{"overlap", withData(hdr(2, 0).tensor("a", quant.F32, 0, 16).tensor("b", quant.F32, 32, 8), 64), []string{`tensor "b" (#1)`, "data offset 32, ggml expects 64"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := readBytes(c.b)
			if err == nil {
				t.Fatalf("no error for %x", c.b)
			}
			var fe *FormatError
			if !errors.As(err, &fe) {
				t.Errorf("error %T is not a *FormatError", err)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

// nested returns a file whose only key is an array nested depth deep.
func nested(depth int) []byte {
	r := (&raw{}).header(3, 0, 1)
	r.str("k").u32(uint32(TypeArray))
	for i := 0; i < depth-1; i++ {
		r.u32(uint32(TypeArray)).u64(1)
	}
	r.u32(uint32(TypeUint8)).u64(0)
	return r.Bytes()
}

func TestNestingLimit(t *testing.T) {
	f, err := readBytes(nested(MaxArrayDepth))
	if err != nil {
		t.Fatalf("depth %d: %v", MaxArrayDepth, err)
	}
	v, _ := f.Lookup("k")
	w := NewWriter()
	if err := w.Add("k", v); err != nil {
		t.Fatalf("Writer refuses what Read accepts: %v", err)
	}
	if err := w.Add("k2", ArrayOfArrays([]Value{v})); err == nil {
		t.Error("Writer accepted nesting deeper than MaxArrayDepth")
	}
}

// TestTruncations cuts a valid file at every length: each prefix must fail, with an error
// that is not a panic, until the last tensor's data and its padding are complete.
func TestTruncations(t *testing.T) {
	b := sample(t)
	f, err := readBytes(b)
	if err != nil {
		t.Fatal(err)
	}
	last := f.Tensors[len(f.Tensors)-1]
	end := f.DataOffset + alignUp(int64(last.Offset)+last.Size, f.Alignment) // ggml reads the padding too
	for n := 0; n <= len(b); n++ {
		_, err := readBytes(b[:n])
		if int64(n) < end && err == nil {
			t.Fatalf("prefix of %d bytes (of %d) read without error", n, len(b))
		}
		if int64(n) >= end && err != nil {
			t.Fatalf("prefix of %d bytes, after the last tensor's padded data: %v", n, err)
		}
	}
}

// TestBoundedAllocation: absurd claims in a tiny file must not allocate.
func TestBoundedAllocation(t *testing.T) {
	files := [][]byte{
		(&raw{}).header(3, 0, math.MaxUint64/2).Bytes(),
		(&raw{}).header(3, 0, 1).str("k").u32(uint32(TypeArray)).u32(uint32(TypeUint8)).u64(1 << 40).Bytes(),
		(&raw{}).header(3, 0, 1).str("k").u32(uint32(TypeArray)).u32(uint32(TypeArray)).u64(1 << 40).Bytes(),
		(&raw{}).header(3, 0, 1).str("k").u32(uint32(TypeString)).u64(1 << 40).Bytes(),
		(&raw{}).header(3, 1<<40, 0).Bytes(),
	}
	for i, b := range files {
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		if _, err := readBytes(b); err == nil {
			t.Fatalf("file %d read", i)
		}
		runtime.ReadMemStats(&m1)
		if d := m1.TotalAlloc - m0.TotalAlloc; d > 1<<20 {
			t.Errorf("file %d: reading %d bytes allocated %d bytes", i, len(b), d)
		}
	}
}

func TestWriterErrors(t *testing.T) {
	w := NewWriter()
	bad := []error{
		w.Add("", ScalarOf(1.0)),
		w.Add("k", Value{}),
		w.Add(KeyAlignment, ScalarOf(uint64(32))),
		w.Add(KeyAlignment, ScalarOf(uint32(24))),
		w.AddTensor(strings.Repeat("n", 64), quant.F32, []int64{1}, make([]byte, 4)),
		w.AddTensor("t", quant.Q4_2, []int64{32}, nil),
		w.AddTensor("t", quant.TypeCount, []int64{1}, nil),
		w.AddTensor("t", quant.F32, []int64{1, 1, 1, 1, 1}, make([]byte, 4)),
		w.AddTensor("t", quant.F32, []int64{-1}, nil),
		w.AddTensor("t", quant.F32, []int64{1 << 40, 1 << 40}, nil),
		w.AddTensor("t", quant.Q4_0, []int64{31}, make([]byte, 18)),
		w.AddTensor("t", quant.F32, []int64{2}, make([]byte, 4)),
	}
	for i, err := range bad {
		if err == nil {
			t.Errorf("bad call %d succeeded", i)
		}
	}
	if err := w.Add("k", ScalarOf(1.0)); err != nil {
		t.Fatal(err)
	}
	if err := w.Add("k", ScalarOf(2.0)); err == nil {
		t.Error("duplicate key accepted")
	}
	if err := w.AddTensor("t", quant.F32, []int64{1}, make([]byte, 4)); err != nil {
		t.Fatal(err)
	}
	if err := w.AddTensor("t", quant.F32, []int64{1}, make([]byte, 4)); err == nil {
		t.Error("duplicate tensor accepted")
	}
	if err := w.Add(KeyAlignment, ScalarOf(uint32(64))); err == nil {
		t.Error("alignment accepted after a tensor")
	}
}

// TestOpenFile covers Open and Close on a real file.
func TestOpenFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "s.gguf")
	if err := os.WriteFile(p, sample(t), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := Open(p)
	if err != nil {
		t.Fatal(err)
	}
	if d, err := f.TensorData("x"); err != nil || !bytes.Equal(d, seq(20)) {
		t.Errorf("TensorData: %v", err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("GGUF"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(p); err == nil || !strings.Contains(err.Error(), p) {
		t.Errorf("Open of a truncated file: %v (want the path in the error)", err)
	}
}
