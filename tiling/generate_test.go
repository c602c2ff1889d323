package tiling

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// With GGML_DIR set to a ggml checkout at d99724f2b141, the generated MMQ tables must be
// what gen_mmqconfig.go writes from it today.
func TestMMQTablesUpToDate(t *testing.T) {
	dir := os.Getenv("GGML_DIR")
	if dir == "" {
		t.Skip("GGML_DIR not set: cannot compare mmqconfig_tables.go with ggml's mmq-config-*.cuh")
	}
	out := filepath.Join(t.TempDir(), "tables.go")
	cmd := exec.Command("go", "run", "gen_mmqconfig.go", "-ggml", dir, "-o", out)
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("gen_mmqconfig: %v\n%s", err, msg)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	have, err := os.ReadFile("mmqconfig_tables.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, have) {
		t.Error("mmqconfig_tables.go is stale: run GGML_DIR=... go generate ./tiling")
	}
}
