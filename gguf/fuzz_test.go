package gguf

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/ggsim/ggsim/quant"
)

var genCorpus = flag.Bool("gen-fuzz-corpus", false, "rewrite the seed corpus in testdata/fuzz/FuzzRead")

// fuzzSeeds are small files: valid ones made by Writer and by hand (v2, gaps, alignment 1,
// metadata only, nested arrays) and a few malformed ones near the edges of validity.
func fuzzSeeds(t testing.TB) map[string][]byte {
	seeds := map[string][]byte{"sample": sample(t)}

	w := NewWriter()
	_ = w.Add("general.architecture", ScalarOf("golden"))
	_ = w.Add("golden.case.0.src", ArrayOf([]string{"w", "x"}))
	_ = w.AddTensor("w", quant.Q4_K, []int64{256, 2}, seq(288))
	_ = w.AddTensor("x", quant.F32, []int64{256, 1}, seq(1024))
	_ = w.AddTensor("e", quant.F16, []int64{0, 4}, nil)
	var b bytes.Buffer
	_, _ = w.WriteTo(&b)
	seeds["golden-like"] = b.Bytes()

	w = NewWriter()
	_ = w.Add(KeyAlignment, ScalarOf(uint32(1)))
	_ = w.AddTensor("a", quant.I8, []int64{3}, seq(3))
	_ = w.AddTensor("b", quant.I16, []int64{1, 1, 1, 1}, seq(2))
	b.Reset()
	_, _ = w.WriteTo(&b)
	seeds["align1"] = b.Bytes()

	var r raw
	r.header(2, 1, 1).kvU32("k", 1).tensor("t", quant.F32, 0, 2).pad(32)
	r.Write(seq(8))
	seeds["v2"] = r.Bytes()

	r = raw{}
	r.header(3, 2, 0).tensor("a", quant.F32, 64, 4).tensor("b", quant.F32, 0, 2).pad(32)
	r.Write(seq(80))
	seeds["gap"] = r.Bytes()

	r = raw{}
	r.header(3, 0, 2).kvU32("k", 3).str("s").u32(uint32(TypeString)).str("v")
	seeds["meta-only"] = r.Bytes()

	seeds["nested"] = nested(3)
	seeds["too-nested"] = nested(MaxArrayDepth + 1)

	r = raw{}
	r.header(3, 2, 0).tensor("a", quant.F32, 0, 16).tensor("b", quant.F32, 32, 8).pad(32)
	r.Write(seq(64))
	seeds["overlap"] = r.Bytes()

	r = raw{}
	r.header(3, 1, 0).tensor("t", quant.F32, 0, 1<<32, 1<<31).pad(32)
	seeds["ne-overflow"] = r.Bytes()

	r = raw{}
	r.header(3, 0, 1).str("k").u32(uint32(TypeArray)).u32(uint32(TypeUint32)).u64(1 << 60)
	seeds["array-length"] = r.Bytes()

	s := sample(t)
	seeds["truncated"] = s[:len(s)/2]
	return seeds
}

// FuzzRead: Read never panics or over-allocates; whatever it accepts satisfies the File
// invariants (every tensor's data readable, exactly Size bytes), and writing it again with
// Writer gives a file Read reads back to the same keys, values, tensors and bytes, in a
// layout ggml accepts (the round trip is skipped for alignments above 64 KiB, see below).
func FuzzRead(f *testing.F) {
	for _, b := range fuzzSeeds(f) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		g, err := readBytes(b)
		if err != nil {
			if _, ok := err.(*FormatError); !ok {
				t.Fatalf("error %T is not a *FormatError: %v", err, err)
			}
			return
		}
		for _, ti := range g.Tensors {
			if _, err := g.TensorData(ti.Name); err != nil {
				t.Fatalf("tensor %q: %v", ti.Name, err)
			}
		}
		if g.Alignment > 1<<16 {
			// A file without tensors may declare any power-of-two alignment; writing it
			// again pads the metadata to that alignment (as ggml does), up to 2 GiB.
			return
		}
		w := NewWriter()
		for _, kv := range g.KV {
			if err := w.Add(kv.Key, kv.Value); err != nil {
				t.Fatalf("Writer refuses key %q that Read accepted: %v", kv.Key, err)
			}
		}
		data := make([][]byte, len(g.Tensors))
		for i, ti := range g.Tensors {
			d, err := g.TensorData(ti.Name)
			if err != nil || int64(len(d)) != ti.Size {
				t.Fatalf("tensor %q: %d bytes, %v", ti.Name, len(d), err)
			}
			data[i] = d
			if err := w.AddTensor(ti.Name, ti.Type, ti.Dims, d); err != nil {
				t.Fatalf("Writer refuses tensor %q that Read accepted: %v", ti.Name, err)
			}
		}
		var out bytes.Buffer
		if _, err := w.WriteTo(&out); err != nil {
			t.Fatal(err)
		}
		h, err := readBytes(out.Bytes())
		if err != nil {
			t.Fatalf("re-reading: %v", err)
		}
		if len(h.KV) != len(g.KV) || len(h.Tensors) != len(g.Tensors) || h.Alignment != g.Alignment {
			t.Fatalf("re-read: %d keys, %d tensors, alignment %d; want %d, %d, %d",
				len(h.KV), len(h.Tensors), h.Alignment, len(g.KV), len(g.Tensors), g.Alignment)
		}
		nested := false
		for i := range g.KV {
			if h.KV[i].Key != g.KV[i].Key || !h.KV[i].Value.Equal(g.KV[i].Value) {
				t.Fatalf("key %d changed: %q = %v, was %q = %v", i, h.KV[i].Key, h.KV[i].Value, g.KV[i].Key, g.KV[i].Value)
			}
			v := g.KV[i].Value
			nested = nested || v.Type() == TypeArray && v.ElemType() == TypeArray
		}
		for i, ti := range g.Tensors {
			hi := h.Tensors[i]
			if hi.Name != ti.Name || hi.Type != ti.Type || !equalDims(hi.Dims, ti.Dims) || hi.Size != ti.Size {
				t.Fatalf("tensor %d changed: %+v, was %+v", i, hi, ti)
			}
			d, err := h.TensorData(ti.Name)
			if err != nil || !bytes.Equal(d, data[i]) {
				t.Fatalf("tensor %q data changed (%v)", ti.Name, err)
			}
		}
		if err := h.CheckGGMLLayout(); (err != nil) != nested {
			t.Fatalf("CheckGGMLLayout of Writer's output = %v (nested arrays: %v)", err, nested)
		}
	})
}

// TestGenFuzzCorpus writes the seed corpus when run with -gen-fuzz-corpus, and otherwise
// checks the committed corpus has every seed.
func TestGenFuzzCorpus(t *testing.T) {
	dir := filepath.Join("testdata", "fuzz", "FuzzRead")
	for name, b := range fuzzSeeds(t) {
		p := filepath.Join(dir, "seed-"+name)
		content := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", b)
		if *genCorpus {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(p)
		if err != nil || string(got) != content {
			t.Errorf("seed corpus file %s is missing or stale (%v); run go test ./gguf -run TestGenFuzzCorpus -gen-fuzz-corpus", p, err)
		}
	}
}
