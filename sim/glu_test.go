package sim

import (
	"encoding/binary"
	"math"
	"os"
	"testing"
)

// h200-glu-samples.f32 is the first 8192 records of glu_samples.f32 written by
// gpu/measure/mufu_probe.cu on an H200 (2026-12-02, gpu/testdata/h200-mufu/README.md):
// 11 float32 per record: x, g, alpha, limit, silu(x), gelu(x), oai(x, g, alpha, limit),
// g*silu(x), g*gelu(x), ex2.approx(x), tanh.approx(x), the formulas compiled by nvcc 13.0
// with -use_fast_math. GGSIM_GLU_SAMPLES=FILE checks another (e.g. the whole) record.
func TestGLUSamplesH200(t *testing.T) {
	path := "testdata/h200-glu-samples.f32"
	if p := os.Getenv("GGSIM_GLU_SAMPLES"); p != "" {
		path = p
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	const rec = 11
	if len(b) == 0 || len(b)%(4*rec) != 0 {
		t.Fatalf("%s: %d bytes, not a positive multiple of %d", path, len(b), 4*rec)
	}
	f := func(i, k int) float32 { return math.Float32frombits(binary.LittleEndian.Uint32(b[4*(rec*i+k):])) }
	names := []string{"silu", "gelu", "swiglu_oai", "g*silu", "g*gelu", "ex2", "tanh"}
	bad := make([]int, len(names))
	n := len(b) / (4 * rec)
	for i := 0; i < n; i++ {
		x, g, alpha, limit := f(i, 0), f(i, 1), f(i, 2), f(i, 3)
		got := []float32{SiLU(x), GELU(x), SwiGLUOAI(x, g, alpha, limit), Mul(g, SiLU(x)), Mul(g, GELU(x)), Ex2(x), Tanh(x)}
		for k, v := range got {
			want := f(i, 4+k)
			if math.Float32bits(v) != math.Float32bits(want) {
				if bad[k] < 3 {
					t.Errorf("record %d, %s(x=%#08x g=%#08x alpha=%g limit=%g): sim %#08x, H200 %#08x", i, names[k], math.Float32bits(x), math.Float32bits(g), alpha, limit, math.Float32bits(v), math.Float32bits(want))
				}
				bad[k]++
			}
		}
	}
	for k, c := range bad {
		if c > 0 {
			t.Errorf("%s: %d of %d records differ", names[k], c, n)
		}
	}
	t.Logf("%d records, %d functions each, compared bit for bit", n, len(names))
}
