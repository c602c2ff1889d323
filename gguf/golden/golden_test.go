package golden

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/ggsim/ggsim/gguf"
	"github.com/ggsim/ggsim/quant"
)

var testMeta = Meta{
	Producer:   "unit test",
	Device:     Device{Name: "Test GPU", CC: 890, SMCount: 7, Driver: "1.2.3"},
	GGMLCommit: "d99724f2b141fed9e1a9f402213506c081433465",
	GGMLBuild:  "none",
}

func zeros(n int) []byte { return make([]byte, n) }

// synth builds a valid golden file with one case of each op.
func synth(t testing.TB) *Writer {
	t.Helper()
	w := NewWriter(testMeta)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	const K, N, M, E, T, U = 64, 3, 2, 4, 3, 2
	q := quant.Q8_0
	rs := int(K / 32 * 34)
	must(w.AddTensor("a", q, []int64{K, N}, zeros(rs*N)))
	must(w.AddTensor("up", q, []int64{K, N}, zeros(rs*N)))
	must(w.AddF32("b", []int64{K, M}, make([]float32, K*M)))
	must(w.AddF32("y", []int64{N, M}, make([]float32, N*M)))
	must(w.AddF32("yglu", []int64{N, M}, make([]float32, N*M)))
	must(w.AddTensor("as", q, []int64{K, N, E}, zeros(rs*N*E)))
	must(w.AddTensor("asup", q, []int64{K, N, E}, zeros(rs*N*E)))
	must(w.AddF32("bid", []int64{K, 1, T}, make([]float32, K*T)))
	must(w.AddI32("ids", []int64{U, T}, []int32{0, 3, 1, 2, 3, 0}))
	must(w.AddF32("yid", []int64{N, U, T}, make([]float32, N*U*T)))
	must(w.AddF32("yidglu", []int64{N, U, T}, make([]float32, N*U*T)))
	must(w.AddF32("qsrc", []int64{K, 2}, make([]float32, K*2)))
	must(w.AddTensor("qdst", q, []int64{K, 2}, zeros(rs*2)))
	for _, c := range []Case{
		{Op: OpMulMat, Src: []string{"a", "b"}, Dst: "y"},
		{Op: OpMulMatID, Src: []string{"as", "bid", "ids"}, Dst: "yid"},
		{Op: OpQuantize, Src: []string{"qsrc"}, Dst: "qdst"},
		{Op: OpMulMatGLU, Src: []string{"a", "up", "b"}, Dst: "yglu", GLU: GLUSwiGLUOAI, GLUAlpha: 1.702, GLULimit: 7, HasGLUParams: true, Fusion: FusionDisabled},
		{Op: OpMulMatIDGLU, Src: []string{"as", "asup", "bid", "ids"}, Dst: "yidglu", GLU: GLUGeGLU, Fusion: FusionAllowed},
	} {
		if _, err := w.AddCase(c); err != nil {
			t.Fatal(err)
		}
	}
	return w
}

