// Command slice cuts the small committed golden files (testdata/golden/ at the repository
// root) out of the full set, kept outside the repository (e.g. ../shared/golden): a few cases of each op, with exactly
// the tensors they name, byte for byte, and the same provenance keys. It adds
// golden.slice.source (the original file name) and golden.slice.cases (the original case
// indices, u32, in the order of the slice's cases).
//
//	go run ./gguf/golden/internal/slice -src ../shared/golden -out testdata/golden
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/ggsim/ggsim/gguf"
	"github.com/ggsim/ggsim/gguf/golden"
)

// Selections: original file -> original case indices (checked against the op, type and
// batch noted beside them when the slice is cut).
var selections = []struct {
	file  string
	cases []int
	want  []string // "op type batch" of each case, as a check on the indices
}{
	{"ggml-h200-dev-mmvq.gguf",
		[]int{56, 60, 63, 32, 36, 39, 72, 76, 79, 111, 113},
		[]string{"mul_mat q4_K 1", "mul_mat q4_K 5", "mul_mat q4_K 8", "mul_mat q8_0 1", "mul_mat q8_0 5", "mul_mat q8_0 8",
			"mul_mat q6_K 1", "mul_mat q6_K 5", "mul_mat q6_K 8", "quantize q4_K 64", "quantize q6_K 64"}},
	{"ggml-h200-dev-moe.gguf",
		[]int{0, 3, 4},
		[]string{"mul_mat_id q4_K 1", "mul_mat_id q4_K 3", "mul_mat_id q4_K 8"}},
	{"ggml-h200-dev-mmq.gguf",
		[]int{0, 39, 6, 12, 18, 36},
		[]string{"mul_mat q4_0 9", "quantize q4_0 64", "mul_mat q2_K 9", "mul_mat q4_K 9", "mul_mat q6_K 9", "mul_mat q5_1 9"}},
	{"ggml-h200-dev-glu.gguf",
		[]int{0, 2},
		[]string{"mul_mat_glu q4_K 1", "mul_mat_glu q4_K 1"}},
	{"ggml-h200-dev-extra.gguf",
		[]int{0, 16, 21, 26},
		[]string{"mul_mat iq2_xxs 1", "mul_mat q1_0 1", "mul_mat iq2_xs 40", "mul_mat nvfp4 40"}},
}

// SliceName maps an original file name to its slice's name.
func sliceName(orig string) string { return strings.TrimSuffix(orig, ".gguf") + ".slice.gguf" }

var schemaKey = regexp.MustCompile(`^(general\.architecture|general\.alignment|golden\.version|golden\.producer|golden\.device\.(name|cc|sm_count|driver)|golden\.ggml\.(commit|build)|golden\.case\..*)$`)

func main() {
	src := flag.String("src", "../shared/golden", "directory of the full golden files")
	out := flag.String("out", "testdata/golden", "directory to write the slices to")
	flag.Parse()
	for _, s := range selections {
		if err := cut(filepath.Join(*src, s.file), filepath.Join(*out, sliceName(s.file)), s.file, s.cases, s.want); err != nil {
			fmt.Fprintln(os.Stderr, "slice:", err)
			os.Exit(1)
		}
	}
}

func cut(in, out, base string, idx []int, want []string) error {
	f, err := golden.Open(in)
	if err != nil {
		return err
	}
	defer f.Close()
	if f.GGUF.Alignment != gguf.DefaultAlignment {
		return fmt.Errorf("%s: alignment %d: the slice would not keep it", in, f.GGUF.Alignment)
	}
	w := golden.NewWriter(f.Meta)
	// Keys beyond the schema are kept as they are.
	for _, kv := range f.GGUF.KV {
		if !schemaKey.MatchString(kv.Key) {
			if err := w.Add(kv.Key, kv.Value); err != nil {
				return err
			}
		}
	}
	u := make([]uint32, len(idx))
	for k, i := range idx {
		u[k] = uint32(i)
	}
	if err := w.Add("golden.slice.source", gguf.ScalarOf(base)); err != nil {
		return err
	}
	if err := w.Add("golden.slice.cases", gguf.ArrayOf(u)); err != nil {
		return err
	}
	used := map[string]bool{}
	for k, i := range idx {
		if i >= len(f.Cases) {
			return fmt.Errorf("%s: no case %d", in, i)
		}
		c := f.Cases[i]
		if c.Err != nil {
			return c.Err
		}
		batch := c.Shape.M
		switch {
		case c.Op.IsID():
			batch = c.Shape.T
		case c.Op == golden.OpQuantize:
			batch = c.Shape.R
		}
		if got := fmt.Sprintf("%s %v %d", c.Op, c.WeightType, batch); got != want[k] {
			return fmt.Errorf("%s: case %d is %q, the table says %q", in, i, got, want[k])
		}
		for _, n := range append(append([]string(nil), c.Src...), c.Dst) {
			used[n] = true
		}
	}
	// Tensors in the original file's order.
	for _, ti := range f.GGUF.Tensors {
		if !used[ti.Name] {
			continue
		}
		data, err := f.GGUF.TensorData(ti.Name)
		if err != nil {
			return err
		}
		if err := w.AddTensor(ti.Name, ti.Type, ti.Dims, data); err != nil {
			return err
		}
	}
	for _, i := range idx {
		if _, err := w.AddCase(f.Cases[i]); err != nil {
			return fmt.Errorf("%s: case %d: %w", in, i, err)
		}
	}
	if err := w.WriteFile(out); err != nil {
		return err
	}
	st, err := os.Stat(out)
	if err != nil {
		return err
	}
	fmt.Printf("%s: %d cases %v of %s, %d bytes\n", out, len(idx), idx, base, st.Size())
	return nil
}
