package ggsim_test

import (
	"bytes"
	"testing"

	"github.com/ggsim/ggsim"
	"github.com/ggsim/ggsim/gguf/golden"
	"github.com/ggsim/ggsim/oracle"
)

// TestEmbeddedSamples verifies the golden samples embedded in simrun (real H200 outputs:
// the MMVQ, MMQ, MoE, extra-type and GLU slices of the shared set and the files captured
// with K = 8192 and for MoE): every case bit-exact and within its fp64 bound.
func TestEmbeddedSamples(t *testing.T) {
	names := ggsim.SampleFiles()
	if len(names) != 8 {
		t.Fatalf("embedded samples: %v", names)
	}
	total := 0
	for _, n := range names {
		data, err := ggsim.Samples.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		f, err := golden.New(bytes.NewReader(data), int64(len(data)), n)
		if err != nil {
			t.Fatal(err)
		}
		res, err := oracle.VerifyFile(f, ggsim.NewSimulator(), oracle.Options{})
		if err != nil {
			t.Fatal(err)
		}
		for i := range res {
			total++
			if !res[i].OK() {
				t.Errorf("%s", res[i].Line())
			}
		}
	}
	if total != 151 {
		t.Errorf("%d sample cases, want 151", total)
	}
}
