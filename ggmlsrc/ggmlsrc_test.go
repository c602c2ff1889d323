package ggmlsrc_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ggsim/ggsim/ggmlsrc"
)

func TestModelledTable(t *testing.T) {
	m := ggmlsrc.Modelled()
	p := ggmlsrc.Paths()
	if !slices.IsSorted(p) || len(m) != len(p) {
		t.Fatalf("paths sorted %v, %d paths, %d hashes", slices.IsSorted(p), len(p), len(m))
	}
	for i, h := range m {
		if h.Path != p[i] || !ggmlsrc.IsHex256(h.SHA256) {
			t.Errorf("row %d: %v (path list says %s)", i, h, p[i])
		}
	}
	if _, err := ggmlsrc.NewSet(m); err != nil {
		t.Error(err)
	}
	if fp := ggmlsrc.ModelledFingerprint(); !ggmlsrc.IsHex256(fp) || fp != m.Fingerprint() {
		t.Errorf("fingerprint %q", fp)
	}
}

// TestModelledMatchesTree checks the table against a ggml tree at the modelled commit
// (GGML_DIR, as go generate takes it); skipped without one.
func TestModelledMatchesTree(t *testing.T) {
	dir := os.Getenv("GGML_DIR")
	if dir == "" {
		t.Skip("GGML_DIR not set")
	}
	s, err := ggmlsrc.HashDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if d := s.Diff(ggmlsrc.Modelled()); len(d) > 0 {
		t.Errorf("%s differs from the table in %v: regenerate with go generate ./ggmlsrc", dir, d)
	}
}

func writeTree(t *testing.T, edit func(dir string)) string {
	dir := t.TempDir()
	for i, p := range ggmlsrc.Paths() {
		f := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte(strings.Repeat("x", i)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if edit != nil {
		edit(dir)
	}
	return dir
}

func TestHashDir(t *testing.T) {
	a, err := ggmlsrc.HashDir(writeTree(t, nil))
	if err != nil {
		t.Fatal(err)
	}
	// The empty file's SHA-256.
	if a[0].SHA256 != "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" {
		t.Errorf("%v", a[0])
	}
	b, err := ggmlsrc.HashDir(writeTree(t, func(dir string) {
		if err := os.WriteFile(filepath.Join(dir, "src/ggml-cuda/mmq.cuh"), []byte("changed"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Remove(filepath.Join(dir, "src/ggml.c")); err != nil {
			t.Fatal(err)
		}
	}))
	if err != nil {
		t.Fatal(err)
	}
	if d := a.Diff(b); !slices.Equal(d, []string{"src/ggml-cuda/mmq.cuh", "src/ggml.c"}) {
		t.Errorf("diff %v", d)
	}
	if b[len(b)-1].SHA256 != ggmlsrc.Absent || a.Fingerprint() == b.Fingerprint() {
		t.Errorf("absent file: %v; fingerprints %s %s", b[len(b)-1], a.Fingerprint(), b.Fingerprint())
	}
	if _, err := ggmlsrc.HashDir(t.TempDir()); err == nil || !strings.Contains(err.Error(), "not a ggml source tree") {
		t.Errorf("empty dir: %v", err)
	}
	llama := t.TempDir()
	if err := os.MkdirAll(filepath.Join(llama, "ggml", "src", "ggml-cuda"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := ggmlsrc.HashDir(llama); err == nil || !strings.Contains(err.Error(), "give "+filepath.Join(llama, "ggml")) {
		t.Errorf("llama.cpp dir: %v", err)
	}
}

func TestLines(t *testing.T) {
	m := ggmlsrc.Modelled()
	s, err := ggmlsrc.ParseLines(m.Lines())
	if err != nil || !slices.Equal(s, m) {
		t.Fatalf("round trip: %v", err)
	}
	// The fingerprint is the SHA-256 of the lines sorted by path: order of input does not matter.
	l := m.Lines()
	slices.Reverse(l)
	if s, _ := ggmlsrc.ParseLines(l); s.Fingerprint() != m.Fingerprint() {
		t.Error("fingerprint depends on the input order")
	}
	for _, bad := range []string{
		"", "src/x.c", " " + strings.Repeat("a", 64), "src/x.c " + strings.Repeat("A", 64),
		"src/x.c " + strings.Repeat("a", 63), "/abs/x.c " + strings.Repeat("a", 64), "src/x.c gone",
	} {
		if _, err := ggmlsrc.ParseLine(bad); err == nil {
			t.Errorf("ParseLine(%q) accepted", bad)
		}
	}
	if _, err := ggmlsrc.ParseLine("src/x.c absent"); err != nil {
		t.Error(err)
	}
	if _, err := ggmlsrc.ParseLines([]string{m.Lines()[0], m.Lines()[0]}); err == nil || !strings.Contains(err.Error(), "twice") {
		t.Errorf("duplicate path: %v", err)
	}
}
