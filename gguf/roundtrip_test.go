package gguf

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	parser "github.com/gpustack/gguf-parser-go"
	"pgregory.net/rapid"

	"github.com/ggsim/ggsim/quant"
)

// genValue draws a random value: any scalar type, arrays of any of them, nested arrays up
// to depth levels. Strings have no leading or trailing white space (gguf-parser-go trims
// it) and floats are any bit pattern.
func genValue(t *rapid.T, label string, depth int) Value {
	n := 13
	if depth == 0 {
		n = 12 // no arrays
	}
	switch k := rapid.IntRange(0, n-1).Draw(t, label+".kind"); k {
	case 0:
		return ScalarOf(rapid.Uint8().Draw(t, label))
	case 1:
		return ScalarOf(rapid.Int8().Draw(t, label))
	case 2:
		return ScalarOf(rapid.Uint16().Draw(t, label))
	case 3:
		return ScalarOf(rapid.Int16().Draw(t, label))
	case 4:
		return ScalarOf(rapid.Uint32().Draw(t, label))
	case 5:
		return ScalarOf(rapid.Int32().Draw(t, label))
	case 6:
		return ScalarOf(math.Float32frombits(rapid.Uint32().Draw(t, label)))
	case 7:
		return ScalarOf(rapid.Bool().Draw(t, label))
	case 8:
		return ScalarOf(genString(t, label))
	case 9:
		return ScalarOf(rapid.Uint64().Draw(t, label))
	case 10:
		return ScalarOf(rapid.Int64().Draw(t, label))
	case 11:
		return ScalarOf(math.Float64frombits(rapid.Uint64().Draw(t, label)))
	default:
		return genArray(t, label, depth)
	}
}

func genString(t *rapid.T, label string) string {
	return strings.TrimSpace(rapid.StringN(0, 12, -1).Draw(t, label))
}

func genArray(t *rapid.T, label string, depth int) Value {
	n := rapid.IntRange(0, 6).Draw(t, label+".len")
	switch k := rapid.IntRange(0, 12).Draw(t, label+".elem"); k {
	case 0:
		return ArrayOf(rapid.SliceOfN(rapid.Uint8(), n, n).Draw(t, label))
	case 1:
		return ArrayOf(rapid.SliceOfN(rapid.Int8(), n, n).Draw(t, label))
	case 2:
		return ArrayOf(rapid.SliceOfN(rapid.Uint16(), n, n).Draw(t, label))
	case 3:
		return ArrayOf(rapid.SliceOfN(rapid.Int16(), n, n).Draw(t, label))
	case 4:
		return ArrayOf(rapid.SliceOfN(rapid.Uint32(), n, n).Draw(t, label))
	case 5:
		return ArrayOf(rapid.SliceOfN(rapid.Int32(), n, n).Draw(t, label))
	case 6:
		s := make([]float32, n)
		for i := range s {
			s[i] = math.Float32frombits(rapid.Uint32().Draw(t, label))
		}
		return ArrayOf(s)
	case 7:
		return ArrayOf(rapid.SliceOfN(rapid.Bool(), n, n).Draw(t, label))
	case 8:
		s := make([]string, n)
		for i := range s {
			s[i] = genString(t, label)
		}
		return ArrayOf(s)
	case 9:
		return ArrayOf(rapid.SliceOfN(rapid.Uint64(), n, n).Draw(t, label))
	case 10:
		return ArrayOf(rapid.SliceOfN(rapid.Int64(), n, n).Draw(t, label))
	case 11:
		s := make([]float64, n)
		for i := range s {
			s[i] = math.Float64frombits(rapid.Uint64().Draw(t, label))
		}
		return ArrayOf(s)
	default:
		if depth <= 1 {
			return ArrayOf([]uint8{})
		}
		vs := make([]Value, n)
		for i := range vs {
			vs[i] = genArray(t, fmt.Sprintf("%s[%d]", label, i), depth-1)
		}
		return ArrayOfArrays(vs)
	}
}