func bytesOf(t testing.TB, w *Writer) []byte {
	t.Helper()
	var b bytes.Buffer
	if _, err := w.WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func open(b []byte, name string) (*File, error) { return New(bytes.NewReader(b), int64(len(b)), name) }

func TestSynthRoundTrip(t *testing.T) {
	b := bytesOf(t, synth(t))
	f, err := open(b, "synth.gguf")
	if err != nil {
		t.Fatal(err)
	}
	if f.Meta != testMeta || f.Version != SchemaVersion {
		t.Errorf("meta %+v version %d", f.Meta, f.Version)
	}
	if err := f.Err(); err != nil {
		t.Fatal(err)
	}
	if err := f.GGUF.CheckGGMLLayout(); err != nil {
		t.Error(err)
	}
	want := []Shape{
		{K: 64, N: 3, M: 2},
		{K: 64, N: 3, E: 4, B1: 1, T: 3, U: 2},
		{K: 64, R: 2},
		{K: 64, N: 3, M: 2},
		{K: 64, N: 3, E: 4, B1: 1, T: 3, U: 2},
	}
	if len(f.Cases) != len(want) {
		t.Fatalf("%d cases", len(f.Cases))
	}
	for i, c := range f.Cases {
		if c.Index != i || c.Shape != want[i] || c.WeightType != quant.Q8_0 {
			t.Errorf("case %d: index %d shape %+v type %v", i, c.Index, c.Shape, c.WeightType)
		}
		if c.Op.IsID() {
			if err := f.CheckIDs(&f.Cases[i]); err != nil {
				t.Error(err)
			}
		}
	}
	c := f.Cases[3]
	if c.GLU != GLUSwiGLUOAI || !c.HasGLUParams || c.GLUAlpha != 1.702 || c.GLULimit != 7 || c.Fusion != FusionDisabled {
		t.Errorf("GLU case: %+v", c)
	}
	if c := f.Cases[4]; c.GLU != GLUGeGLU || c.HasGLUParams || c.Fusion != FusionAllowed {
		t.Errorf("GLU id case: %+v", c)
	}
	ids, err := f.Tensor("ids")
	if err != nil {
		t.Fatal(err)
	}
	v, err := ids.I32()
	if err != nil || fmt.Sprint(v) != "[0 3 1 2 3 0]" || ids.NE != [4]int64{2, 3, 1, 1} {
		t.Errorf("ids = %v %v, %v", v, ids.NE, err)
	}
	if _, err := ids.F32(); err == nil {
		t.Error("F32 of an i32 tensor succeeded")
	}
	if _, err := f.Tensor("nope"); err == nil || !strings.Contains(err.Error(), "synth.gguf") {
		t.Errorf("missing tensor: %v", err)
	}
}

func TestF32Decode(t *testing.T) {
	w := NewWriter(testMeta)
	vals := []float32{1, -2.5, float32(math.Inf(1)), math.Float32frombits(0x7fc00001), math.Float32frombits(1)}
	if err := w.AddF32("v", []int64{5}, vals); err != nil {
		t.Fatal(err)
	}
	f, err := open(bytesOf(t, w), "")
	if err != nil {
		t.Fatal(err)
	}
	tt, err := f.Tensor("v")
	if err != nil {
		t.Fatal(err)
	}
	got, err := tt.F32()
	if err != nil || len(got) != len(vals) {
		t.Fatal(err)
	}
	for i := range vals {
		if math.Float32bits(got[i]) != math.Float32bits(vals[i]) {
			t.Errorf("[%d] = %#x, want %#x", i, math.Float32bits(got[i]), math.Float32bits(vals[i]))
		}
	}
	if _, err := tt.I32(); err == nil {
		t.Error("I32 of an f32 tensor succeeded")
	}
}

// mutate rewrites a valid golden file's keys and tensors through gguf.Writer, so tests can
// make files golden.Writer refuses to write.
func mutate(t *testing.T, b []byte, kv func([]gguf.KV) []gguf.KV, keep func(gguf.TensorInfo) (gguf.TensorInfo, bool)) []byte {
	t.Helper()
	g, err := gguf.Read(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	w := gguf.NewWriter()
	kvs := append([]gguf.KV(nil), g.KV...)
	if kv != nil {
		kvs = kv(kvs)
	}
	for _, x := range kvs {
		if err := w.Add(x.Key, x.Value); err != nil {
			t.Fatal(err)
		}
	}
	for _, ti := range g.Tensors {
		d, _ := g.TensorData(ti.Name)
		if keep != nil {
			var ok bool
			if ti, ok = keep(ti); !ok {
				continue
			}
			if int64(len(d)) != ti.Size {
				d = make([]byte, ti.Size)
			}
		}
		if err := w.AddTensor(ti.Name, ti.Type, ti.Dims, d); err != nil {
			t.Fatal(err)
		}
	}
	var out bytes.Buffer
	if _, err := w.WriteTo(&out); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

func setKey(key string, v gguf.Value) func([]gguf.KV) []gguf.KV {
	return func(kvs []gguf.KV) []gguf.KV {
		for i := range kvs {
			if kvs[i].Key == key {
				kvs[i].Value = v
				return kvs
			}
		}
		return append(kvs, gguf.KV{Key: key, Value: v})
	}
}

func dropKey(key string) func([]gguf.KV) []gguf.KV {
	return func(kvs []gguf.KV) []gguf.KV {
		for i := range kvs {
			if kvs[i].Key == key {
				return append(kvs[:i], kvs[i+1:]...)
			}
		}
		panic("no key " + key)
	}
}

func retensor(name string, typ quant.Type, dims ...int64) func(gguf.TensorInfo) (gguf.TensorInfo, bool) {
	return func(ti gguf.TensorInfo) (gguf.TensorInfo, bool) {
		if ti.Name == name {
			ti.Type, ti.Dims = typ, dims
			nel := int64(1)
			for _, d := range dims {
				nel *= d
			}
			ti.Size = nel / int64(typ.BlockSize()) * int64(typ.TypeSize())
		}
		return ti, true
	}
}

func str(s string) gguf.Value { return gguf.ScalarOf(s) }

// TestFileErrors: problems that make the whole file unusable.
func TestFileErrors(t *testing.T) {
	b := bytesOf(t, synth(t))
	cases := []struct {
		name string
		kv   func([]gguf.KV) []gguf.KV
		want string
	}{
		{"version", setKey(KeyVersion, gguf.ScalarOf(uint32(2))), "golden schema version 2 is not supported"},
		{"version type", setKey(KeyVersion, gguf.ScalarOf(int32(1))), `key "golden.version" is i32, want u32`},
		{"arch", setKey(KeyArchitecture, str("llama")), "not a golden file"},
		{"no arch", dropKey(KeyArchitecture), `key "general.architecture": key not found`},
		{"no driver", dropKey(KeyDriver), `"golden.device.driver": key not found`},
		{"no commit", dropKey(KeyCommit), `"golden.ggml.commit": key not found`},
		{"cc type", setKey(KeyDeviceCC, str("9.0")), `"golden.device.cc" is str, want u32`},
		{"count huge", setKey(KeyCaseCount, gguf.ScalarOf(uint32(math.MaxUint32))), "golden.case.count is 4294967295 but the file has only"},
		{"count small", setKey(KeyCaseCount, gguf.ScalarOf(uint32(4))), `key "golden.case.4.op" names a case outside 0..3`},
		{"stray case key", setKey("golden.case.07.op", str("mul_mat")), `"golden.case.07.op" names a case outside`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := open(mutate(t, b, c.kv, nil), "bad.gguf")
			if err == nil {
				t.Fatal("no error")
			}
			if !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "bad.gguf") {
				t.Errorf("error %q does not say %q and the file name", err, c.want)
			}
		})
	}
	if _, err := open(b[:100], "cut.gguf"); err == nil || !strings.Contains(err.Error(), "cut.gguf") {
		t.Errorf("truncated file: %v", err)
	}
}

// TestCaseErrors: each problem of one case goes into that case's Err and leaves the others
// valid.
func TestCaseErrors(t *testing.T) {
	b := bytesOf(t, synth(t))
	ck := func(i int, k string) string { return fmt.Sprintf("golden.case.%d.%s", i, k) }
	cases := []struct {
		name  string
		kv    func([]gguf.KV) []gguf.KV
		keep  func(gguf.TensorInfo) (gguf.TensorInfo, bool)
		index int
		want  string
	}{
		{"no op", dropKey(ck(0, "op")), nil, 0, `key "golden.case.0.op": key not found`},
		{"src type", setKey(ck(0, "src"), str("a")), nil, 0, `"golden.case.0.src" is str, want array of str`},
		{"src count", setKey(ck(0, "src"), gguf.ArrayOf([]string{"a"})), nil, 0, `1 sources ["a"], mul_mat takes 2`},
		{"missing tensor", setKey(ck(0, "src"), gguf.ArrayOf([]string{"a", "zz"})), nil, 0, `b tensor "zz" does not exist`},
		{"missing dst", setKey(ck(0, "dst"), str("zz")), nil, 0, `dst tensor "zz" does not exist`},
		{"dst is src", setKey(ck(0, "dst"), str("b")), nil, 0, `"b" is both a source and the destination`},
		{"a f32", setKey(ck(0, "src"), gguf.ArrayOf([]string{"b", "b"})), nil, 0, `a "b" is f32, want a quantized type`},
		{"b type", nil, retensor("b", quant.F16, 64, 2), 0, `b "b" is f16, want f32`},
		{"b K", nil, retensor("b", quant.F32, 32, 2), 0, `b "b" has shape [32 2], want [K, M] = [64 2]`},
		{"b 3d", nil, retensor("b", quant.F32, 64, 1, 2), 0, `b "b" has shape [64 1 2], want [K, M] = [64 1]`},
		{"dst shape", nil, retensor("y", quant.F32, 2, 3), 0, `dst "y" has shape [2 3], want [N, M] = [3 2]`},
		{"dst type", nil, retensor("y", quant.F16, 3, 2), 0, `dst "y" is f16, want f32`},
		{"empty", nil, retensor("b", quant.F32, 64, 0), 0, "empty case"},
		{"ids type", nil, retensor("ids", quant.F32, 2, 3), 1, `ids "ids" is f32, want i32`},
		{"ids T", nil, retensor("ids", quant.I32, 2, 2), 1, `ids "ids" has shape [2 2], want [U, T] = [2 3]`},
		{"b T", nil, retensor("bid", quant.F32, 64, 1, 2), 1, `ids "ids" has shape [2 3], want [U, T] = [2 2]`},
		{"B1 divides U", nil, retensor("bid", quant.F32, 64, 3, 3), 1, "B1 = 3 does not divide ids' U = 2"},
		{"quantize src", nil, retensor("qsrc", quant.F16, 64, 2), 2, `src "qsrc" is f16, want f32`},
		{"quantize dst", nil, retensor("qdst", quant.F32, 64, 2), 2, `dst "qdst" is f32, want a quantized type`},
		{"quantize shape", nil, retensor("qdst", quant.Q8_0, 64, 3), 2, `dst "qdst" has shape [64 3], want [K, R] like the source = [64 2]`},
		{"glu missing", dropKey(ck(3, "glu")), nil, 3, "missing glu"},
		{"glu unknown", setKey(ck(3, "glu"), str("reglu")), nil, 3, `unknown glu "reglu"`},
		{"glu type", setKey(ck(3, "glu"), gguf.ScalarOf(uint32(1))), nil, 3, `"golden.case.3.glu" is u32, want str`},
		{"oai no alpha", func(kvs []gguf.KV) []gguf.KV { return dropKey(ck(3, "glu_limit"))(dropKey(ck(3, "glu_alpha"))(kvs)) }, nil, 3, "swiglu_oai needs glu_alpha and glu_limit"},
		{"alpha alone", dropKey(ck(3, "glu_limit")), nil, 3, "glu_alpha and glu_limit must be given together"},
		{"alpha type", setKey(ck(3, "glu_alpha"), gguf.ScalarOf(1.702)), nil, 3, "must be f32, are f64 and f32"},
		{"alpha on geglu", func(kvs []gguf.KV) []gguf.KV {
			return setKey(ck(4, "glu_limit"), gguf.ScalarOf(float32(1)))(setKey(ck(4, "glu_alpha"), gguf.ScalarOf(float32(1)))(kvs))
		}, nil, 4, `glu_alpha/glu_limit given for glu "geglu"`},
		{"fusion", setKey(ck(4, "fusion"), str("maybe")), nil, 4, `unknown fusion "maybe"`},
		{"glu on mul_mat", setKey(ck(0, "glu"), str("swiglu")), nil, 0, "GLU keys (glu, glu_alpha, glu_limit, fusion) on a mul_mat case"},
		{"fusion on quantize", setKey(ck(2, "fusion"), str("allowed")), nil, 2, "on a quantize case"},
		{"up shape", nil, retensor("up", quant.Q8_0, 64, 4), 3, `up "up" has shape [64 4], want [K, N] = [64 3]`},
		{"up type", nil, retensor("up", quant.F32, 64, 3), 3, `up "up" is f32, want a quantized type`},
		{"asup shape", nil, retensor("asup", quant.Q8_0, 64, 3, 3), 4, `up "asup" has shape [64 3 3], want [K, N, E] = [64 3 4]`},
		{"glu id src count", setKey(ck(4, "src"), gguf.ArrayOf([]string{"as", "bid", "ids"})), nil, 4, "3 sources"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, err := open(mutate(t, b, c.kv, c.keep), "bad.gguf")
			if err != nil {
				t.Fatal(err)
			}
			for i, cs := range f.Cases {
				if i != c.index && cs.Err != nil && c.keep == nil {
					t.Errorf("case %d also invalid: %v", i, cs.Err)
				}
			}
			err = f.Cases[c.index].Err
			if err == nil {
				t.Fatal("case valid")
			}
			want := []string{"bad.gguf", fmt.Sprintf("case %d", c.index), c.want}
			for _, w := range want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			var ce *CaseError
			if !errors.As(err, &ce) || ce.Index != c.index {
				t.Errorf("error %T is not a *CaseError for case %d", err, c.index)
			}
			if f.Err() == nil {
				t.Error("File.Err is nil")
			}
		})
	}
}

