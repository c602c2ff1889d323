// Package streamk is ggml's stream-K partition of mul_mat_q (MMQ) work: which CUDA block
// computes which output tile over which K range, which partial sums go to the fixup
// buffer, and the order in which the fixup kernel adds them. It is pure: it takes plain
// numbers (tile counts, K extent in weight blocks, SM count), does no arithmetic on
// data and imports no kernel or tiling package. Kernels (sim/mmq) execute a Partition;
// tiling and the command line choose the numbers.
//
// # Sources
//
// ggml commit d99724f2b141, src/ggml-cuda/mmq.cuh:
//
//   - launch_mul_mat_q (host): nty = ceil(nrows_x/I), ntx = ceil(ncols_max/J),
//     ntiles_dst = ntx*nty*nchannels_y*nsamples_y; if config.stream_k is false, the
//     conventional grid (nty, ntx, nchannels_y*nsamples_y); otherwise tiles_nwaves =
//     ceil(ntiles_dst/nsm), tiles_efficiency_percent = 100*ntiles_dst/(nsm*tiles_nwaves)
//     and the stream-K grid is ntiles_dst if GGML_CUDA_CC_IS_NVIDIA(cc) and the
//     efficiency is >= 90, else nsm (AMD always uses nsm); GGML_ASSERT(ntiles_dst *
//     blocks_per_ne00 < 2^30); fixup_needed = ntiles_dst % grid != 0 allocates
//     tmp_fixup (grid*J*I floats) and launches the fixup kernel with grid blocks.
//   - mul_mat_q (device, stream-K branch): block b owns [kbc, kbc_stop) of the continuous
//     space of ntiles_dst*blocks_per_ne00 k-blocks, kbc = b*total/grid then
//     kbc -= (kbc % blocks_per_ne00) % blocks_per_iter (an alignment to the K loop
//     step within the tile); tile t = kbc/blocks_per_ne00 decomposes as jt = t % ntx,
//     then channel zt, then sample wt, and it = the rest (Params.Tile). Every segment that
//     reaches its tile's end is written to dst (plain store); the block's last segment,
//     if it ends inside a tile, is written whole to its slot tmp_fixup + b*J*I.
//   - mul_mat_q_stream_k_fixup: block b0 returns unless it has data, started inside a
//     tile and reached that tile's end; then it walks back over blocks b0-1, b0-2, ...
//     (skipping blocks without data), adds each one's slot to sum (from 0.0f) and stops
//     after the first one that started at the tile start or in an earlier tile; finally
//     dst += sum. So a split tile is dst = P_end + ((((0 + P_{b-1}) + P_{b-2}) + ...)),
//     partials in decreasing block order (TilePlan.Formula).
//
// Also ../shared/reference/ggml-cuda-kernels.md §5.8 and §8.3. The MMQ article in
// ../shared/reference/seeds (000_7e0ad5064ac484d3) quotes a different ggml version whose
// grid is min(nsm, nwork) with nwork = ntiles*ceil(ncols_x/K_vram); the modelled commit
// has no nwork: the grid is nsm or ntiles_dst as above.
//
// # MUL_MAT_ID
//
// With Params.ExpertCols the channels are experts and tile (jt, e) is empty when
// jt*J >= col_diff(e). Empty tiles keep their place in the kbc space, so they shift
// every other tile's split. mul_mat_q skips them (Output Skipped); when the skipped tile
// is a block's last, partial segment, the block returns without writing its fixup slot.
// The fixup kernel decides from kbc geometry alone, so for such a tile it still reads
// the predecessors' (never written, stale) slots and forms sum, but j_max =
// col_diff - jt*J - 1 < 0 makes it return before storing (Fixup.Writes false,
// Fixup.Stale). Stale values therefore never reach dst. (Before that check the kernel
// also loads ids_dst[col_low + jt*J + j] for all j < J, past the expert's columns; the
// loaded values are unused.) Columns beyond col_diff inside a non-empty tile are a
// write-back matter, not modelled here.
//
// # Invariants (tested)
//
// Block ranges tile [0, total) in order, consecutive blocks sharing their boundary (a
// block may be empty); every (tile, k-block) is covered by exactly one segment; within a
// tile the segments ascend in k and block index; exactly one of them reaches the tile's
// end (ToDst) and it belongs to the highest block; every other one is the last segment
// of its block (ToFixup) and is added by the fixup block of the end segment, in
// decreasing block order. Segment starts are multiples of blocks_per_iter. A split tile
// implies FixupNeeded; FixupNeeded does not imply a split.
//
// # Limits
//
// Plan materialises every block (Grid of them) and segment, O(Grid + NTiles) memory, and
// refuses more than MaxTiles tiles (2^22, far beyond real launches).
// Sizes where ggml's own 32-bit int arithmetic overflows (ntiles_dst, 100*ntiles_dst,
// a wrapped kbc product that passes ggml's assertion) are reported as errors wrapping
// errors.ErrUnsupported; a product >= 2^30 that fails ggml's GGML_ASSERT is a plain
// error, as is a conventional grid beyond CUDA's gridDim.y/z limit. When blocks_per_ne00
// is not a multiple of blocks_per_iter, the K loop's last step of an end segment reaches
// past the row end (Segment.Steps); that padding read is the kernels' business.
package streamk