type genTensor struct {
	name string
	typ  quant.Type
	dims []int64
	data []byte
}

var validTypes = func() []quant.Type {
	var ts []quant.Type
	for t := quant.Type(0); t < quant.TypeCount; t++ {
		if t.Valid() {
			ts = append(ts, t)
		}
	}
	return ts
}()

func genTensors(t *rapid.T) []genTensor {
	n := rapid.IntRange(0, 5).Draw(t, "ntensors")
	ts := make([]genTensor, n)
	for i := range ts {
		typ := rapid.SampledFrom(validTypes).Draw(t, "type")
		nd := rapid.IntRange(1, MaxDims).Draw(t, "ndims")
		dims := make([]int64, nd)
		dims[0] = int64(typ.BlockSize()) * int64(rapid.IntRange(0, 3).Draw(t, "blocks"))
		for j := 1; j < nd; j++ {
			dims[j] = int64(rapid.IntRange(0, 3).Draw(t, "ne"))
		}
		nel := int64(1)
		for _, d := range dims {
			nel *= d
		}
		size := nel / int64(typ.BlockSize()) * int64(typ.TypeSize())
		data := make([]byte, size)
		seed := rapid.Byte().Draw(t, "seed")
		for k := range data {
			data[k] = byte(k)*31 + seed
		}
		ts[i] = genTensor{fmt.Sprintf("blk.%d.%s", i, rapid.StringMatching(`[a-z_]{0,20}`).Draw(t, "name")), typ, dims, data}
	}
	return ts
}

// TestRoundTrip: Writer then Read gives back every key, value, tensor info and byte, in a
// layout ggml accepts; and gguf-parser-go reads the same file to the same keys and tensors.
func TestRoundTrip(t *testing.T) {
	dir := t.TempDir()
	rapid.Check(t, func(t *rapid.T) {
		w := NewWriter()
		align := uint32(DefaultAlignment)
		setAlign := rapid.Bool().Draw(t, "set alignment")
		if setAlign {
			align = 1 << rapid.IntRange(0, 9).Draw(t, "log2 alignment")
			if err := w.Add(KeyAlignment, ScalarOf(align)); err != nil {
				t.Fatal(err)
			}
		}
		nkv := rapid.IntRange(0, 8).Draw(t, "nkv")
		var kvs []KV
		for i := 0; i < nkv; i++ {
			kv := KV{fmt.Sprintf("rapid.key.%d.%s", i, rapid.StringMatching(`[a-z_.]{0,10}`).Draw(t, "key")), genValue(t, "v", 3)}
			if err := w.Add(kv.Key, kv.Value); err != nil {
				t.Fatal(err)
			}
			kvs = append(kvs, kv)
		}
		ts := genTensors(t)
		for _, gt := range ts {
			if err := w.AddTensor(gt.name, gt.typ, gt.dims, gt.data); err != nil {
				t.Fatal(err)
			}
		}
		var buf bytes.Buffer
		if _, err := w.WriteTo(&buf); err != nil {
			t.Fatal(err)
		}
		b := buf.Bytes()
		f, err := readBytes(b)
		if err != nil {
			t.Fatalf("reading what Writer wrote: %v", err)
		}
		if f.Alignment != int64(align) {
			t.Fatalf("alignment %d, want %d", f.Alignment, align)
		}
		if int64(len(b))%f.Alignment != 0 || f.DataOffset%f.Alignment != 0 {
			t.Fatalf("file size %d / data offset %d not aligned to %d", len(b), f.DataOffset, f.Alignment)
		}
		off := 0
		if setAlign {
			off = 1
		}
		if len(f.KV) != len(kvs)+off {
			t.Fatalf("%d keys, want %d", len(f.KV), len(kvs)+off)
		}
		nested := false
		for i, kv := range kvs {
			got := f.KV[i+off]
			if got.Key != kv.Key || !got.Value.Equal(kv.Value) {
				t.Fatalf("key %d: got %s = %v, want %s = %v", i, got.Key, got.Value, kv.Key, kv.Value)
			}
			nested = nested || kv.Value.ElemType() == TypeArray && kv.Value.Type() == TypeArray
		}
		if err := f.CheckGGMLLayout(); (err == nil) == nested {
			t.Fatalf("CheckGGMLLayout = %v with nested arrays %v", err, nested)
		}
		if len(f.Tensors) != len(ts) {
			t.Fatalf("%d tensors, want %d", len(f.Tensors), len(ts))
		}
		for i, gt := range ts {
			ti := f.Tensors[i]
			if ti.Name != gt.name || ti.Type != gt.typ || !equalDims(ti.Dims, gt.dims) || ti.Size != int64(len(gt.data)) {
				t.Fatalf("tensor %d: got %q %v %v %d, want %q %v %v %d", i, ti.Name, ti.Type, ti.Dims, ti.Size, gt.name, gt.typ, gt.dims, len(gt.data))
			}
			d, err := f.TensorData(gt.name)
			if err != nil || !bytes.Equal(d, gt.data) {
				t.Fatalf("tensor %q data: %v", gt.name, err)
			}
		}

		// The independent reader.
		p := filepath.Join(dir, "rt.gguf")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := compareWithParser(f, p); err != nil {
			t.Fatal(err)
		}
	})
}