func TestUnknownOp(t *testing.T) {
	b := mutate(t, bytesOf(t, synth(t)), setKey("golden.case.2.op", str("flash_attn_ext")), nil)
	f, err := open(b, "x.gguf")
	if err != nil {
		t.Fatal(err)
	}
	c := f.Cases[2]
	if c.Op != "flash_attn_ext" || c.Op.Known() || !errors.Is(c.Err, ErrUnknownOp) || c.Dst != "qdst" || len(c.Src) != 1 {
		t.Errorf("unknown op case: %+v", c)
	}
	if !strings.Contains(c.Err.Error(), `op "flash_attn_ext" is not supported`) || !strings.Contains(c.Err.Error(), "x.gguf: case 2") {
		t.Errorf("message: %v", c.Err)
	}
	for i, c := range f.Cases {
		if i != 2 && c.Err != nil {
			t.Errorf("case %d: %v", i, c.Err)
		}
	}
	if !errors.Is(f.Err(), ErrUnknownOp) {
		t.Errorf("File.Err = %v", f.Err())
	}
}

func TestCheckIDs(t *testing.T) {
	b := bytesOf(t, synth(t))
	// Replace the ids' bytes: token 2, slot 1 gets expert 4 (E = 4).
	g, _ := gguf.Read(bytes.NewReader(b), int64(len(b)))
	ti, _ := g.Tensor("ids")
	bad := append([]byte(nil), b...)
	off := g.DataOffset + int64(ti.Offset) + 4*5
	bad[off] = 4
	f, err := open(bad, "ids.gguf")
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Err(); err != nil {
		t.Fatalf("ids are checked lazily, yet Open complained: %v", err)
	}
	for _, i := range []int{1, 4} {
		err := f.CheckIDs(&f.Cases[i])
		if err == nil || !strings.Contains(err.Error(), "id 4 at slot 1 of token 2 is outside [0, 4)") || !strings.Contains(err.Error(), fmt.Sprintf("ids.gguf: case %d", i)) {
			t.Errorf("case %d: %v", i, err)
		}
	}
	bad[off] = 0xff // -1 as little-endian int32 needs all four bytes
	bad[off+1], bad[off+2], bad[off+3] = 0xff, 0xff, 0xff
	f, _ = open(bad, "ids.gguf")
	if err := f.CheckIDs(&f.Cases[1]); err == nil || !strings.Contains(err.Error(), "id -1") {
		t.Errorf("negative id: %v", err)
	}
	if err := f.CheckIDs(&f.Cases[0]); err == nil {
		t.Error("CheckIDs of a mul_mat case succeeded")
	}
}

