package mmvq

import (
	"os"
	"path/filepath"
	"testing"
)

// Golden tests of the types of iq*.go and extra.go: ggml-h200-dev-extra.gguf holds
// mul_mat cases of IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S, IQ1_S, IQ1_M, NVFP4, Q1_0 and
// Q2_0 at batch 1 and 5 (MMVQ) and 40 (MMQ: reported as skipped by runGolden). The
// committed slice (testdata/golden, 2 cases) always runs; -golden=DIR runs the full file.

func TestGoldenExtraSlice(t *testing.T) {
	name := "ggml-h200-dev-extra.slice.gguf"
	report(t, name, runGolden(t, filepath.Join("..", "..", "testdata", "golden", name)))
}

func TestGoldenExtraFull(t *testing.T) {
	if *goldenDir == "" {
		t.Skip("full golden files not requested (-golden=DIR)")
	}
	path := filepath.Join(*goldenDir, "ggml-h200-dev-extra.gguf")
	if _, err := os.Stat(path); err != nil {
		t.Fatal(err)
	}
	report(t, "ggml-h200-dev-extra.gguf", runGolden(t, path))
}
