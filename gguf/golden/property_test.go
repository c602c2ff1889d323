package golden

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"pgregory.net/rapid"

	"github.com/ggsim/ggsim/quant"
)

// TestRoundTripProperty: random valid cases of every op, written by Writer and read by New,
// come back with the same keys and derived shapes, valid, with ids in range.
func TestRoundTripProperty(t *testing.T) {
	types := []quant.Type{quant.Q4_0, quant.Q8_0, quant.Q4_K, quant.Q6_K, quant.IQ2_XXS, quant.MXFP4, quant.Q1_0}
	rapid.Check(t, func(t *rapid.T) {
		w := NewWriter(Meta{Producer: rapid.String().Draw(t, "producer"), Device: Device{Name: "G", CC: rapid.IntRange(0, 1200).Draw(t, "cc"), SMCount: rapid.IntRange(1, 200).Draw(t, "sms")}})
		var want []Case
		n := rapid.IntRange(1, 4).Draw(t, "ncases")
		for i := 0; i < n; i++ {
			typ := rapid.SampledFrom(types).Draw(t, "type")
			K := int64(typ.BlockSize() * rapid.IntRange(1, 2).Draw(t, "kblocks"))
			N := int64(rapid.IntRange(1, 3).Draw(t, "N"))
			rs, _ := typ.RowSize(K)
			name := func(s string) string { return fmt.Sprintf("%s.%d", s, i) }
			op := rapid.SampledFrom([]Op{OpMulMat, OpMulMatID, OpQuantize, OpMulMatGLU, OpMulMatIDGLU}).Draw(t, "op")
			c := Case{Op: op, Dst: name("y")}
			var err error
			add := func(e error) {
				if e != nil && err == nil {
					err = e
				}
			}
			switch op {
			case OpQuantize:
				R := int64(rapid.IntRange(1, 3).Draw(t, "R"))
				add(w.AddF32(name("x"), []int64{K, R}, make([]float32, K*R)))
				add(w.AddTensor(name("y"), typ, []int64{K, R}, make([]byte, rs*R)))
				c.Src = []string{name("x")}
			case OpMulMat, OpMulMatGLU:
				M := int64(rapid.IntRange(1, 3).Draw(t, "M"))
				add(w.AddTensor(name("a"), typ, []int64{K, N}, make([]byte, rs*N)))
				add(w.AddF32(name("b"), []int64{K, M}, make([]float32, K*M)))
				add(w.AddF32(name("y"), []int64{N, M}, make([]float32, N*M)))
				c.Src = []string{name("a"), name("b")}
				if op == OpMulMatGLU {
					add(w.AddTensor(name("up"), typ, []int64{K, N}, make([]byte, rs*N)))
					c.Src = []string{name("a"), name("up"), name("b")}
				}
			default:
				E := int64(rapid.IntRange(1, 4).Draw(t, "E"))
				T := int64(rapid.IntRange(1, 3).Draw(t, "T"))
				U := int64(rapid.IntRange(1, 3).Draw(t, "U"))
				B1 := int64(1)
				if rapid.Bool().Draw(t, "per-slot") {
					B1 = U
				}
				ids := make([]int32, U*T)
				for k := range ids {
					ids[k] = int32(rapid.Int64Range(0, E-1).Draw(t, "id"))
				}
				add(w.AddTensor(name("a"), typ, []int64{K, N, E}, make([]byte, rs*N*E)))
				add(w.AddF32(name("b"), []int64{K, B1, T}, make([]float32, K*B1*T)))
				add(w.AddI32(name("ids"), []int64{U, T}, ids))
				add(w.AddF32(name("y"), []int64{N, U, T}, make([]float32, N*U*T)))
				c.Src = []string{name("a"), name("b"), name("ids")}
				if op == OpMulMatIDGLU {
					add(w.AddTensor(name("up"), typ, []int64{K, N, E}, make([]byte, rs*N*E)))
					c.Src = []string{name("a"), name("up"), name("b"), name("ids")}
				}
			}
			if op.IsGLU() {
				c.GLU = rapid.SampledFrom([]string{GLUSwiGLU, GLUGeGLU, GLUSwiGLUOAI}).Draw(t, "glu")
				c.Fusion = rapid.SampledFrom([]string{"", FusionAllowed, FusionDisabled}).Draw(t, "fusion")
				if c.GLU == GLUSwiGLUOAI {
					c.HasGLUParams, c.GLUAlpha, c.GLULimit = true, rapid.Float32().Draw(t, "alpha"), rapid.Float32().Draw(t, "limit")
				}
			}
			if err != nil {
				t.Fatal(err)
			}
			if _, err := w.AddCase(c); err != nil {
				t.Fatal(err)
			}
			want = append(want, c)
		}
		var b bytes.Buffer
		if _, err := w.WriteTo(&b); err != nil {
			t.Fatal(err)
		}
		f, err := New(bytes.NewReader(b.Bytes()), int64(b.Len()), "p.gguf")
		if err != nil {
			t.Fatal(err)
		}
		if err := f.Err(); err != nil {
			t.Fatal(err)
		}
		if len(f.Cases) != len(want) {
			t.Fatalf("%d cases, want %d", len(f.Cases), len(want))
		}
		for i, c := range f.Cases {
			wc := want[i]
			if c.Op != wc.Op || fmt.Sprint(c.Src) != fmt.Sprint(wc.Src) || c.Dst != wc.Dst || c.GLU != wc.GLU || c.Fusion != wc.Fusion ||
				c.HasGLUParams != wc.HasGLUParams || fmt.Sprint(c.GLUAlpha, c.GLULimit) != fmt.Sprint(wc.GLUAlpha, wc.GLULimit) {
				t.Fatalf("case %d: got %+v, want %+v", i, c, wc)
			}
			if c.Op.IsID() {
				if err := f.CheckIDs(&c); err != nil {
					t.Fatal(err)
				}
			}
		}
	})
}

var genCorpus = flag.Bool("gen-fuzz-corpus", false, "rewrite the seed corpus in testdata/fuzz/FuzzOpen")

// FuzzOpen: New never panics; when it succeeds, every case either has an Err or is valid in
// a way the accessors can use (its tensors read and decode, its ids can be checked).
func FuzzOpen(f *testing.F) {
	f.Add(bytesOf(f, synth(f)))
	f.Fuzz(func(t *testing.T, b []byte) {
		g, err := New(bytes.NewReader(b), int64(len(b)), "fuzz")
		if err != nil {
			return
		}
		for i := range g.Cases {
			c := &g.Cases[i]
			if c.Err != nil {
				continue
			}
			for _, n := range append(append([]string(nil), c.Src...), c.Dst) {
				tt, err := g.Tensor(n)
				if err != nil {
					t.Fatalf("case %d: valid, but tensor %q: %v", i, n, err)
				}
				if tt.Type == quant.F32 {
					if _, err := tt.F32(); err != nil {
						t.Fatal(err)
					}
				}
			}
			if c.Op.IsID() {
				_ = g.CheckIDs(c)
			}
		}
	})
}

func TestGenFuzzCorpus(t *testing.T) {
	p := filepath.Join("testdata", "fuzz", "FuzzOpen", "seed-synth")
	content := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", bytesOf(t, synth(t)))
	if *genCorpus {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if got, err := os.ReadFile(p); err != nil || string(got) != content {
		t.Errorf("seed corpus %s is missing or stale (%v); run go test ./gguf/golden -run TestGenFuzzCorpus -gen-fuzz-corpus", p, err)
	}
}
