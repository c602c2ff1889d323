// Package moe is the routing of ggml's MUL_MAT_ID as the CUDA backend's mul_mat_q path
// sees it: the validation of the expert ids and their sort into a compact,
// expert-ordered column space (expert_bounds, ids_dst, ids_src1). It is pure: integers
// in, integers out, no arithmetic on data. Kernels (sim/mmq's MulMatID) execute a
// Routing; the stream-K partition takes ExpertCols (streamk.Params.ExpertCols).
//
// # Model
//
// A MUL_MAT_ID of T tokens (ne12), U expert slots per token (n_expert_used = ids->ne[0])
// and B1 activation rows per token (ne11; U % B1 == 0, slot u reads row u % B1) over E
// experts (ne02) has T*U dst columns (ne_get_rows), column t*U + u for token t's slot u.
// mm_ids_helper runs one warp per expert e and lists, in ascending token order, every
// token that uses e (at most one slot per token), so the compact column space is sorted
// by expert, then token:
//
//	expert_bounds[e]  = number of (token, slot) pairs with an expert id < e
//	expert_bounds[E]  = T*U
//	ids_dst[c]        = t*U + u                  (c = expert_bounds[e] + rank of t among e's tokens)
//	ids_src1[c]       = t*sis1 + u % nchannels_y (forward map; sis1 = nb12/nb11 = B1, nchannels_y = ne11 = B1)
//	ids_src1[t*U + u] = c                        (inverse map, write_inverse)
//
// ggml_cuda_mul_mat_q passes write_inverse = dedup_bcast = (ne11 == 1 && U > 1): then
// each token's one activation row is quantized once and scattered to all of its compact
// columns (quantize_scatter_mmq_q8_1_cuda, grid over tokens, ids = the inverse map);
// otherwise every compact column c is gathered from src1 row ids_src1[c]
// (quantize_mmq_q8_1_cuda with ids). Both put the same row into the same column, so the
// numbers are identical; Routing keeps the index arrays as the source writes them and
// SrcRows reads them the way the matching quantizer does.
//
// # Sources
//
// ggml commit d99724f2b141: src/ggml-cuda/mmid.cu (mm_ids_helper, both the generic and
// the n_expert_used-specialised loop; launch_mm_ids_helper's assertions);
// src/ggml-cuda/mmq.cu (ggml_cuda_mul_mat_q, the ids branch: ne_get_rows, dedup_bcast,
// si1, sis1, the quantize variant, ncols_max = ne12); src/ggml-cuda/quantize.cu
// (quantize_mmq_q8_1<layout, scatter>); src/ggml-cuda/ggml-cuda.cu
// (ggml_cuda_mul_mat_id); src/ggml.c (ggml_mul_mat_id: ids->ne[0] % b->ne[1] == 0).
//
// # Limits
//
// Contiguous tensors only (si1 = U, sis1 = B1). An expert id outside [0, E) is an error
// naming the token and slot (ggml would read out of bounds). A token that names the same
// expert in two slots is an error wrapping errors.ErrUnsupported: mm_ids_helper's lanes
// then race for one store slot, one of the two dst columns is never written and the
// expert bounds of higher experts shift; nothing defined to model. The assertions
// n_tokens < 2^22 and n_expert_used < 2^10 are plain errors; the helper's shared memory
// (4 bytes per token, HelperSharedBytes) against the device's limit is the caller's
// check.
package moe
