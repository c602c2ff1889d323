package golden

import (
	"slices"
	"strings"
	"testing"

	"github.com/ggsim/ggsim/ggmlsrc"
	"github.com/ggsim/ggsim/gguf"
)

func TestKernelRoundTrip(t *testing.T) {
	// Absent: the zero Kernel.
	f, err := open(bytesOf(t, synth(t)), "plain.gguf")
	if err != nil {
		t.Fatal(err)
	}
	if f.Kernel.Fingerprint != "" || f.Kernel.Files != nil {
		t.Errorf("file without kernel keys: %+v", f.Kernel)
	}
	// SetKernel writes both keys; they read back, in order, whatever the input order.
	m := ggmlsrc.Modelled()
	rev := slices.Clone(m)
	slices.Reverse(rev)
	w := synth(t)
	if err := w.SetKernel(rev); err != nil {
		t.Fatal(err)
	}
	f, err = open(bytesOf(t, w), "k.gguf")
	if err != nil {
		t.Fatal(err)
	}
	if f.Kernel.Fingerprint != ggmlsrc.ModelledFingerprint() || !slices.Equal(f.Kernel.Files, m) {
		t.Errorf("read back %+v", f.Kernel)
	}
	// The fingerprint alone is allowed.
	w = synth(t)
	if err := w.Add(KeyKernelFingerprint, str(ggmlsrc.ModelledFingerprint())); err != nil {
		t.Fatal(err)
	}
	if f, err = open(bytesOf(t, w), "fp.gguf"); err != nil || f.Kernel.Fingerprint != ggmlsrc.ModelledFingerprint() || f.Kernel.Files != nil {
		t.Errorf("fingerprint only: %+v, %v", f.Kernel, err)
	}
}

func TestKernelErrors(t *testing.T) {
	w := synth(t)
	fp := ggmlsrc.ModelledFingerprint()
	if err := w.SetKernel(ggmlsrc.Modelled()); err != nil {
		t.Fatal(err)
	}
	b := bytesOf(t, w)
	lines := ggmlsrc.Modelled().Lines()
	other := slices.Clone(lines)
	other[3] = strings.Fields(other[3])[0] + " " + strings.Repeat("0", 64)
	cases := []struct {
		name string
		kv   func([]gguf.KV) []gguf.KV
		want string
	}{
		{"fp type", setKey(KeyKernelFingerprint, gguf.ScalarOf(uint32(1))), `"golden.ggml.kernel_fingerprint" is u32, want str`},
		{"fp upper", setKey(KeyKernelFingerprint, str(strings.ToUpper(fp))), "is not 64 lowercase hex digits"},
		{"fp empty", setKey(KeyKernelFingerprint, str("")), "is not 64 lowercase hex digits"},
		{"files type", setKey(KeyKernelFiles, str(lines[0])), "golden.ggml.kernel_files"},
		{"files bad line", setKey(KeyKernelFiles, gguf.ArrayOf([]string{"src/mmq.cuh"})), `"src/mmq.cuh" is not "PATH SHA256"`},
		{"files twice", setKey(KeyKernelFiles, gguf.ArrayOf([]string{lines[0], lines[0]})), "listed twice"},
		{"files without fp", dropKey(KeyKernelFingerprint), "golden.ggml.kernel_files without golden.ggml.kernel_fingerprint"},
		{"files disagree", setKey(KeyKernelFiles, gguf.ArrayOf(other)), "is not the fingerprint of golden.ggml.kernel_files"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := open(mutate(t, b, c.kv, nil), "bad.gguf")
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "bad.gguf") {
				t.Errorf("error %v does not say %q and the file name", err, c.want)
			}
		})
	}

	// The Writer refuses what the reader would.
	w = synth(t)
	if err := w.Add(KeyKernelFingerprint, str("abc")); err == nil {
		t.Error("Writer took a malformed fingerprint")
	}
	if err := w.Add(KeyKernelFiles, gguf.ArrayOf([]string{"x"})); err == nil {
		t.Error("Writer took a malformed file line")
	}
	if err := w.Add(KeyKernelFiles, gguf.ArrayOf(other)); err != nil {
		t.Fatal(err)
	}
	if _, err := w.WriteTo(new(strings.Builder)); err == nil || !strings.Contains(err.Error(), "without") {
		t.Errorf("files without fingerprint written: %v", err)
	}
	if err := w.Add(KeyKernelFingerprint, str(fp)); err != nil {
		t.Fatal(err)
	}
	if _, err := w.WriteTo(new(strings.Builder)); err == nil || !strings.Contains(err.Error(), "is not the fingerprint") {
		t.Errorf("inconsistent kernel keys written: %v", err)
	}
}
