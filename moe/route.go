package moe

import (
	"fmt"

	"github.com/ggsim/ggsim/internal/errs"
)

// ErrUnsupported is wrapped by the error of Route for a routing whose outcome ggml leaves
// undefined (an expert named twice by one token); it matches errors.ErrUnsupported.
var ErrUnsupported = errs.Unsupported("moe: routing not modelled")

// Limits of mm_ids_helper_store (launch_mm_ids_helper's GGML_ASSERTs): the token index
// has 22 bits, the slot index 10.
const (
	MaxTokens = 1<<22 - 1
	MaxUsed   = 1<<10 - 1
)

// Routing is one MUL_MAT_ID launch's routing as mm_ids_helper writes it (see the package
// documentation for the formulas).
type Routing struct {
	Experts int // E (ne02)
	Tokens  int // T (ne12)
	Used    int // U (n_expert_used, ids->ne[0])
	Rows    int // B1 (ne11): activation rows per token

	// ExpertBounds has E+1 entries: expert e owns the compact columns
	// [ExpertBounds[e], ExpertBounds[e+1]).
	ExpertBounds []int32
	// IDsDst maps compact column c to the dst column t*U + u.
	IDsDst []int32
	// IDsSrc1 is the forward map (compact column -> src1 row t*B1 + u%B1) or, with
	// Inverse, the inverse map (t*U + u -> compact column).
	IDsSrc1 []int32
	// Inverse is write_inverse = dedup_bcast = (B1 == 1 && U > 1): the scatter quantizer.
	Inverse bool
}

// Route validates ids (T tokens of U expert ids, ids[t*U+u], experts in [0, E), B1
// activation rows per token) and sorts them as mm_ids_helper does for
// ggml_cuda_mul_mat_q. Bad shapes and out-of-range ids are errors saying what and where;
// a token that names one expert twice is an error wrapping ErrUnsupported.
func Route(ids []int32, T, U, E, B1 int) (*Routing, error) {
	switch {
	case T < 1 || U < 1 || E < 1 || B1 < 1:
		return nil, fmt.Errorf("moe: %d tokens, %d slots, %d experts, %d activation rows: all must be positive", T, U, E, B1)
	case U%B1 != 0:
		return nil, fmt.Errorf("moe: %d slots are not a multiple of %d activation rows per token (ggml_mul_mat_id: ids->ne[0] %% b->ne[1] == 0)", U, B1)
	case T > MaxTokens:
		return nil, fmt.Errorf("moe: %d tokens: mm_ids_helper stores the token index in 22 bits (n_tokens < 2^22)", T)
	case U > MaxUsed:
		return nil, fmt.Errorf("moe: %d slots: mm_ids_helper stores the slot index in 10 bits (n_expert_used < 2^10)", U)
	case int64(len(ids)) != int64(T)*int64(U):
		return nil, fmt.Errorf("moe: %d expert ids given for %d tokens of %d slots", len(ids), T, U)
	}
	for i, id := range ids {
		if id < 0 || int(id) >= E {
			return nil, fmt.Errorf("moe: expert id %d of token %d, slot %d is outside [0, %d)", id, i/U, i%U, E)
		}
	}
	// Duplicates within a token (U is small: a pairwise scan).
	for t := 0; t < T; t++ {
		row := ids[t*U : (t+1)*U]
		for u := 1; u < U; u++ {
			for v := 0; v < u; v++ {
				if row[u] == row[v] {
					return nil, fmt.Errorf("%w: token %d names expert %d in slots %d and %d (mm_ids_helper's lanes race for one store slot and one dst column stays unwritten)",
						ErrUnsupported, t, row[u], v, u)
				}
			}
		}
	}

	r := &Routing{Experts: E, Tokens: T, Used: U, Rows: B1, Inverse: B1 == 1 && U > 1,
		ExpertBounds: make([]int32, E+1), IDsDst: make([]int32, T*U), IDsSrc1: make([]int32, T*U)}
	// nex_prev of every expert: the number of ids below it (a histogram's prefix sum).
	count := make([]int32, E)
	for _, id := range ids {
		count[id]++
	}
	var prev int32
	for e := 0; e < E; e++ {
		r.ExpertBounds[e] = prev
		prev += count[e]
	}
	r.ExpertBounds[E] = prev
	// Each expert's warp walks the tokens in ascending order and appends (it, iex_used)
	// for a token that uses it; walking tokens once and appending to every used expert's
	// list gives the same order.
	next := append([]int32(nil), r.ExpertBounds[:E]...)
	for t := 0; t < T; t++ {
		for u := 0; u < U; u++ {
			e := ids[t*U+u]
			c := next[e]
			next[e]++
			r.IDsDst[c] = int32(t*U + u)
			if r.Inverse {
				r.IDsSrc1[t*U+u] = c
			} else {
				r.IDsSrc1[c] = int32(t*B1 + u%B1)
			}
		}
	}
	return r, nil
}

// Columns returns the number of compact columns, T*U (ne_get_rows, ncols_y and
// ncols_dst of the mul_mat_q launch).
func (r *Routing) Columns() int { return r.Tokens * r.Used }

// ExpertCols returns col_diff = ExpertBounds[e+1] - ExpertBounds[e] of every expert, the
// stream-K partition's Params.ExpertCols.
func (r *Routing) ExpertCols() []int {
	cols := make([]int, r.Experts)
	for e := range cols {
		cols[e] = int(r.ExpertBounds[e+1] - r.ExpertBounds[e])
	}
	return cols
}

// SrcRows returns, per compact column, the src1 row (of K values, row t*B1 + r of token
// t) the quantizer puts there: with the forward map the gather reads row ids_src1[c];
// with the inverse map the scatter quantizes token t's row once and writes it to the
// columns ids_src1[t*U + slot] for every slot.
func (r *Routing) SrcRows() []int {
	rows := make([]int, r.Columns())
	if !r.Inverse {
		for c, s := range r.IDsSrc1 {
			rows[c] = int(s)
		}
		return rows
	}
	for t := 0; t < r.Tokens; t++ { // blockIdx.x of quantize_mmq_q8_1<_, true>
		for slot := 0; slot < r.Used; slot++ {
			rows[r.IDsSrc1[t*r.Used+slot]] = t // base_idx = blockIdx.x*s02, s02 = stride_token = one row (B1 = 1)
		}
	}
	return rows
}

// HelperSharedBytes is mm_ids_helper's dynamic shared memory, n_tokens*4 bytes, which
// launch_mm_ids_helper asserts to be at most the device's smpbo.
func (r *Routing) HelperSharedBytes() int { return 4 * r.Tokens }