// compareWithParser reads path with gguf-parser-go and checks that it sees the keys,
// values, tensor names, types, shapes and offsets f has, and the same data start.
func compareWithParser(f *File, path string) error {
	pf, err := parser.ParseGGUFFile(path)
	if err != nil {
		return fmt.Errorf("gguf-parser-go: %v", err)
	}
	if uint32(pf.Header.Version) != f.Version {
		return fmt.Errorf("version: parser %d, ours %d", pf.Header.Version, f.Version)
	}
	if pf.TensorDataStartOffset != f.DataOffset {
		return fmt.Errorf("data start: parser %d, ours %d", pf.TensorDataStartOffset, f.DataOffset)
	}
	kvs := pf.Header.MetadataKV
	if len(kvs) != len(f.KV) {
		return fmt.Errorf("parser has %d keys, ours %d", len(kvs), len(f.KV))
	}
	for i, kv := range f.KV {
		pk := kvs[i]
		if pk.Key != kv.Key {
			return fmt.Errorf("key %d: parser %q, ours %q", i, pk.Key, kv.Key)
		}
		if uint32(pk.ValueType) != uint32(kv.Value.Type()) {
			return fmt.Errorf("key %q: parser type %v, ours %v", kv.Key, pk.ValueType, kv.Value.Type())
		}
		if err := sameValue(kv.Value, pk.Value); err != nil {
			return fmt.Errorf("key %q: %v", kv.Key, err)
		}
	}
	if len(pf.TensorInfos) != len(f.Tensors) {
		return fmt.Errorf("parser has %d tensors, ours %d", len(pf.TensorInfos), len(f.Tensors))
	}
	for i, ti := range f.Tensors {
		pt := pf.TensorInfos[i]
		if pt.Name != ti.Name || uint32(pt.Type) != uint32(ti.Type) || pt.Offset != ti.Offset || int(pt.NDimensions) != len(ti.Dims) {
			return fmt.Errorf("tensor %d: parser %q %v off %d ndims %d, ours %q %v off %d ndims %d",
				i, pt.Name, pt.Type, pt.Offset, pt.NDimensions, ti.Name, ti.Type, ti.Offset, len(ti.Dims))
		}
		for j := range ti.Dims {
			if pt.Dimensions[j] != uint64(ti.Dims[j]) {
				return fmt.Errorf("tensor %q: parser dims %v, ours %v", ti.Name, pt.Dimensions, ti.Dims)
			}
		}
		if pt.Bytes() != uint64(ti.Size) {
			return fmt.Errorf("tensor %q: parser %d bytes, ours %d", ti.Name, pt.Bytes(), ti.Size)
		}
	}
	return nil
}

