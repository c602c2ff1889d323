package oracle_test

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/ggsim/ggsim/ggmlsrc"
	"github.com/ggsim/ggsim/gguf"
	"github.com/ggsim/ggsim/gguf/golden"
	"github.com/ggsim/ggsim/oracle"
	"github.com/ggsim/ggsim/quant"
)

// kernelOf returns a key writer recording s as the file's kernel sources.
func kernelOf(s ggmlsrc.Set) func(*golden.Writer) error {
	return func(w *golden.Writer) error { return w.SetKernel(s) }
}

// changed returns the modelled sources with the files at the given indices changed.
func changed(idx ...int) ggmlsrc.Set {
	s := ggmlsrc.Modelled()
	for _, i := range idx {
		s[i].SHA256 = strings.Repeat("0", 64)
	}
	return s
}

// TestVerifyOtherCommit: a golden file of another ggml commit is verified only when its
// kernel fingerprint is the modelled one; otherwise it is UNSUPPORTED, saying why.
func TestVerifyOtherCommit(t *testing.T) {
	other := h200Meta
	other.GGMLCommit = "0123456789abcdef"
	paths := ggmlsrc.Paths()
	mmq := slices.Index(paths, "src/ggml-cuda/mmq.cuh")
	ggmlc := slices.Index(paths, "src/ggml.c")

	r := verifyOne(t, syntheticWith(t, other, kernelOf(ggmlsrc.Modelled()), quant.Q4_K, 2, nil))
	t.Log(r.Line())
	if !r.OK() || !strings.Contains(r.Sources, "ggml 0123456789abcdef accepted") || !strings.Contains(r.Sources, oracle.GGMLCommit) ||
		!strings.Contains(r.Line(), r.Sources) {
		t.Errorf("same fingerprint: %s", r.Line())
	}
	js, err := json.Marshal(r)
	if err != nil || !strings.Contains(string(js), `"sources":"ggml 0123456789abcdef accepted`) {
		t.Errorf("JSON %s, %v", js, err)
	}
	// Accepted is not passed: the bits are still judged.
	r = verifyOne(t, syntheticWith(t, other, kernelOf(ggmlsrc.Modelled()), quant.Q4_K, 2, func(d []float32) { d[0] += 1 }))
	if r.OK() || r.Status != oracle.StatusMismatch || r.Sources == "" {
		t.Errorf("same fingerprint, wrong bits: %s", r.Line())
	}

	unsupported := []struct {
		name string
		meta golden.Meta
		keys func(*golden.Writer) error
		want []string
		not  string
	}{
		{"no fingerprint", other, nil, []string{`ggml "0123456789abcdef"`, "no kernel fingerprint is recorded"}, ""},
		{"files differ", other, kernelOf(changed(mmq, ggmlc)), []string{"differ from ggml " + oracle.GGMLCommit + "'s in src/ggml-cuda/mmq.cuh, src/ggml.c"}, "mmq.cu,"},
		{"fingerprint only", other, func(w *golden.Writer) error {
			return w.Add(golden.KeyKernelFingerprint, gguf.ScalarOf(changed(mmq).Fingerprint()))
		}, []string{"is not that of ggml " + oracle.GGMLCommit, "no per-file hashes"}, ""},
		{"modelled commit, modified tree", h200Meta, kernelOf(changed(mmq)), []string{"the modelled commit, but", "in src/ggml-cuda/mmq.cuh"}, ""},
	}
	for _, c := range unsupported {
		r := verifyOne(t, syntheticWith(t, c.meta, c.keys, quant.Q4_K, 2, nil))
		t.Log(r.Line())
		ok := r.Status == oracle.StatusUnsupported && !r.OK() && r.Sources == "" && r.Bits == nil
		for _, w := range c.want {
			ok = ok && strings.Contains(r.Detail, w)
		}
		if !ok || (c.not != "" && strings.Contains(r.Detail, c.not)) {
			t.Errorf("%s: %s", c.name, r.Line())
		}
	}

	// The modelled commit without a fingerprint is verified as before.
	if r := verifyOne(t, synthetic(t, h200Meta, quant.Q4_K, 2, nil)); !r.OK() || r.Sources != "" {
		t.Errorf("modelled commit: %s", r.Line())
	}
}

func TestCheckSources(t *testing.T) {
	f := &golden.File{Meta: golden.Meta{GGMLCommit: "fedcba987654"}}
	if _, err := oracle.CheckSources(f); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("no fingerprint: %v", err)
	}
	f.Kernel = golden.Kernel{Fingerprint: ggmlsrc.ModelledFingerprint(), Files: ggmlsrc.Modelled()}
	if note, err := oracle.CheckSources(f); err != nil || note == "" {
		t.Errorf("modelled fingerprint: %q, %v", note, err)
	}
	f.GGMLCommit = oracle.GGMLCommit
	if note, err := oracle.CheckSources(f); err != nil || note != "" {
		t.Errorf("modelled commit and fingerprint: %q, %v", note, err)
	}
}
