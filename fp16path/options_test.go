package fp16path_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/ggsim/ggsim/fp16path"
	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
	"github.com/ggsim/ggsim/tiling"
)

func TestParseRowMap(t *testing.T) {
	m, err := fp16path.ParseRowMap(" 4096:2, 14336:4,1024:32")
	if err != nil {
		t.Fatal(err)
	}
	if want := map[int]int{4096: 2, 14336: 4, 1024: 32}; !reflect.DeepEqual(m, want) {
		t.Fatalf("got %v, want %v", m, want)
	}
	if s := fp16path.FormatRowMap(m); s != "1024:32,4096:2,14336:4" {
		t.Fatalf("FormatRowMap = %q", s)
	}
	if m, err := fp16path.ParseRowMap(""); err != nil || len(m) != 0 {
		t.Fatalf("empty: %v, %v", m, err)
	}
	for _, bad := range []string{"4096", "4096:3", "0:2", "a:2", "4096:2,4096:4", "4096:2,", ":"} {
		if _, err := fp16path.ParseRowMap(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestOptionsFromEnv(t *testing.T) {
	env := map[string]string{
		"GGML_CUDA_GP100_MMVQ_DISABLE":   "1",
		"GGML_CUDA_GP100_NO_ACT_CACHE":   "0",
		"GGML_CUDA_GP100_NO_NORM_FUSION": "yes",
		"GP100_RMAP":                     "5120:4",
	}
	o, err := fp16path.OptionsFromEnv(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	want := fp16path.Options{Disabled: true, NoNormFusion: true, RowMap: map[int]int{5120: 4}}
	if !reflect.DeepEqual(o, want) {
		t.Fatalf("got %+v, want %+v", o, want)
	}
	if o, err := fp16path.OptionsFromEnv(func(string) string { return "" }); err != nil || !reflect.DeepEqual(o, fp16path.Options{}) {
		t.Fatalf("empty environment: %+v, %v", o, err)
	}
	env["GP100_RMAP"] = "5120:5"
	if _, err := fp16path.OptionsFromEnv(func(k string) string { return env[k] }); err == nil {
		t.Fatal("bad GP100_RMAP: no error")
	}
}

// TestRowMap: a matrix listed in RowMap gets its rows per warp (the bits of
// RowsPerWarp = R), one not listed gets RowsPerWarp; Disabled returns ErrDisabled.
func TestRowMap(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	const K, N = 1024, 6
	x, y := realistic(r, quant.Q5_K, K, N)
	run := func(o *fp16path.Options) []float32 {
		got, err := fp16path.MulMat(quant.Q5_K, x, K, N, y, 1, o)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	four := run(&fp16path.Options{RowsPerWarp: 4})
	one := run(nil)
	same := func(a, b []float32) bool {
		for i := range a {
			if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
				return false
			}
		}
		return true
	}
	if same(four, one) {
		t.Fatal("4 rows per warp gives the bits of 1 on this data: the test cannot tell them apart")
	}
	if got := run(&fp16path.Options{RowMap: map[int]int{N: 4}}); !same(got, four) {
		t.Error("RowMap{N: 4} differs from RowsPerWarp 4")
	}
	if got := run(&fp16path.Options{RowsPerWarp: 4, RowMap: map[int]int{N + 1: 1}}); !same(got, four) {
		t.Error("RowMap for another N changed the bits")
	}
	if got := run(&fp16path.Options{RowsPerWarp: 4, RowMap: map[int]int{N: 1}}); !same(got, one) {
		t.Error("RowMap{N: 1} does not override RowsPerWarp 4")
	}
	if _, err := fp16path.MulMat(quant.Q5_K, x, K, N, y, 1, &fp16path.Options{Disabled: true}); !errors.Is(err, fp16path.ErrDisabled) || errors.Is(err, errors.ErrUnsupported) {
		t.Fatalf("Disabled: %v, want ErrDisabled (not a not-modelled error)", err)
	}
}

// TestTypesMatchTiling: the kernels this package has are exactly the types tiling
// dispatches to the fp16 path, and tiling's dispatch says fp16 path for a P100 MUL_MAT
// exactly where MulMat accepts the type and column count.
func TestTypesMatchTiling(t *testing.T) {
	in := map[quant.Type]bool{}
	for _, typ := range tiling.GP100FP16Types {
		in[typ] = true
	}
	for _, typ := range fp16path.Types() {
		if !in[typ] || !fp16path.Supported(typ) {
			t.Errorf("%v: in Types but tiling lists it %v, Supported %v", typ, in[typ], fp16path.Supported(typ))
		}
		delete(in, typ)
	}
	for typ := range in {
		t.Errorf("%v: tiling dispatches it to the fp16 path, which has no kernel", typ)
	}
	p100, err := sim.Lookup("P100")
	if err != nil {
		t.Fatal(err)
	}
	for typ := quant.Type(0); typ < quant.TypeCount; typ++ {
		if !typ.Valid() || typ.BlockSize() == 0 || 256%typ.BlockSize() != 0 {
			continue
		}
		rs, err := typ.RowSize(256)
		if err != nil {
			continue
		}
		for M := 1; M <= fp16path.MaxColumns+1; M++ {
			d, err := tiling.DecideWith(p100, typ, tiling.Shape{K: 256, N: 1, M: int64(M)}, tiling.Options{GP100FP16Path: true})
			if err != nil {
				t.Fatal(err)
			}
			_, err = fp16path.MulMat(typ, make([]byte, rs), 256, 1, make([]float32, 256*M), M, nil)
			if (d.Kernel == tiling.KernelGP100FP16) != (err == nil) {
				t.Errorf("%v, %d columns: tiling says %v, fp16path.MulMat error %v", typ, M, d.Kernel, err)
			}
		}
	}
}

// TestDispatch: a patched build dispatches a P100 Q4_K matmul to the fp16 path, and the
// kill switch sends it back to ggml's MMVQ.
func TestDispatch(t *testing.T) {
	p100, err := sim.Lookup("P100")
	if err != nil {
		t.Fatal(err)
	}
	s := tiling.Shape{K: 4096, N: 4096, M: 1}
	for _, c := range []struct {
		o    *fp16path.Options
		want tiling.Kernel
	}{{nil, tiling.KernelGP100FP16}, {&fp16path.Options{NoActCache: true}, tiling.KernelGP100FP16}, {&fp16path.Options{Disabled: true}, tiling.KernelMMVQ}} {
		d, err := tiling.DecideWith(p100, quant.Q4_K, s, c.o.Dispatch())
		if err != nil {
			t.Fatal(err)
		}
		if d.Kernel != c.want {
			t.Errorf("%+v: %v, want %v", c.o, d.Kernel, c.want)
		}
	}
}
