package ggsim

import (
	"embed"
	"io/fs"
	"sort"
)

// Samples holds committed golden files of real H200 outputs whose every case ggsim
// simulates (provenance in testdata/golden/README.md and
// testdata/golden/h200-capture/README.md): the MMVQ, MMQ, MoE and extra-type slices of
// the shared golden set, the GLU slice (gate, up and a GLU, fused) and the files captured
// with K = 8192 and for MoE.
//
//go:embed testdata/golden/ggml-h200-dev-glu.slice.gguf
//go:embed testdata/golden/ggml-h200-dev-mmvq.slice.gguf
//go:embed testdata/golden/ggml-h200-dev-mmq.slice.gguf
//go:embed testdata/golden/ggml-h200-dev-moe.slice.gguf
//go:embed testdata/golden/ggml-h200-dev-extra.slice.gguf
//go:embed testdata/golden/h200-capture/*.gguf
var Samples embed.FS

// SampleFiles returns the names of the files in Samples, sorted.
func SampleFiles() []string {
	var names []string
	fs.WalkDir(Samples, ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			names = append(names, p)
		}
		return nil
	})
	sort.Strings(names)
	return names
}
