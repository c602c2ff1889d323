package fp16path

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/ggsim/ggsim/sim"
	"github.com/ggsim/ggsim/tiling"
)

// Options are the note's switches (its environment variables) and the path's launch
// choices. The zero value (and a nil *Options) is the path on, the activation cache on,
// the norm fusion on and one row per warp for every matrix.
type Options struct {
	// Disabled is GGML_CUDA_GP100_MMVQ_DISABLE=1: the path is off. Every entry point
	// returns ErrDisabled; the dispatch keeps ggml's MMVQ (tiling.Options).
	Disabled bool
	// NoActCache is GGML_CUDA_GP100_NO_ACT_CACHE: every matmul converts its src1 itself
	// (a Cache converts on every call and keeps nothing). The bits do not change.
	NoActCache bool
	// NoNormFusion is GGML_CUDA_GP100_NO_NORM_FUSION: RMSNormMul runs ggml's RMS_NORM*MUL
	// only, and the first matmul that reads its output converts it. The bits do not
	// change.
	NoNormFusion bool
	// RowsPerWarp is the number of rows one warp computes (1, 2, 4, 8, 16 or 32; 0 means
	// 1) for a matrix that RowMap does not list: each row gets 32/RowsPerWarp lanes and a
	// butterfly of that width. It changes the bits (the lanes' partition of the row).
	RowsPerWarp int
	// RowMap is GP100_RMAP="nrows:R,...": R rows per warp for a matrix of exactly nrows
	// rows (N), overriding RowsPerWarp. ParseRowMap reads the variable's format.
	RowMap map[int]int
}

// RowsPerWarpFor returns the rows per warp the path uses for a matrix of n rows:
// RowMap[n] if listed, else RowsPerWarp, else 1.
func (o *Options) RowsPerWarpFor(n int) int {
	if o == nil {
		return 1
	}
	if r, ok := o.RowMap[n]; ok {
		return r
	}
	if o.RowsPerWarp > 0 {
		return o.RowsPerWarp
	}
	return 1
}

// lanes returns the lanes per row for a matrix of n rows.
func (o *Options) lanes(n int) int { return sim.WarpSize / o.RowsPerWarpFor(n) }

func validRowsPerWarp(r int) bool {
	switch r {
	case 1, 2, 4, 8, 16, 32:
		return true
	}
	return false
}

// check returns an error saying what is wrong with o, or nil.
func (o *Options) check() error {
	if o == nil {
		return nil
	}
	if o.RowsPerWarp != 0 && !validRowsPerWarp(o.RowsPerWarp) {
		return fmt.Errorf("fp16path: %d rows per warp: want 1, 2, 4, 8, 16 or 32", o.RowsPerWarp)
	}
	for n, r := range o.RowMap {
		if n <= 0 || !validRowsPerWarp(r) {
			return fmt.Errorf("fp16path: row map entry %d:%d: want nrows >= 1 and 1, 2, 4, 8, 16 or 32 rows per warp", n, r)
		}
	}
	return nil
}

// ParseRowMap parses GP100_RMAP's format "nrows:R,nrows:R,..." (spaces around the
// numbers allowed, an empty string is an empty map). Each R must be 1, 2, 4, 8, 16 or 32
// and each nrows positive and listed once.
func ParseRowMap(s string) (map[int]int, error) {
	m := map[int]int{}
	if strings.TrimSpace(s) == "" {
		return m, nil
	}
	for _, e := range strings.Split(s, ",") {
		a, b, ok := strings.Cut(e, ":")
		n, err1 := strconv.Atoi(strings.TrimSpace(a))
		r, err2 := strconv.Atoi(strings.TrimSpace(b))
		if !ok || err1 != nil || err2 != nil {
			return nil, fmt.Errorf("fp16path: GP100_RMAP entry %q: want nrows:R", e)
		}
		if n <= 0 || !validRowsPerWarp(r) {
			return nil, fmt.Errorf("fp16path: GP100_RMAP entry %q: want nrows >= 1 and R one of 1, 2, 4, 8, 16, 32", e)
		}
		if _, dup := m[n]; dup {
			return nil, fmt.Errorf("fp16path: GP100_RMAP lists nrows %d twice", n)
		}
		m[n] = r
	}
	return m, nil
}

// FormatRowMap is the inverse of ParseRowMap, entries in ascending nrows.
func FormatRowMap(m map[int]int) string {
	ns := make([]int, 0, len(m))
	for n := range m {
		ns = append(ns, n)
	}
	sort.Ints(ns)
	parts := make([]string, len(ns))
	for i, n := range ns {
		parts[i] = fmt.Sprintf("%d:%d", n, m[n])
	}
	return strings.Join(parts, ",")
}

// OptionsFromEnv reads the note's environment variables through getenv (os.Getenv, or a
// map's lookup in a test): GGML_CUDA_GP100_MMVQ_DISABLE, GGML_CUDA_GP100_NO_ACT_CACHE and
// GGML_CUDA_GP100_NO_NORM_FUSION are on when set to anything but "" or "0" (the note
// writes DISABLE=1; the others' values it does not give), GP100_RMAP through
// ParseRowMap.
func OptionsFromEnv(getenv func(string) string) (Options, error) {
	on := func(k string) bool { v := strings.TrimSpace(getenv(k)); return v != "" && v != "0" }
	o := Options{
		Disabled:     on("GGML_CUDA_GP100_MMVQ_DISABLE"),
		NoActCache:   on("GGML_CUDA_GP100_NO_ACT_CACHE"),
		NoNormFusion: on("GGML_CUDA_GP100_NO_NORM_FUSION"),
	}
	m, err := ParseRowMap(getenv("GP100_RMAP"))
	if err != nil {
		return Options{}, err
	}
	if len(m) > 0 {
		o.RowMap = m
	}
	return o, nil
}

// Dispatch returns the tiling options of a build with the patch and these switches: the
// fp16 path opted in unless o.Disabled (the kill switch). tiling.DecideWith with it is
// where the path replaces MMVQ; a build without the patch is tiling.Options{}.
func (o *Options) Dispatch() tiling.Options {
	return tiling.Options{GP100FP16Path: o == nil || !o.Disabled}
}
