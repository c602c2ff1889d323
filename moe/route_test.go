package moe

import (
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// helperRef is mm_ids_helper of src/ggml-cuda/mmid.cu run literally, one expert (CUDA
// block) at a time with the warp's lanes in sequence: nex_prev counts the ids below the
// expert, it_compact the tokens that use it.
func helperRef(ids []int32, T, U, E, B1 int, inverse bool) (bounds, dst, src1 []int32) {
	bounds, dst, src1 = make([]int32, E+1), make([]int32, T*U), make([]int32, T*U)
	for expert := 0; expert < E; expert++ {
		nexPrev, itCompact := 0, 0
		type store struct{ it, iex int }
		var st []store
		for it := 0; it < T; it++ {
			iexUsed := -1
			for iex := 0; iex < U; iex++ {
				used := int(ids[it*U+iex])
				if used < expert {
					nexPrev++
				}
				if used == expert {
					iexUsed = iex
				}
			}
			if iexUsed != -1 {
				st = append(st, store{it, iexUsed})
				itCompact++
			}
		}
		for itc, s := range st {
			dst[nexPrev+itc] = int32(s.it*U + s.iex)
			if inverse {
				src1[s.it*U+s.iex] = int32(nexPrev + itc)
			} else {
				src1[nexPrev+itc] = int32(s.it*B1 + s.iex%B1) // sis1 = B1, nchannels_y = ne11 = B1
			}
		}
		bounds[expert] = int32(nexPrev)
		if expert == E-1 {
			bounds[E] = int32(nexPrev + itCompact)
		}
	}
	return bounds, dst, src1
}

func TestRouteTable(t *testing.T) {
	for _, tc := range []struct {
		name         string
		ids          []int32
		T, U, E, B1  int
		bounds, dst  []int32
		src1         []int32
		inverse      bool
		rows         []int
		wantCols     []int
		errSubstring string
		unsupported  bool
	}{
		{name: "one token per expert", ids: []int32{2, 0, 1, 3}, T: 2, U: 2, E: 4, B1: 2,
			bounds: []int32{0, 1, 2, 3, 4}, dst: []int32{1, 2, 0, 3}, src1: []int32{1, 2, 0, 3},
			rows: []int{1, 2, 0, 3}, wantCols: []int{1, 1, 1, 1}},
		{name: "hot expert, empty experts", ids: []int32{0, 3, 3, 0, 0, 1}, T: 3, U: 2, E: 5, B1: 2,
			// expert 0: (0,0) (1,1) (2,0); expert 1: (2,1); expert 3: (0,1) (1,0)
			bounds: []int32{0, 3, 4, 4, 6, 6}, dst: []int32{0, 3, 4, 5, 1, 2}, src1: []int32{0, 3, 4, 5, 1, 2},
			rows: []int{0, 3, 4, 5, 1, 2}, wantCols: []int{3, 1, 0, 2, 0}},
		{name: "broadcast: inverse map", ids: []int32{1, 0, 0, 1, 1, 2}, T: 3, U: 2, E: 3, B1: 1,
			// expert 0: (0,1) (1,0); expert 1: (0,0) (1,1) (2,0); expert 2: (2,1)
			bounds: []int32{0, 2, 5, 6}, dst: []int32{1, 2, 0, 3, 4, 5}, inverse: true,
			src1: []int32{2, 0, 1, 3, 4, 5}, rows: []int{0, 1, 0, 1, 2, 2}, wantCols: []int{2, 3, 1}},
		{name: "one slot: forward map", ids: []int32{1, 0, 1}, T: 3, U: 1, E: 2, B1: 1,
			bounds: []int32{0, 1, 3}, dst: []int32{1, 0, 2}, src1: []int32{1, 0, 2}, rows: []int{1, 0, 2}, wantCols: []int{1, 2}},
		{name: "B1 divides U", ids: []int32{3, 2, 1, 0}, T: 1, U: 4, E: 4, B1: 2,
			bounds: []int32{0, 1, 2, 3, 4}, dst: []int32{3, 2, 1, 0}, src1: []int32{1, 0, 1, 0}, rows: []int{1, 0, 1, 0}, wantCols: []int{1, 1, 1, 1}},
		{name: "id out of range", ids: []int32{0, 1, 2, 4}, T: 2, U: 2, E: 4, B1: 1, errSubstring: "expert id 4 of token 1, slot 1 is outside [0, 4)"},
		{name: "negative id", ids: []int32{0, -1}, T: 1, U: 2, E: 4, B1: 2, errSubstring: "expert id -1 of token 0, slot 1"},
		{name: "duplicate expert in a token", ids: []int32{0, 1, 2, 2}, T: 2, U: 2, E: 4, B1: 2, errSubstring: "token 1 names expert 2 in slots 0 and 1", unsupported: true},
		{name: "short ids", ids: []int32{0, 1, 2}, T: 2, U: 2, E: 4, B1: 2, errSubstring: "3 expert ids given for 2 tokens of 2 slots"},
		{name: "B1 does not divide U", ids: []int32{0, 1, 2}, T: 1, U: 3, E: 4, B1: 2, errSubstring: "not a multiple"},
		{name: "no experts", ids: []int32{0}, T: 1, U: 1, E: 0, B1: 1, errSubstring: "must be positive"},
		{name: "too many slots", ids: make([]int32, 1024), T: 1, U: 1024, E: 2048, B1: 1, errSubstring: "10 bits"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Route(tc.ids, tc.T, tc.U, tc.E, tc.B1)
			if tc.errSubstring != "" {
				if err == nil || !strings.Contains(err.Error(), tc.errSubstring) {
					t.Fatalf("err = %v, want one containing %q", err, tc.errSubstring)
				}
				if errors.Is(err, errors.ErrUnsupported) != tc.unsupported {
					t.Fatalf("errors.Is(%v, ErrUnsupported) = %v, want %v", err, !tc.unsupported, tc.unsupported)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(r.ExpertBounds, tc.bounds) || !slices.Equal(r.IDsDst, tc.dst) || !slices.Equal(r.IDsSrc1, tc.src1) || r.Inverse != tc.inverse {
				t.Fatalf("bounds %v dst %v src1 %v inverse %v\nwant   %v     %v      %v       %v", r.ExpertBounds, r.IDsDst, r.IDsSrc1, r.Inverse, tc.bounds, tc.dst, tc.src1, tc.inverse)
			}
			if got := r.SrcRows(); !slices.Equal(got, tc.rows) {
				t.Fatalf("SrcRows %v, want %v", got, tc.rows)
			}
			if got := r.ExpertCols(); !slices.Equal(got, tc.wantCols) {
				t.Fatalf("ExpertCols %v, want %v", got, tc.wantCols)
			}
		})
	}
}

// genIDs draws a routing of the kinds real MoE layers and the sweep produce: distinct
// experts per token, uniform, hot (expert 0 everywhere), sparse (few experts used) or
// all tokens the same.
func genIDs(t *rapid.T) (ids []int32, T, U, E, B1 int) {
	E = rapid.IntRange(1, 40).Draw(t, "E")
	U = rapid.IntRange(1, min(E, 9)).Draw(t, "U")
	T = rapid.IntRange(1, 70).Draw(t, "T")
	B1 = rapid.SampledFrom([]int{1, U}).Draw(t, "B1")
	kind := rapid.SampledFrom([]string{"uniform", "hot", "sparse", "same"}).Draw(t, "routing")
	n := E
	if kind == "sparse" {
		n = rapid.IntRange(U, E).Draw(t, "nUsed")
	}
	first := rapid.Permutation(seq(n)).Draw(t, "first")[:U]
	for tok := 0; tok < T; tok++ {
		set := first
		if kind != "same" {
			set = rapid.Permutation(seq(n)).Draw(t, "perm")[:U]
		}
		if kind == "hot" && !slices.Contains(set, 0) {
			set = slices.Clone(set)
			set[rapid.IntRange(0, U-1).Draw(t, "hotSlot")] = 0
		}
		ids = append(ids, set...)
	}
	return ids, T, U, E, B1
}

func seq(n int) []int32 {
	s := make([]int32, n)
	for i := range s {
		s[i] = int32(i)
	}
	return s
}

// TestRouteProperties checks Route against the literal port of mm_ids_helper and the
// rules the kernels rely on: the compact columns are a permutation of the dst columns,
// sorted by expert and then token; the bounds partition them; the quantizer's source row
// of every column is that column's token and slot, in both the gather and the scatter
// variant. rapid prints the seed of a failing run.
func TestRouteProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ids, T, U, E, B1 := genIDs(t)
		r, err := Route(ids, T, U, E, B1)
		if err != nil {
			t.Fatal(err)
		}
		bounds, dst, src1 := helperRef(ids, T, U, E, B1, r.Inverse)
		if !slices.Equal(r.ExpertBounds, bounds) || !slices.Equal(r.IDsDst, dst) || !slices.Equal(r.IDsSrc1, src1) {
			t.Fatalf("Route differs from mm_ids_helper:\n%v %v %v\n%v %v %v", r.ExpertBounds, r.IDsDst, r.IDsSrc1, bounds, dst, src1)
		}
		if r.Inverse != (B1 == 1 && U > 1) {
			t.Fatalf("Inverse %v for B1=%d U=%d", r.Inverse, B1, U)
		}
		if r.ExpertBounds[0] != 0 || int(r.ExpertBounds[E]) != T*U {
			t.Fatalf("bounds %v do not span [0, %d]", r.ExpertBounds, T*U)
		}
		seen := make([]bool, T*U)
		rows := r.SrcRows()
		for e := 0; e < E; e++ {
			lo, hi := int(r.ExpertBounds[e]), int(r.ExpertBounds[e+1])
			if lo > hi {
				t.Fatalf("bounds %v decrease at expert %d", r.ExpertBounds, e)
			}
			for c := lo; c < hi; c++ {
				d := int(r.IDsDst[c])
				tok, slot := d/U, d%U
				if seen[d] {
					t.Fatalf("dst column %d listed twice", d)
				}
				seen[d] = true
				if int(ids[d]) != e {
					t.Fatalf("column %d of expert %d is token %d slot %d, routed to %d", c, e, tok, slot, ids[d])
				}
				if c > lo && int(r.IDsDst[c-1])/U >= tok {
					t.Fatalf("expert %d: tokens not ascending at column %d", e, c)
				}
				if rows[c] != tok*B1+slot%B1 {
					t.Fatalf("column %d (token %d slot %d) quantizes src1 row %d, want %d", c, tok, slot, rows[c], tok*B1+slot%B1)
				}
				if r.Inverse && int(r.IDsSrc1[d]) != c {
					t.Fatalf("inverse map of %d is %d, want %d", d, r.IDsSrc1[d], c)
				}
			}
		}
	})
}

// TestRouteRejectsEveryBadID: an out-of-range id anywhere is an error naming its token
// and slot, never a routing. rapid prints the seed of a failing run.
func TestRouteRejectsEveryBadID(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ids, T, U, E, B1 := genIDs(t)
		i := rapid.IntRange(0, len(ids)-1).Draw(t, "i")
		bad := rapid.OneOf(rapid.Int32Range(int32(E), int32(E)+100), rapid.Int32Range(-100, -1)).Draw(t, "bad")
		ids[i] = bad
		_, err := Route(ids, T, U, E, B1)
		if err == nil || errors.Is(err, errors.ErrUnsupported) {
			t.Fatalf("id %d at %d: err = %v, want a plain error", bad, i, err)
		}
		want := "token " + strconv.Itoa(i/U) + ", slot " + strconv.Itoa(i%U)
		if !strings.Contains(err.Error(), want) {
			t.Fatalf("error %q does not name %q", err, want)
		}
	})
}