// sameValue compares our value with gguf-parser-go's (floats by bits).
func sameValue(v Value, x any) error {
	if v.Type() == TypeArray {
		a, ok := x.(parser.GGUFMetadataKVArrayValue)
		if !ok {
			return fmt.Errorf("parser value %T is not an array", x)
		}
		if uint32(a.Type) != uint32(v.ElemType()) || a.Len != uint64(v.Len()) || len(a.Array) != v.Len() {
			return fmt.Errorf("parser array of %d %v, ours of %d %v", a.Len, a.Type, v.Len(), v.ElemType())
		}
		if vs, ok := v.Arrays(); ok {
			for i := range vs {
				if err := sameValue(vs[i], a.Array[i]); err != nil {
					return fmt.Errorf("[%d]: %v", i, err)
				}
			}
			return nil
		}
		for i := 0; i < v.Len(); i++ {
			var e Value
			switch s := v.Interface().(type) {
			case []string:
				e = ScalarOf(s[i])
			default:
				e = Value{typ: v.ElemType(), x: elemAt(s, i)}
			}
			if err := sameValue(e, a.Array[i]); err != nil {
				return fmt.Errorf("[%d]: %v", i, err)
			}
		}
		return nil
	}
	switch y := x.(type) {
	case float32:
		if f, ok := As[float32](v); ok && math.Float32bits(f) == math.Float32bits(y) {
			return nil
		}
	case float64:
		if f, ok := As[float64](v); ok && math.Float64bits(f) == math.Float64bits(y) {
			return nil
		}
	default:
		if v.Interface() == x {
			return nil
		}
	}
	return fmt.Errorf("parser %T %v, ours %v", x, x, v)
}

// TestGoldenSlicesAgreeWithParser reads the committed golden slices with this package and
// with gguf-parser-go and compares everything both report.
func TestGoldenSlicesAgreeWithParser(t *testing.T) {
	paths, err := filepath.Glob("../testdata/golden/*.gguf")
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) != 5 {
		t.Fatalf("found %d golden slices in ../testdata/golden, want 5", len(paths))
	}
	for _, p := range paths {
		f, err := Open(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := f.CheckGGMLLayout(); err != nil {
			t.Errorf("%s: %v", p, err)
		}
		if len(f.KV) < 10 || len(f.Tensors) < 3 {
			t.Errorf("%s: only %d keys and %d tensors", p, len(f.KV), len(f.Tensors))
		}
		if err := compareWithParser(f, p); err != nil {
			t.Errorf("%s: %v", p, err)
		}
		f.Close()
	}
}

// TestCompareWithParserDetects shows the comparison above can fail: a changed value, type,
// shape or offset on our side is reported.
func TestCompareWithParserDetects(t *testing.T) {
	p := "../testdata/golden/ggml-h200-dev-moe.slice.gguf"
	mutations := []func(f *File){
		func(f *File) { f.KV[1].Value = ScalarOf(uint32(2)) },
		func(f *File) { f.KV[3].Value = ScalarOf("NVIDIA H100") },
		func(f *File) { f.KV[len(f.KV)-1].Value = ArrayOf([]string{"w.0", "x.0", "ids.1"}) },
		func(f *File) { f.Tensors[2].Offset += 32 },
		func(f *File) { f.Tensors[0].Type = quant.Q4_0 },
		func(f *File) { f.Tensors[1].Dims = []int64{512, 1, 2} },
		func(f *File) { f.DataOffset += 32 },
	}
	for i, m := range mutations {
		f, err := Open(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := compareWithParser(f, p); err != nil {
			t.Fatalf("unmutated: %v", err)
		}
		m(f)
		if err := compareWithParser(f, p); err == nil {
			t.Errorf("mutation %d not detected", i)
		}
		f.Close()
	}
}