func TestWriterRefuses(t *testing.T) {
	w := synth(t)
	for _, k := range []string{KeyVersion, KeyDeviceCC, "golden.case.0.op", "golden.case.count", gguf.KeyAlignment} {
		if err := w.Add(k, gguf.ScalarOf(uint32(1))); err == nil {
			t.Errorf("Add(%q) accepted", k)
		}
	}
	if err := w.Add("golden.slice.source", str("x")); err != nil {
		t.Error(err)
	}
	if err := w.Add("golden.slice.source", str("y")); err == nil {
		t.Error("duplicate extra key accepted")
	}
	if err := w.AddTensor("a", quant.F32, []int64{1}, zeros(4)); err == nil {
		t.Error("duplicate tensor accepted")
	}
	if err := w.AddTensor("odd", quant.F32, []int64{2}, zeros(4)); err == nil {
		t.Error("tensor with wrong byte count accepted")
	}
	if err := w.AddI32("badids", []int64{2, 3}, []int32{0, 1, 2, 3, 4, 0}); err != nil {
		t.Fatal(err)
	}
	bad := []Case{
		{Op: "conv", Src: []string{"a"}, Dst: "y"},
		{Op: OpMulMat, Src: []string{"a", "b", "b"}, Dst: "y"},
		{Op: OpMulMat, Src: []string{"a", "qdst"}, Dst: "y"},
		{Op: OpMulMatID, Src: []string{"as", "bid", "badids"}, Dst: "yid"},
		{Op: OpMulMatGLU, Src: []string{"a", "up", "b"}, Dst: "yglu"},
		{Op: OpMulMat, Src: []string{"a", "b"}, Dst: "y", Fusion: FusionAllowed},
	}
	for i, c := range bad {
		if _, err := w.AddCase(c); err == nil {
			t.Errorf("bad case %d accepted", i)
		}
	}
	// The refused cases left nothing behind.
	f, err := open(bytesOf(t, w), "")
	if err != nil || len(f.Cases) != 5 || f.Err() != nil {
		t.Fatalf("%v, %d cases, %v", err, len(f.Cases), f.Err())
	}
	if v, ok := f.GGUF.Lookup("golden.slice.source"); !ok || !v.Equal(str("x")) {
		t.Error("extra key lost")
	}
}
