package mmq

import "github.com/ggsim/ggsim/quant"

// Per-type shared-memory models of mul_mat_q for CheckSharedMemory (smem.go): one
// thread's load_tiles stores and one thread's vec_dot loads, with the index arithmetic
// of mmq-load-tiles.cuh and mmq-vec-dot.cuh (ggml d99724f2b141; the NVIDIA branches:
// TURING_MMA_AVAILABLE for the MMA path, the #else branches for dp4a). File:line
// references are to those files. The values name what the kernel stores, derived from
// the block format (which 4 of the 256 values of the iteration a word holds), so a store
// to the wrong place or a load from it shows as a wrong word.

// smemKernel is one type's model on one path.
type smemKernel struct {
	load func(b *smemBlock, tid, tx, ty int)
	dot  func(b *smemBlock, tid, tx, ty, k00 int)
}

var (
	smemKernelsMMA  = map[quant.Type]*smemKernel{}
	smemKernelsDP4A = map[quant.Type]*smemKernel{}
)

func init() {
	// int8-MMA path: ggml_cuda_mmq_get_util_funcs' second switch (mmq.cuh:690-840).
	// Q8_0-type vec_dot: ggml_cuda_mmq_vec_dot_q8_0_q8_1_mma; Q8_1-type:
	// ggml_cuda_mmq_vec_dot_q8_1_q8_1_mma. Their NVIDIA branches load A, the x scale
	// and B, the y scale at the same indices (mmq-vec-dot.cuh:202-277, 369-440).
	for _, t := range []quant.Type{quant.Q4_0, quant.Q4_1, quant.Q5_0, quant.Q5_1, quant.IQ4_NL, quant.MXFP4} {
		smemKernelsMMA[t] = &smemKernel{load: smemLoadLegacyMMA, dot: smemDotMMA}
	}
	smemKernelsMMA[quant.Q8_0] = &smemKernel{load: smemLoadQ8_0MMA, dot: smemDotMMA}
	smemKernelsMMA[quant.Q4_K] = &smemKernel{load: smemLoadQ45_KMMA, dot: smemDotMMA}
	smemKernelsMMA[quant.Q5_K] = &smemKernel{load: smemLoadQ45_KMMA, dot: smemDotMMA}
	smemKernelsMMA[quant.IQ4_XS] = &smemKernel{load: smemLoadIQ4_XSMMA, dot: smemDotMMA}

	// dp4a path: the first switch (mmq.cuh:539-688).
	smemKernelsDP4A[quant.Q4_0] = &smemKernel{load: smemLoadQ4DP4A, dot: smemDotQ4DP4A}
	smemKernelsDP4A[quant.Q4_1] = &smemKernel{load: smemLoadQ4DP4A, dot: smemDotQ4DP4A}
	for _, t := range []quant.Type{quant.Q5_0, quant.Q5_1, quant.IQ4_NL, quant.MXFP4} {
		smemKernelsDP4A[t] = &smemKernel{load: smemLoadLegacy8DP4A, dot: smemDotQ8DP4A}
	}
	smemKernelsDP4A[quant.Q8_0] = &smemKernel{load: smemLoadQ8_0DP4A, dot: smemDotQ8DP4A}
	smemKernelsDP4A[quant.IQ4_XS] = &smemKernel{load: smemLoadIQ4_XSDP4A, dot: smemDotQ8DP4A}
}

// xStride is the store's x row stride with the test-only injected bug.
func (b *smemBlock) xStride(s int) int {
	if b.inj == injXRowStride {
		return s - 1
	}
	return s
}

func (b *smemBlock) scStride(s int) int {
	if b.inj == injScaleRowStride {
		return s + 1
	}
	return s
}

// smemLoadLegacyMMA: ggml_cuda_mmq_load_tiles_q4_0 / q4_1 / q5_0 / q5_1 / iq4_nl / mxfp4,
// MMA branch. threads_per_row = MMQ_ITER_K/(4*QR) = 32, so nrows = 1, i = i0 +
// threadIdx.y; kbx = txi/QI, kqsx = txi%QI (QI = 4): x_qs[i*sram_stride +
// kbx*(2*QI) + kqsx] (low nibbles: values 32*kbx + 4*kqsx..) and + QI (high nibbles:
// values 32*kbx + 16 + 4*kqsx..) (q4_0 :213-214, q4_1 :276-277, q5_0 :355-356, q5_1
// :433-434, iq4_nl :1524-1525, mxfp4 :1593-1594). Scales: blocks_per_tile_x_row = 8,
// rows_per_warp = 4, kbxd = threadIdx.x%8, i = i0 + threadIdx.y*4 + threadIdx.x/8:
// x_df/x_dm[i*sram_stride + kbxd] with x_df = x_qs + 2*MMQ_TILE_NE_K (:235, :298, :378,
// :456, :1547, :1616).
func smemLoadLegacyMMA(b *smemBlock, tid, tx, ty int) {
	const site = "load_tiles (legacy, MMA) x_qs (mmq-load-tiles.cuh:213 etc.)"
	const siteD = "load_tiles (legacy, MMA) x_df/x_dm (mmq-load-tiles.cuh:235 etc.)"
	kbx, kqsx := tx/quant.QI4_0, tx%quant.QI4_0 // QI = 4 for every type here
	for i0 := 0; i0 < b.I; i0 += b.nw {
		r := b.row(i0 + ty)
		base := b.xLo + r*b.xStride(b.stride)
		b.c.store(tid, base+kbx*8+kqsx, b.xq(r, (32*kbx+4*kqsx)/4), site)
		b.c.store(tid, base+kbx*8+kqsx+4, b.xq(r, (32*kbx+16+4*kqsx)/4), site)
	}
	kbxd := tx % 8
	for i0 := 0; i0 < b.I; i0 += b.nw * 4 {
		r := b.row(i0 + ty*4 + tx/8)
		b.c.store(tid, b.xLo+r*b.scStride(b.stride)+2*smemTileNeK+kbxd, b.xd(r, kbxd), siteD)
	}
}

// smemLoadQ8_0MMA: ggml_cuda_mmq_load_tiles_q8_0, MMA branch: threads_per_row = 32,
// i = i0 + threadIdx.y, kbx = txi/8, kqsx = txi%8: x_qs[i*sram_stride + txi] = int kqsx
// of block kbx, x_qs[i*sram_stride + MMQ_TILE_NE_K + txi] = int kqsx of block kbx+4
// (:497-498); x_df[i*sram_stride + kbxd], blocks_per_tile_x_row = 2*MMQ_TILE_NE_K/QI8_0
// = 8, rows_per_warp = 4 (:520).
func smemLoadQ8_0MMA(b *smemBlock, tid, tx, ty int) {
	const site = "ggml_cuda_mmq_load_tiles_q8_0 x_qs (mmq-load-tiles.cuh:497-498)"
	const siteD = "ggml_cuda_mmq_load_tiles_q8_0 x_df (mmq-load-tiles.cuh:520)"
	kbx, kqsx := tx/8, tx%8
	for i0 := 0; i0 < b.I; i0 += b.nw {
		r := b.row(i0 + ty)
		base := b.xLo + r*b.xStride(b.stride)
		b.c.store(tid, base+tx, b.xq(r, (32*kbx+4*kqsx)/4), site)
		b.c.store(tid, base+smemTileNeK+tx, b.xq(r, (32*(kbx+4)+4*kqsx)/4), site)
	}
	kbxd := tx % 8
	for i0 := 0; i0 < b.I; i0 += b.nw * 4 {
		r := b.row(i0 + ty*4 + tx/8)
		b.c.store(tid, b.xLo+r*b.scStride(b.stride)+2*smemTileNeK+kbxd, b.xd(r, kbxd), siteD)
	}
}

// smemLoadQ45_KMMA: ggml_cuda_mmq_load_tiles_q4_K / q5_K, MMA branch. qs: i = i0 +
// threadIdx.y, txi = threadIdx.x: int txi of qs holds values 64*(txi/8) + 4*(txi%8)..
// (low nibbles) and 32 more (high); Q4_K stores them at 16*(txi/8) + txi%8 (+8)
// (:736-737), Q5_K at kq0 = ky - ky%16 + txi%8, kq1 = kq0 + QI5_K/4 with ky = 2*txi
// (:858-859, the same words). Scales: rows_per_warp = 16, i = (i0 + threadIdx.y*16 +
// threadIdx.x/2) % I, ksc = threadIdx.x%2: x_dm[i*sram_stride + 4*ksc + l], l < 4, the
// sub-block 4*ksc + l (:776, :899).
func smemLoadQ45_KMMA(b *smemBlock, tid, tx, ty int) {
	const site = "ggml_cuda_mmq_load_tiles_q4_K/q5_K x_qs (mmq-load-tiles.cuh:736-737, 858-859)"
	const siteD = "ggml_cuda_mmq_load_tiles_q4_K/q5_K x_dm (mmq-load-tiles.cuh:776, 899)"
	for i0 := 0; i0 < b.I; i0 += b.nw {
		r := b.row(i0 + ty)
		base := b.xLo + r*b.xStride(b.stride)
		ky := 2 * tx
		kq0 := ky - ky%16 + tx%8
		b.c.store(tid, base+kq0, b.xq(r, (64*(tx/8)+4*(tx%8))/4), site)
		b.c.store(tid, base+kq0+8, b.xq(r, (64*(tx/8)+32+4*(tx%8))/4), site)
	}
	ksc := tx % 2
	for i0 := 0; i0 < b.I; i0 += b.nw * 16 {
		r := b.row((i0 + ty*16 + tx/2) % b.I)
		for l := 0; l < 4; l++ {
			b.c.store(tid, b.xLo+r*b.scStride(b.stride)+2*smemTileNeK+4*ksc+l, b.xd(r, 4*ksc+l), siteD)
		}
	}
}

// smemLoadIQ4_XSMMA: ggml_cuda_mmq_load_tiles_iq4_xs, MMA branch: kqsx = threadIdx.x,
// i = i0 + threadIdx.y; int kqsx of qs holds values 32*(kqsx/4) + 4*(kqsx%4).. (low)
// and 16 more (high), stored at k0 = 8*(kqsx/4) + kqsx%4 and k0 + 4 (:1455-1456).
// Scales: rows_per_warp = 4, i = i0 + threadIdx.y*4 + threadIdx.x/8:
// x_df[i*sram_stride + threadIdx.x%8] (:1480).
func smemLoadIQ4_XSMMA(b *smemBlock, tid, tx, ty int) {
	const site = "ggml_cuda_mmq_load_tiles_iq4_xs x_qs (mmq-load-tiles.cuh:1455-1456)"
	const siteD = "ggml_cuda_mmq_load_tiles_iq4_xs x_df (mmq-load-tiles.cuh:1480)"
	for i0 := 0; i0 < b.I; i0 += b.nw {
		r := b.row(i0 + ty)
		base := b.xLo + r*b.xStride(b.stride)
		k0 := 8*(tx/4) + tx%4
		b.c.store(tid, base+k0, b.xq(r, (32*(tx/4)+4*(tx%4))/4), site)
		b.c.store(tid, base+k0+4, b.xq(r, (32*(tx/4)+16+4*(tx%4))/4), site)
	}
	for i0 := 0; i0 < b.I; i0 += b.nw * 4 {
		r := b.row(i0 + ty*4 + tx/8)
		b.c.store(tid, b.xLo+r*b.scStride(b.stride)+2*smemTileNeK+tx%8, b.xd(r, tx%8), siteD)
	}
}

// smemDotMMA: ggml_cuda_mmq_vec_dot_q8_0_q8_1_mma and _q8_1_q8_1_mma, NVIDIA branch
// (mmq-vec-dot.cuh:202-277 and 369-440): y += (threadIdx.y%ntx)*(tile_C::J*MMQ_TILE_Y_K),
// y_qs = y + 4, y_df/y_ds = y; i0 = (threadIdx.y/ntx)*rows_per_warp. Per n < ntx and
// k01 (steps of 8): load_ldmatrix(A, x_qs + (i0 + n*16)*sram_stride + k0, sram_stride);
// per l < 2: x_df/x_dm[i*sram_stride + k0/8] with i = i0 + n*16 + tile_C::get_i(2*l).
// Per j0 (steps of ntx*8) and k01: load_generic(B, y_qs + j0*MMQ_TILE_Y_K + k01,
// MMQ_TILE_Y_K) and, per l < 2, y_df[j*MMQ_TILE_Y_K + k01/8] with j = j0 +
// tile_C::get_j(l).
func smemDotMMA(b *smemBlock, tid, tx, ty, k00 int) {
	const siteA = "vec_dot_q8_x_q8_1_mma load_ldmatrix(A, x_qs + ...) (mmq-vec-dot.cuh:231, 397)"
	const siteDA = "vec_dot_q8_x_q8_1_mma x_df/x_dm[i*sram_stride + k0/QI8_x] (mmq-vec-dot.cuh:242, 408)"
	const siteB = "vec_dot_q8_x_q8_1_mma load_generic(B, y_qs + j0*MMQ_TILE_Y_K + k01) (mmq-vec-dot.cuh:254, 420)"
	const siteDB = "vec_dot_q8_x_q8_1_mma y_df/y_ds[j*MMQ_TILE_Y_K + k01/QI8_1] (mmq-vec-dot.cuh:261-263, 426)"
	c := b.c
	y := b.yLo + (ty%b.ntx)*(8*smemTileYK)
	yqs := y + 4
	if b.inj == injTileYOffset {
		yqs = y + 3
	}
	col0 := (ty % b.ntx) * 8 // the tile column of this warp's y
	i0 := (ty / b.ntx) * b.rowsPerWarp
	for n := 0; n < b.ntx; n++ {
		R := i0 + n*16
		for k01 := 0; k01 < smemTileNeK; k01 += 8 {
			k0 := k00 + k01
			b.ldmatrixA(tid, tx, b.xLo+R*b.stride+k0, b.stride, R, k0, siteA)
		}
		for l := 0; l < 2; l++ {
			i := R + cGetI(tx, 2*l)
			for k01 := 0; k01 < smemTileNeK; k01 += 8 {
				k0 := k00 + k01
				c.load(tid, b.xLo+i*b.stride+2*smemTileNeK+k0/8, b.xd(i, k0/8), b.live(i), siteDA)
			}
		}
	}
	for j0 := 0; j0 < b.J; j0 += b.ntx * 8 {
		for k01 := 0; k01 < smemTileNeK; k01 += 8 {
			// tile<8, 8, int>: get_i(l) = threadIdx.x/4, get_j(l) = 4*l + threadIdx.x%4 (mma.cuh:224-260).
			for l := 0; l < 2; l++ {
				gi, gj := tx/4, 4*l+tx%4
				c.load(tid, yqs+j0*smemTileYK+k01+gi*smemTileYK+gj, b.yv(col0+j0+gi, 4+k01+gj), true, siteB)
			}
			for l := 0; l < 2; l++ {
				j := j0 + cGetJ(tx, l)
				c.load(tid, y+j*smemTileYK+k01/8, b.yv(col0+j, k01/8), true, siteDB)
			}
		}
	}
}

// ldmatrixA is load_ldmatrix of a tile<16, 8, int> (mma.cuh:830-845, TURING_MMA_AVAILABLE):
// lane tx gives the row address xs0 + (tx%16)*stride + (tx/16)*4 of ldmatrix.x4, which
// reads 16 bytes there: row R + tx%16, columns K + 4*(tx/16) .. +3 of the tile.
func (b *smemBlock) ldmatrixA(tid, tx, xs0, stride, R, K int, site string) {
	a := xs0 + (tx%16)*stride + (tx/16)*4
	if a%4 != 0 {
		b.c.report(SmemMisaligned, a, tid, -1, site)
	}
	r := R + tx%16
	for e := 0; e < 4; e++ {
		b.c.load(tid, a+e, b.xq(r, K+4*(tx/16)+e), b.live(r), site)
	}
}

// dp4a tile_x sizes (mmq_get_dp4a_tile_x_sizes, mmq.cuh:375-411): the qs part is
// I*(MMQ_TILE_NE_K+1) for Q4_0/Q4_1 (raw ints), I*(2*MMQ_TILE_NE_K+1) otherwise; the
// scale rows follow at x_qs + txs.qs.
func (b *smemBlock) dp4aQS(raw bool) int {
	if raw {
		return b.I*smemTileNeK + b.I
	}
	return b.I*2*smemTileNeK + b.I
}

// smemLoadQ4DP4A: ggml_cuda_mmq_load_tiles_q4_0 / q4_1, #else branch: x_qs[i*(MMQ_TILE_NE_K
// + 1) + txi] = raw int txi (block txi/4, int txi%4) (:216, :279); x_df/x_dm[i*(MMQ_TILE_NE_K/4)
// + i/4 + kbxd] at x_qs + txs.qs (:237, :300).
func smemLoadQ4DP4A(b *smemBlock, tid, tx, ty int) {
	const site = "load_tiles q4_0/q4_1 (dp4a) x_qs (mmq-load-tiles.cuh:216, 279)"
	const siteD = "load_tiles q4_0/q4_1 (dp4a) x_df/x_dm (mmq-load-tiles.cuh:237, 300)"
	for i0 := 0; i0 < b.I; i0 += b.nw {
		r := b.row(i0 + ty)
		b.c.store(tid, b.xLo+r*b.xStride(smemTileNeK+1)+tx, b.xraw(r, 4*(tx/4)+tx%4), site)
	}
	kbxd := tx % 8
	df := b.xLo + b.dp4aQS(true)
	for i0 := 0; i0 < b.I; i0 += b.nw * 4 {
		r := b.row(i0 + ty*4 + tx/8)
		b.c.store(tid, df+r*b.scStride(8)+r/4+kbxd, b.xd(r, kbxd), siteD)
	}
}

// smemLoadLegacy8DP4A: ggml_cuda_mmq_load_tiles_q5_0 / q5_1 / iq4_nl / mxfp4, #else
// branch: x_qs[i*(2*MMQ_TILE_NE_K + 1) + kbx*8 + kqsx] and + 4 (:358-359, :436-437,
// :1527-1528, :1596-1597); scales x_df/x_dm[i*(MMQ_TILE_NE_K/4) + i/4 + kbxd] at
// x_qs + txs.qs (:380, :458, :1549, :1618).
func smemLoadLegacy8DP4A(b *smemBlock, tid, tx, ty int) {
	const site = "load_tiles (legacy, dp4a) x_qs (mmq-load-tiles.cuh:358 etc.)"
	const siteD = "load_tiles (legacy, dp4a) x_df/x_dm (mmq-load-tiles.cuh:380 etc.)"
	kbx, kqsx := tx/quant.QI4_0, tx%quant.QI4_0 // QI = 4 for every type here
	for i0 := 0; i0 < b.I; i0 += b.nw {
		r := b.row(i0 + ty)
		base := b.xLo + r*b.xStride(2*smemTileNeK+1)
		b.c.store(tid, base+kbx*8+kqsx, b.xq(r, (32*kbx+4*kqsx)/4), site)
		b.c.store(tid, base+kbx*8+kqsx+4, b.xq(r, (32*kbx+16+4*kqsx)/4), site)
	}
	kbxd := tx % 8
	df := b.xLo + b.dp4aQS(false)
	for i0 := 0; i0 < b.I; i0 += b.nw * 4 {
		r := b.row(i0 + ty*4 + tx/8)
		b.c.store(tid, df+r*b.scStride(8)+r/4+kbxd, b.xd(r, kbxd), siteD)
	}
}

// smemLoadQ8_0DP4A: ggml_cuda_mmq_load_tiles_q8_0, #else branch: x_qs[i*(2*MMQ_TILE_NE_K
// + 1) + txi] and + MMQ_TILE_NE_K (:500-501); x_df[i*(2*MMQ_TILE_NE_K/QI8_0) +
// i/(QI8_0/2) + kbxd] (:522).
func smemLoadQ8_0DP4A(b *smemBlock, tid, tx, ty int) {
	const site = "ggml_cuda_mmq_load_tiles_q8_0 (dp4a) x_qs (mmq-load-tiles.cuh:500-501)"
	const siteD = "ggml_cuda_mmq_load_tiles_q8_0 (dp4a) x_df (mmq-load-tiles.cuh:522)"
	kbx, kqsx := tx/8, tx%8
	for i0 := 0; i0 < b.I; i0 += b.nw {
		r := b.row(i0 + ty)
		base := b.xLo + r*b.xStride(2*smemTileNeK+1)
		b.c.store(tid, base+tx, b.xq(r, (32*kbx+4*kqsx)/4), site)
		b.c.store(tid, base+smemTileNeK+tx, b.xq(r, (32*(kbx+4)+4*kqsx)/4), site)
	}
	kbxd := tx % 8
	df := b.xLo + b.dp4aQS(false)
	for i0 := 0; i0 < b.I; i0 += b.nw * 4 {
		r := b.row(i0 + ty*4 + tx/8)
		b.c.store(tid, df+r*b.scStride(2*smemTileNeK/quant.QI8_0)+r/(quant.QI8_0/2)+kbxd, b.xd(r, kbxd), siteD)
	}
}

// smemLoadIQ4_XSDP4A: ggml_cuda_mmq_load_tiles_iq4_xs, #else branch (:1458-1459, :1482).
func smemLoadIQ4_XSDP4A(b *smemBlock, tid, tx, ty int) {
	const site = "ggml_cuda_mmq_load_tiles_iq4_xs (dp4a) x_qs (mmq-load-tiles.cuh:1458-1459)"
	const siteD = "ggml_cuda_mmq_load_tiles_iq4_xs (dp4a) x_df (mmq-load-tiles.cuh:1482)"
	for i0 := 0; i0 < b.I; i0 += b.nw {
		r := b.row(i0 + ty)
		base := b.xLo + r*b.xStride(2*smemTileNeK+1)
		k0 := 8*(tx/4) + tx%4
		b.c.store(tid, base+k0, b.xq(r, (32*(tx/4)+4*(tx%4))/4), site)
		b.c.store(tid, base+k0+4, b.xq(r, (32*(tx/4)+16+4*(tx%4))/4), site)
	}
	df := b.xLo + b.dp4aQS(false)
	for i0 := 0; i0 < b.I; i0 += b.nw * 4 {
		r := b.row(i0 + ty*4 + tx/8)
		b.c.store(tid, df+r*b.scStride(8)+r/4+tx%8, b.xd(r, tx%8), siteD)
	}
}

// smemDotQ4DP4A: ggml_cuda_mmq_vec_dot_q4_0_q8_1_dp4a / _q4_1_ (mmq-vec-dot.cuh:10-57,
// 60-107): k01 in steps of QR4_0*VDR_Q4_0_Q8_1_MMQ = 8, j = j0 + threadIdx.y (steps of
// nwarps), i = i0 + threadIdx.x (steps of 32); kyqs = QI8_1*((k01/2)/(QI8_1/2)) +
// (k01/2)%(QI8_1/2); the four ints y_qs[j*MMQ_TILE_Y_K + kyqs ..] and + QI4_0
// (ggml_cuda_memcpy_1<16>), the impl's VDR = 4 ints &x_qs[i*(MMQ_TILE_NE_K + 1) +
// k0/QR4_0], x_df/x_dm[i*(MMQ_TILE_NE_K/QI4_0) + i/QI4_0 + k0/(QR4_0*QI4_0)],
// y_ds[j*MMQ_TILE_Y_K + k01/QI8_1]; y_qs = y + 4.
func smemDotQ4DP4A(b *smemBlock, tid, tx, ty, k00 int) {
	const site = "vec_dot_q4_0/q4_1_q8_1_dp4a (mmq-vec-dot.cuh:37-54, 87-104)"
	c := b.c
	yqs := b.yLo + 4
	if b.inj == injTileYOffset {
		yqs = b.yLo + 3
	}
	df := b.xLo + b.dp4aQS(true)
	for k01 := 0; k01 < smemTileNeK; k01 += 8 {
		k0 := k00 + k01
		for j0 := 0; j0 < b.J; j0 += b.nw {
			j := j0 + ty
			for i0 := 0; i0 < b.I; i0 += 32 {
				i := i0 + tx
				kyqs := 8*((k01/2)/4) + (k01/2)%4
				blk := k01 / 8 // the 32-value block of the half
				for l := 0; l < 4; l++ {
					c.load(tid, yqs+j*smemTileYK+kyqs+l, b.yv(j, 4+8*blk+l), true, site)
					c.load(tid, yqs+j*smemTileYK+kyqs+4+l, b.yv(j, 4+8*blk+4+l), true, site)
				}
				for l := 0; l < 4; l++ {
					c.load(tid, b.xLo+i*(smemTileNeK+1)+k0/2+l, b.xraw(i, 4*(k0/8)+l), b.live(i), site)
				}
				c.load(tid, df+i*8+i/4+k0/8, b.xd(i, k0/8), b.live(i), site)
				c.load(tid, b.yLo+j*smemTileYK+k01/8, b.yv(j, blk), true, site)
			}
		}
	}
}

// smemDotQ8DP4A: ggml_cuda_mmq_vec_dot_q8_0_q8_1_dp4a (mmq-vec-dot.cuh:110-140) and
// _q8_1_q8_1_dp4a (:283-313): k01 in steps of 8, the impl's 8 ints
// &x_qs[i*(2*MMQ_TILE_NE_K + 1) + k0] and &y_qs[j*MMQ_TILE_Y_K + k0%MMQ_TILE_NE_K],
// x_df[i*(2*MMQ_TILE_NE_K/QI8_0) + i/(QI8_0/2) + k0/QI8_0] (x_dm[i*(MMQ_TILE_NE_K/QI5_1)
// + i/QI5_1 + k0/QI8_1], the same word), y_df[j*MMQ_TILE_Y_K + (k0/QI8_1)%4].
func smemDotQ8DP4A(b *smemBlock, tid, tx, ty, k00 int) {
	const site = "vec_dot_q8_0/q8_1_q8_1_dp4a (mmq-vec-dot.cuh:133-136, 306-309)"
	c := b.c
	yqs := b.yLo + 4
	if b.inj == injTileYOffset {
		yqs = b.yLo + 3
	}
	df := b.xLo + b.dp4aQS(false)
	for k01 := 0; k01 < smemTileNeK; k01 += 8 {
		k0 := k00 + k01
		for j0 := 0; j0 < b.J; j0 += b.nw {
			j := j0 + ty
			for i0 := 0; i0 < b.I; i0 += 32 {
				i := i0 + tx
				for l := 0; l < 8; l++ {
					c.load(tid, b.xLo+i*(2*smemTileNeK+1)+k0+l, b.xq(i, k0+l), b.live(i), site)
					c.load(tid, yqs+j*smemTileYK+k0%smemTileNeK+l, b.yv(j, 4+k01+l), true, site)
				}
				c.load(tid, df+i*8+i/4+k0/8, b.xd(i, k0/8), b.live(i), site)
				c.load(tid, b.yLo+j*smemTileYK+(k0/8)%4, b.yv(j, k01/8), true, site)
			}
		}
	}
}

func init() {
	smemKernelsMMA[quant.Q6_K] = &smemKernel{load: smemLoadQ6_KMMA, dot: smemDotQ6_KMMA}
	smemKernelsMMA[quant.Q3_K] = &smemKernel{load: smemLoadQ3_KMMA, dot: smemDotQ8_0_16MMA}
	smemKernelsMMA[quant.Q2_K] = &smemKernel{load: smemLoadQ2_KMMA, dot: smemDotQ2_KMMA}
}

// ldmatrixA4 is load_ldmatrix of a tile<16, 4, int> (mma.cuh:800-812,
// TURING_MMA_AVAILABLE): ldmatrix.x2, whose row addresses come from lanes 0..15: lane
// tx gives xs0 + (tx%16)*stride and reads 16 bytes there, row R + tx, columns K..K+3.
func (b *smemBlock) ldmatrixA4(tid, tx, xs0, stride, R, K int, site string) {
	if tx >= 16 {
		return
	}
	a := xs0 + tx*stride
	if a%4 != 0 {
		b.c.report(SmemMisaligned, a, tid, -1, site)
	}
	r := R + tx
	for e := 0; e < 4; e++ {
		b.c.load(tid, a+e, b.xq(r, K+e), b.live(r), site)
	}
}

// loadB4 is load_generic of a tile<8, 4, int> (mma.cuh:778-783 with get_i = tx/4,
// get_j = tx%4): one int, column col0 + tx/4 of the tile, y word w0 + tx%4 of it.
func (b *smemBlock) loadB4(tid, tx, xs0, col0, w0 int, site string) {
	gi, gj := tx/4, tx%4
	b.c.load(tid, xs0+gi*smemTileYK+gj, b.yv(col0+gi, w0+gj), true, site)
}

// yQS returns y and y_qs of the MMA vec_dots: y + (threadIdx.y%ntx)*(tile_C::J*MMQ_TILE_Y_K)
// and y + 4, and the tile column of the warp's y.
func (b *smemBlock) yQS(ty int) (y, yqs, col0 int) {
	y = b.yLo + (ty%b.ntx)*(8*smemTileYK)
	yqs = y + 4
	if b.inj == injTileYOffset {
		yqs = y + 3
	}
	return y, yqs, (ty % b.ntx) * 8
}

// smemLoadQ6_KMMA: ggml_cuda_mmq_load_tiles_q6_K, MMA branch: threads_per_row = 32,
// i = i0 + threadIdx.y; int txi of ql holds, for h = txi/16, r = txi%16, the values
// 128*h + 4*r.. (low nibbles) and 128*h + 64 + 4*r.. (high), stored at kq0 = 2*txi -
// txi%(QI6_K/2) and kq1 = kq0 + QI6_K/2 (mmq-load-tiles.cuh:982-983); x_df[i*sram_stride]
// = d, i = (i0 + threadIdx.y*32 + threadIdx.x) % I (:1001); x_sc[i*sram_stride +
// threadIdx.x%4] = int threadIdx.x%4 of the 16 int8 scales, rows_per_warp = 8, i = (i0 +
// threadIdx.y*8 + threadIdx.x/4) % I (:1019), x_df = x_qs + 2*MMQ_TILE_NE_K, x_sc = x_df
// + MMQ_TILE_NE_K/QI6_K.
func smemLoadQ6_KMMA(b *smemBlock, tid, tx, ty int) {
	const site = "ggml_cuda_mmq_load_tiles_q6_K x_qs (mmq-load-tiles.cuh:982-983)"
	const siteD = "ggml_cuda_mmq_load_tiles_q6_K x_df (mmq-load-tiles.cuh:1001)"
	const siteS = "ggml_cuda_mmq_load_tiles_q6_K x_sc (mmq-load-tiles.cuh:1019)"
	h, rr := tx/16, tx%16
	kq0 := 2*tx - tx%(quant.QI6_K/2)
	for i0 := 0; i0 < b.I; i0 += b.nw {
		r := b.row(i0 + ty)
		base := b.xLo + r*b.xStride(b.stride)
		b.c.store(tid, base+kq0, b.xq(r, (128*h+4*rr)/4), site)
		b.c.store(tid, base+kq0+quant.QI6_K/2, b.xq(r, (128*h+64+4*rr)/4), site)
	}
	df := b.xLo + 2*smemTileNeK
	sc := df + smemTileNeK/quant.QI6_K
	for i0 := 0; i0 < b.I; i0 += b.nw * 32 {
		r := b.row((i0 + ty*32 + tx) % b.I)
		b.c.store(tid, df+r*b.scStride(b.stride), b.xd(r, 0), siteD)
	}
	for i0 := 0; i0 < b.I; i0 += b.nw * 8 {
		r := b.row((i0 + ty*8 + tx/4) % b.I)
		b.c.store(tid, sc+r*b.scStride(b.stride)+tx%4, b.xsc(r, tx%4), siteS)
	}
}

// smemDotQ6_KMMA: ggml_cuda_mmq_vec_dot_q6_K_q8_1_mma, TURING branch
// (mmq-vec-dot.cuh:1072-1173): i0 = (threadIdx.y/ntx)*(ntx*16); per n and k01 (steps of
// 8) two tile<16, 4> ldmatrix at x_qs + (i0 + n*16)*sram_stride + k0 and + 4; per k01
// (steps of 16) and l < 2 x_sc[i*sram_stride + k0/16]; per l < 2 x_df[i*sram_stride];
// per j0 and k01 (steps of 8) two tile<8, 4> load_generic at y_qs + j0*MMQ_TILE_Y_K +
// k01 and + 4, and y_df[j*MMQ_TILE_Y_K + k01/QI8_1].
func smemDotQ6_KMMA(b *smemBlock, tid, tx, ty, k00 int) {
	const siteA = "vec_dot_q6_K_q8_1_mma load_ldmatrix(A, x_qs + ...) (mmq-vec-dot.cuh:1103-1104)"
	const siteS = "vec_dot_q6_K_q8_1_mma x_sc[i*sram_stride + k0/16] (mmq-vec-dot.cuh:1115)"
	const siteD = "vec_dot_q6_K_q8_1_mma x_df[i*sram_stride] (mmq-vec-dot.cuh:1129)"
	const siteB = "vec_dot_q6_K_q8_1_mma load_generic(B, y_qs + ...) (mmq-vec-dot.cuh:1143-1144)"
	const siteDB = "vec_dot_q6_K_q8_1_mma y_df[j*MMQ_TILE_Y_K + k01/QI8_1] (mmq-vec-dot.cuh:1150)"
	c := b.c
	y, yqs, col0 := b.yQS(ty)
	df := b.xLo + 2*smemTileNeK
	sc := df + smemTileNeK/quant.QI6_K
	i0 := (ty / b.ntx) * (b.ntx * 16)
	for n := 0; n < b.ntx; n++ {
		R := i0 + n*16
		for k01 := 0; k01 < smemTileNeK; k01 += 8 {
			k0 := k00 + k01
			b.ldmatrixA4(tid, tx, b.xLo+R*b.stride+k0, b.stride, R, k0, siteA)
			b.ldmatrixA4(tid, tx, b.xLo+R*b.stride+k0+4, b.stride, R, k0+4, siteA)
		}
		for k01 := 0; k01 < smemTileNeK; k01 += 16 {
			k0 := k00 + k01
			for l := 0; l < 2; l++ {
				i := R + cGetI(tx, 2*l)
				c.load(tid, sc+i*b.stride+k0/16, b.xsc(i, k0/16), b.live(i), siteS)
			}
		}
		for l := 0; l < 2; l++ {
			i := R + cGetI(tx, 2*l)
			c.load(tid, df+i*b.stride, b.xd(i, 0), b.live(i), siteD)
		}
	}
	for j0 := 0; j0 < b.J; j0 += b.ntx * 8 {
		for k01 := 0; k01 < smemTileNeK; k01 += 8 {
			b.loadB4(tid, tx, yqs+j0*smemTileYK+k01, col0+j0, 4+k01, siteB)
			b.loadB4(tid, tx, yqs+j0*smemTileYK+k01+4, col0+j0, 4+k01+4, siteB)
			for l := 0; l < 2; l++ {
				j := j0 + cGetJ(tx, l)
				c.load(tid, y+j*smemTileYK+k01/8, b.yv(col0+j, k01/8), true, siteDB)
			}
		}
	}
}

// smemLoadQ23_KQS is the qs part of ggml_cuda_mmq_load_tiles_q2_K and _q3_K:
// threads_per_row = MMQ_ITER_K/(4*QR) = 16, nrows = 2, kqsx = threadIdx.x%16, i = i0 +
// threadIdx.y*2 + threadIdx.x/16; int kqsx of qs holds, at shift 2*l, the values
// 128*(kqsx/8) + 32*l + 4*(kqsx%8).., stored at k = (kqsx/8)*32 + l*8 + kqsx%8
// (q2_K :568, q3_K :634), row stride s.
func smemLoadQ23_KQS(b *smemBlock, tid, tx, ty, s int, site string) {
	kqsx := tx % 16
	for i0 := 0; i0 < b.I; i0 += 2 * b.nw {
		r := b.row(i0 + ty*2 + tx/16)
		base := b.xLo + r*b.xStride(s)
		for l := 0; l < 4; l++ {
			k := (kqsx/8)*32 + l*8 + kqsx%8
			b.c.store(tid, base+k, b.xq(r, (128*(kqsx/8)+32*l+4*(kqsx%8))/4), site)
		}
	}
}

// smemLoadQ2_KMMA: ggml_cuda_mmq_load_tiles_q2_K, MMA branch: the qs (:568) and, in the
// same loop, x_dm[i*sram_stride + kqsx] = dm*(scale kqsx) for sub-block kqsx of 16
// values (:583), x_dm = x_qs + 2*MMQ_TILE_NE_K.
func smemLoadQ2_KMMA(b *smemBlock, tid, tx, ty int) {
	smemLoadQ23_KQS(b, tid, tx, ty, b.stride, "ggml_cuda_mmq_load_tiles_q2_K x_qs (mmq-load-tiles.cuh:568)")
	const siteD = "ggml_cuda_mmq_load_tiles_q2_K x_dm (mmq-load-tiles.cuh:583)"
	kqsx := tx % 16
	for i0 := 0; i0 < b.I; i0 += 2 * b.nw {
		r := b.row(i0 + ty*2 + tx/16)
		b.c.store(tid, b.xLo+r*b.scStride(b.stride)+2*smemTileNeK+kqsx, b.xd(r, kqsx), siteD)
	}
}

// smemLoadQ3_KMMA: ggml_cuda_mmq_load_tiles_q3_K, MMA branch: the qs (:634) and
// x_df[i*sram_stride + 4*ksc + l] = d*sc[4*ksc + l], rows_per_warp = 8, i = i0 +
// threadIdx.y*8 + threadIdx.x/4, ksc = threadIdx.x%4 (:670).
func smemLoadQ3_KMMA(b *smemBlock, tid, tx, ty int) {
	smemLoadQ23_KQS(b, tid, tx, ty, b.stride, "ggml_cuda_mmq_load_tiles_q3_K x_qs (mmq-load-tiles.cuh:634)")
	const siteD = "ggml_cuda_mmq_load_tiles_q3_K x_df (mmq-load-tiles.cuh:670)"
	ksc := tx % 4
	for i0 := 0; i0 < b.I; i0 += b.nw * 8 {
		r := b.row(i0 + ty*8 + tx/4)
		for l := 0; l < 4; l++ {
			b.c.store(tid, b.xLo+r*b.scStride(b.stride)+2*smemTileNeK+4*ksc+l, b.xd(r, 4*ksc+l), siteD)
		}
	}
}

// smemDotQ8_0_16MMA: ggml_cuda_mmq_vec_dot_q8_0_16_q8_1_mma, TURING branch
// (mmq-vec-dot.cuh:533-609), Q3_K's: per n and k01 (steps of 8) a tile<16, 8> ldmatrix
// at x_qs + (i0 + n*16)*sram_stride + k0; per l < 2 and k01 (steps of 4)
// x_df[i*sram_stride + k0/4]; per j0 and k01 (steps of QR3_K*VDR_Q3_K_Q8_1_MMQ = 8)
// two tile<8, 4> load_generic at y_qs + j0*MMQ_TILE_Y_K + k01 and + 4, and
// y_df[j*MMQ_TILE_Y_K + k01/QI8_1].
func smemDotQ8_0_16MMA(b *smemBlock, tid, tx, ty, k00 int) {
	const siteA = "vec_dot_q8_0_16_q8_1_mma load_ldmatrix(A, x_qs + ...) (mmq-vec-dot.cuh:563)"
	const siteD = "vec_dot_q8_0_16_q8_1_mma x_df[i*sram_stride + k0/4] (mmq-vec-dot.cuh:574)"
	const siteB = "vec_dot_q8_0_16_q8_1_mma load_generic(B, y_qs + ...) (mmq-vec-dot.cuh:587-588)"
	const siteDB = "vec_dot_q8_0_16_q8_1_mma y_df[j*MMQ_TILE_Y_K + k01/QI8_1] (mmq-vec-dot.cuh:594)"
	c := b.c
	y, yqs, col0 := b.yQS(ty)
	i0 := (ty / b.ntx) * (b.ntx * 16)
	for n := 0; n < b.ntx; n++ {
		R := i0 + n*16
		for k01 := 0; k01 < smemTileNeK; k01 += 8 {
			k0 := k00 + k01
			b.ldmatrixA(tid, tx, b.xLo+R*b.stride+k0, b.stride, R, k0, siteA)
		}
		for l := 0; l < 2; l++ {
			i := R + cGetI(tx, 2*l)
			for k01 := 0; k01 < smemTileNeK; k01 += 4 {
				k0 := k00 + k01
				c.load(tid, b.xLo+i*b.stride+2*smemTileNeK+k0/4, b.xd(i, k0/4), b.live(i), siteD)
			}
		}
	}
	for j0 := 0; j0 < b.J; j0 += b.ntx * 8 {
		for k01 := 0; k01 < smemTileNeK; k01 += 8 {
			b.loadB4(tid, tx, yqs+j0*smemTileYK+k01, col0+j0, 4+k01, siteB)
			b.loadB4(tid, tx, yqs+j0*smemTileYK+k01+4, col0+j0, 4+k01+4, siteB)
			for l := 0; l < 2; l++ {
				j := j0 + cGetJ(tx, l)
				c.load(tid, y+j*smemTileYK+k01/8, b.yv(col0+j, k01/8), true, siteDB)
			}
		}
	}
}

// smemDotQ2_KMMA: ggml_cuda_mmq_vec_dot_q2_K_q8_1_mma, TURING branch
// (mmq-vec-dot.cuh:752-871): per n and k01 (steps of QI8_1) a tile<16, 8> ldmatrix at
// x_qs + (i0 + n*16)*sram_stride + k0; per l < 2 and k01 (steps of QI8_1/2)
// x_dm[i*sram_stride + k0/(QI8_1/2)]; per j0: y_ds[j*MMQ_TILE_Y_K] (l < 2), per k01
// (steps of QI8_1) two tile<8, 4> load_generic at y_qs + j0*MMQ_TILE_Y_K + k01 and + 4;
// per k01 < 3/4*MMQ_TILE_NE_K y_ds[j*MMQ_TILE_Y_K + 1 + k01/QI8_1] (l < 2).
func smemDotQ2_KMMA(b *smemBlock, tid, tx, ty, k00 int) {
	const siteA = "vec_dot_q2_K_q8_1_mma load_ldmatrix(A, x_qs + ...) (mmq-vec-dot.cuh:783)"
	const siteD = "vec_dot_q2_K_q8_1_mma x_dm[i*sram_stride + k0/(QI8_1/2)] (mmq-vec-dot.cuh:797)"
	const siteB = "vec_dot_q2_K_q8_1_mma load_generic(B, y_qs + ...) (mmq-vec-dot.cuh:821-822)"
	const siteDB = "vec_dot_q2_K_q8_1_mma y_ds[j*MMQ_TILE_Y_K (+ 1 + k01/QI8_1)] (mmq-vec-dot.cuh:813, 859)"
	c := b.c
	y, yqs, col0 := b.yQS(ty)
	i0 := (ty / b.ntx) * (b.ntx * 16)
	for n := 0; n < b.ntx; n++ {
		R := i0 + n*16
		for k01 := 0; k01 < smemTileNeK; k01 += 8 {
			k0 := k00 + k01
			b.ldmatrixA(tid, tx, b.xLo+R*b.stride+k0, b.stride, R, k0, siteA)
		}
	}
	for n := 0; n < b.ntx; n++ {
		R := i0 + n*16
		for l := 0; l < 2; l++ {
			i := R + cGetI(tx, 2*l)
			for k01 := 0; k01 < smemTileNeK; k01 += 4 {
				k0 := k00 + k01
				c.load(tid, b.xLo+i*b.stride+2*smemTileNeK+k0/4, b.xd(i, k0/4), b.live(i), siteD)
			}
		}
	}
	for j0 := 0; j0 < b.J; j0 += b.ntx * 8 {
		for l := 0; l < 2; l++ {
			j := j0 + cGetJ(tx, l)
			c.load(tid, y+j*smemTileYK, b.yv(col0+j, 0), true, siteDB)
		}
		for k01 := 0; k01 < smemTileNeK; k01 += 8 {
			b.loadB4(tid, tx, yqs+j0*smemTileYK+k01, col0+j0, 4+k01, siteB)
			b.loadB4(tid, tx, yqs+j0*smemTileYK+k01+4, col0+j0, 4+k01+4, siteB)
		}
		for k01 := 0; k01 < smemTileNeK*3/4; k01 += 8 {
			for l := 0; l < 2; l++ {
				j := j0 + cGetJ(tx, l)
				c.load(tid, y+j*smemTileYK+1+k01/8, b.yv(col0+j, 1+k01/8), true, siteDB)
			}
		}
	}
}

func init() {
	// dp4a path, K-quants: the load_tiles #else branches and the *_dp4a vec_dots with
	// vecdotq.cuh's _impl_mmq functions.
	smemKernelsDP4A[quant.Q4_K] = &smemKernel{load: smemLoadQ4_KDP4A, dot: smemDotQ4_KDP4A}
	smemKernelsDP4A[quant.Q5_K] = &smemKernel{load: smemLoadQ5_KDP4A, dot: smemDotQ5_KDP4A}
	smemKernelsDP4A[quant.Q6_K] = &smemKernel{load: smemLoadQ6_KDP4A, dot: smemDotQ6_KDP4A}
	smemKernelsDP4A[quant.Q3_K] = &smemKernel{load: smemLoadQ3_KDP4A, dot: smemDotQ3_KDP4A}
	smemKernelsDP4A[quant.Q2_K] = &smemKernel{load: smemLoadQ2_KDP4A, dot: smemDotQ2_KDP4A}
}

// dp4a tile_x parts of the K-quants (mmq_get_dp4a_tile_x_sizes, mmq.cuh:380-384): the
// word offsets of x_dm/x_df (txs.qs) and x_sc (txs.qs + txs.dm).
func (b *smemBlock) kDP4A(t quant.Type) (dm, sc int) {
	I := b.I
	switch t {
	case quant.Q4_K:
		return I*smemTileNeK + I, I*smemTileNeK + I + I*smemTileNeK/quant.QI4_K
	case quant.Q5_K:
		return I*smemTileNeK*2 + I, I*smemTileNeK*2 + I + I*smemTileNeK/quant.QI5_K + I/quant.QI5_K
	case quant.Q6_K:
		return I*smemTileNeK*2 + I, I*smemTileNeK*2 + I + I*smemTileNeK/quant.QI6_K + I/quant.QI6_K
	case quant.Q3_K:
		return I*smemTileNeK*2 + I, I*smemTileNeK*2 + I + I
	case quant.Q2_K:
		return I*smemTileNeK*2 + I, -1
	}
	panic("mmq: kDP4A: " + t.String())
}

// smemLoadK45Scales: the x_dm[i] and x_sc[i*(MMQ_TILE_NE_K/8) + i/8 + ksc] stores of
// the Q4_K/Q5_K dp4a loads: x_dm for i = (i0 + threadIdx.y*32 + threadIdx.x) % I
// (two threads per row store the same value), x_sc = unpack_scales_q45_K(ksc) (ksc 0, 1:
// scales, 2, 3: mins) for i = (i0 + threadIdx.y*8 + threadIdx.x/4) % I, ksc =
// threadIdx.x%4.
func smemLoadK45Scales(b *smemBlock, tid, tx, ty int, t quant.Type, siteD, siteS string) {
	dm, sc := b.kDP4A(t)
	for i0 := 0; i0 < b.I; i0 += b.nw * 32 {
		r := b.row((i0 + ty*32 + tx) % b.I)
		b.c.store(tid, b.xLo+dm+r, b.xd(r, 0), siteD)
	}
	for i0 := 0; i0 < b.I; i0 += b.nw * 8 {
		r := b.row((i0 + ty*8 + tx/4) % b.I)
		b.c.store(tid, b.xLo+sc+r*b.scStride(smemTileNeK/8)+r/8+tx%4, b.xsc(r, tx%4), siteS)
	}
}

// smemLoadQ4_KDP4A: ggml_cuda_mmq_load_tiles_q4_K, #else branch: x_qs[i*(MMQ_TILE_NE_K + 1)
// + txi] = raw int txi of qs (:739), x_dm[i] (:791), x_sc (:809).
func smemLoadQ4_KDP4A(b *smemBlock, tid, tx, ty int) {
	for i0 := 0; i0 < b.I; i0 += b.nw {
		r := b.row(i0 + ty)
		b.c.store(tid, b.xLo+r*b.xStride(smemTileNeK+1)+tx, b.xraw(r, tx), "ggml_cuda_mmq_load_tiles_q4_K (dp4a) x_qs (mmq-load-tiles.cuh:739)")
	}
	smemLoadK45Scales(b, tid, tx, ty, quant.Q4_K, "ggml_cuda_mmq_load_tiles_q4_K (dp4a) x_dm (mmq-load-tiles.cuh:791)",
		"ggml_cuda_mmq_load_tiles_q4_K (dp4a) x_sc (mmq-load-tiles.cuh:809)")
}

// smemLoadQ5_KDP4A: ggml_cuda_mmq_load_tiles_q5_K, #else branch: x_qs[i*(2*MMQ_TILE_NE_K +
// 1) + kq0] and kq1 as on the MMA path (:861-862), x_dm[i] (:914), x_sc (:933).
func smemLoadQ5_KDP4A(b *smemBlock, tid, tx, ty int) {
	const site = "ggml_cuda_mmq_load_tiles_q5_K (dp4a) x_qs (mmq-load-tiles.cuh:861-862)"
	for i0 := 0; i0 < b.I; i0 += b.nw {
		r := b.row(i0 + ty)
		base := b.xLo + r*b.xStride(2*smemTileNeK+1)
		ky := 2 * tx
		kq0 := ky - ky%16 + tx%8
		b.c.store(tid, base+kq0, b.xq(r, (64*(tx/8)+4*(tx%8))/4), site)
		b.c.store(tid, base+kq0+8, b.xq(r, (64*(tx/8)+32+4*(tx%8))/4), site)
	}
	smemLoadK45Scales(b, tid, tx, ty, quant.Q5_K, "ggml_cuda_mmq_load_tiles_q5_K (dp4a) x_dm (mmq-load-tiles.cuh:914)",
		"ggml_cuda_mmq_load_tiles_q5_K (dp4a) x_sc (mmq-load-tiles.cuh:933)")
}

// smemLoadQ6_KDP4A: ggml_cuda_mmq_load_tiles_q6_K, #else branch: x_qs as on the MMA path
// with row stride 2*MMQ_TILE_NE_K + 1 (:985-986), x_df[i*(MMQ_TILE_NE_K/QI6_K) + i/QI6_K]
// (:1003), x_sc[i*(MMQ_TILE_NE_K/8) + i/8 + threadIdx.x%4] (:1021).
func smemLoadQ6_KDP4A(b *smemBlock, tid, tx, ty int) {
	const site = "ggml_cuda_mmq_load_tiles_q6_K (dp4a) x_qs (mmq-load-tiles.cuh:985-986)"
	const siteD = "ggml_cuda_mmq_load_tiles_q6_K (dp4a) x_df (mmq-load-tiles.cuh:1003)"
	const siteS = "ggml_cuda_mmq_load_tiles_q6_K (dp4a) x_sc (mmq-load-tiles.cuh:1021)"
	h, rr := tx/16, tx%16
	kq0 := 2*tx - tx%(quant.QI6_K/2)
	for i0 := 0; i0 < b.I; i0 += b.nw {
		r := b.row(i0 + ty)
		base := b.xLo + r*b.xStride(2*smemTileNeK+1)
		b.c.store(tid, base+kq0, b.xq(r, (128*h+4*rr)/4), site)
		b.c.store(tid, base+kq0+quant.QI6_K/2, b.xq(r, (128*h+64+4*rr)/4), site)
	}
	df, sc := b.kDP4A(quant.Q6_K)
	for i0 := 0; i0 < b.I; i0 += b.nw * 32 {
		r := b.row((i0 + ty*32 + tx) % b.I)
		b.c.store(tid, b.xLo+df+r*b.scStride(smemTileNeK/quant.QI6_K)+r/quant.QI6_K, b.xd(r, 0), siteD)
	}
	for i0 := 0; i0 < b.I; i0 += b.nw * 8 {
		r := b.row((i0 + ty*8 + tx/4) % b.I)
		b.c.store(tid, b.xLo+sc+r*(smemTileNeK/8)+r/8+tx%4, b.xsc(r, tx%4), siteS)
	}
}

// smemLoadQ3_KDP4A: ggml_cuda_mmq_load_tiles_q3_K, #else branch: the qs (:636),
// x_sc[i*(MMQ_TILE_NE_K/8) + i/8 + ksc] for i = i0 + threadIdx.y*8 + threadIdx.x/4 (:673),
// x_df[i] for i = (i0 + threadIdx.y*32 + threadIdx.x) % I (:688).
func smemLoadQ3_KDP4A(b *smemBlock, tid, tx, ty int) {
	smemLoadQ23_KQS(b, tid, tx, ty, 2*smemTileNeK+1, "ggml_cuda_mmq_load_tiles_q3_K (dp4a) x_qs (mmq-load-tiles.cuh:636)")
	df, sc := b.kDP4A(quant.Q3_K)
	for i0 := 0; i0 < b.I; i0 += b.nw * 8 {
		r := b.row(i0 + ty*8 + tx/4)
		b.c.store(tid, b.xLo+sc+r*b.scStride(smemTileNeK/8)+r/8+tx%4, b.xsc(r, tx%4), "ggml_cuda_mmq_load_tiles_q3_K (dp4a) x_sc (mmq-load-tiles.cuh:673)")
	}
	for i0 := 0; i0 < b.I; i0 += b.nw * 32 {
		r := b.row((i0 + ty*32 + tx) % b.I)
		b.c.store(tid, b.xLo+df+r, b.xd(r, 0), "ggml_cuda_mmq_load_tiles_q3_K (dp4a) x_df (mmq-load-tiles.cuh:688)")
	}
}

// smemLoadQ2_KDP4A: ggml_cuda_mmq_load_tiles_q2_K, #else branch: the qs (:570) and
// x_dm[i*(MMQ_TILE_NE_K + 1) + kqsx] in the same loop (:585).
func smemLoadQ2_KDP4A(b *smemBlock, tid, tx, ty int) {
	smemLoadQ23_KQS(b, tid, tx, ty, 2*smemTileNeK+1, "ggml_cuda_mmq_load_tiles_q2_K (dp4a) x_qs (mmq-load-tiles.cuh:570)")
	dm, _ := b.kDP4A(quant.Q2_K)
	kqsx := tx % 16
	for i0 := 0; i0 < b.I; i0 += 2 * b.nw {
		r := b.row(i0 + ty*2 + tx/16)
		b.c.store(tid, b.xLo+dm+r*b.scStride(smemTileNeK+1)+kqsx, b.xd(r, kqsx), "ggml_cuda_mmq_load_tiles_q2_K (dp4a) x_dm (mmq-load-tiles.cuh:585)")
	}
}

// dp4aThreads runs f for the (j, i) pairs of thread (tx, ty) in a dp4a vec_dot:
// j = j0 + threadIdx.y (steps of nwarps), i = i0 + threadIdx.x (steps of 32).
func (b *smemBlock) dp4aThreads(tx, ty int, f func(j, i int)) {
	for j0 := 0; j0 < b.J; j0 += b.nw {
		for i0 := 0; i0 < b.I; i0 += 32 {
			f(j0+ty, i0+tx)
		}
	}
}

func (b *smemBlock) dp4aYQS() int {
	if b.inj == injTileYOffset {
		return b.yLo + 3
	}
	return b.yLo + 4
}

// smemDotQ4_KDP4A: ggml_cuda_mmq_vec_dot_q4_K_q8_1_dp4a (mmq-vec-dot.cuh:913-945), k01 in
// steps of QR4_K*VDR_Q4_K_Q8_1_MMQ = 16: vec_dot_q4_K_q8_1_impl_mmq (vecdotq.cuh:533-552)
// reads v[0..7] of &x_qs[i*(MMQ_TILE_NE_K + 1) + k0/2], u[0..15] of &y_qs[j*MMQ_TILE_Y_K
// + k01], sc[0..1] and m = sc+8 [0..1] of the bytes &x_sc[i*(MMQ_TILE_NE_K/8) + i/8 +
// k0/32] + 2*(k01/16), x_dm[i] and ds8[0..1] of &y_ds[j*MMQ_TILE_Y_K + k01/QI8_1].
func smemDotQ4_KDP4A(b *smemBlock, tid, tx, ty, k00 int) {
	const site = "vec_dot_q4_K_q8_1_dp4a (mmq-vec-dot.cuh:937-942)"
	c := b.c
	dm, sc := b.kDP4A(quant.Q4_K)
	yqs := b.dp4aYQS()
	for k01 := 0; k01 < smemTileNeK; k01 += 16 {
		k0 := k00 + k01
		b.dp4aThreads(tx, ty, func(j, i int) {
			live := b.live(i)
			scw := sc + i*(smemTileNeK/8) + i/8 + k0/32 // the int holding bytes sc[0..1]
			byteOff := 2 * (k01 / 16)
			for e := 0; e < 2; e++ {
				c.load(tid, b.xLo+scw+(byteOff+e)/4, b.xsc(i, k0/32), live, site)
				c.load(tid, b.xLo+scw+(byteOff+8+e)/4, b.xsc(i, k0/32+2), live, site)
			}
			for l := 0; l < 8; l++ {
				c.load(tid, b.xLo+i*(smemTileNeK+1)+k0/2+l, b.xraw(i, k0/2+l), live, site)
			}
			for l := 0; l < 16; l++ {
				c.load(tid, yqs+j*smemTileYK+k01+l, b.yv(j, 4+k01+l), true, site)
			}
			c.load(tid, b.xLo+dm+i, b.xd(i, 0), live, site)
			for e := 0; e < 2; e++ {
				c.load(tid, b.yLo+j*smemTileYK+k01/8+e, b.yv(j, k01/8+e), true, site)
			}
		})
	}
}

// smemDotQ5_KDP4A: ggml_cuda_mmq_vec_dot_q5_K_q8_1_dp4a (mmq-vec-dot.cuh:948-980): as Q4_K
// with v[0..15] of &x_qs[i*(QR5_K*MMQ_TILE_NE_K + 1) + k0] (vecdotq.cuh:596-615) and the
// scale int at k00/32.
func smemDotQ5_KDP4A(b *smemBlock, tid, tx, ty, k00 int) {
	const site = "vec_dot_q5_K_q8_1_dp4a (mmq-vec-dot.cuh:972-977)"
	c := b.c
	dm, sc := b.kDP4A(quant.Q5_K)
	yqs := b.dp4aYQS()
	for k01 := 0; k01 < smemTileNeK; k01 += 16 {
		k0 := k00 + k01
		b.dp4aThreads(tx, ty, func(j, i int) {
			live := b.live(i)
			scw := sc + i*(smemTileNeK/8) + i/8 + k00/32
			byteOff := 2 * (k01 / 16)
			for e := 0; e < 2; e++ {
				c.load(tid, b.xLo+scw+(byteOff+e)/4, b.xsc(i, k0/32), live, site)
				c.load(tid, b.xLo+scw+(byteOff+8+e)/4, b.xsc(i, k0/32+2), live, site)
			}
			for l := 0; l < 16; l++ {
				c.load(tid, b.xLo+i*(2*smemTileNeK+1)+k0+l, b.xq(i, k0+l), live, site)
				c.load(tid, yqs+j*smemTileYK+k01+l, b.yv(j, 4+k01+l), true, site)
			}
			c.load(tid, b.xLo+dm+i, b.xd(i, 0), live, site)
			for e := 0; e < 2; e++ {
				c.load(tid, b.yLo+j*smemTileYK+k01/8+e, b.yv(j, k01/8+e), true, site)
			}
		})
	}
}

// smemDotQ6_KDP4A: ggml_cuda_mmq_vec_dot_q6_K_q8_1_dp4a (mmq-vec-dot.cuh:983-1015), k01
// in steps of QR6_K*VDR_Q6_K_Q8_1_MMQ = 16: vec_dot_q6_K_q8_1_impl_mmq
// (vecdotq.cuh:650-672) reads the scale int &x_sc[i*(MMQ_TILE_NE_K/8) + i/8 + k0/16],
// v and u [0..15] of &x_qs[i*(QR6_K*MMQ_TILE_NE_K + 1) + k0] and &y_qs[j*MMQ_TILE_Y_K +
// k01], x_df[i*(MMQ_TILE_NE_K/QI6_K) + i/QI6_K] and d8[0..1] of &y_df[j*MMQ_TILE_Y_K +
// k01/QI8_1].
func smemDotQ6_KDP4A(b *smemBlock, tid, tx, ty, k00 int) {
	const site = "vec_dot_q6_K_q8_1_dp4a (mmq-vec-dot.cuh:1008-1012)"
	c := b.c
	df, sc := b.kDP4A(quant.Q6_K)
	yqs := b.dp4aYQS()
	for k01 := 0; k01 < smemTileNeK; k01 += 16 {
		k0 := k00 + k01
		b.dp4aThreads(tx, ty, func(j, i int) {
			live := b.live(i)
			c.load(tid, b.xLo+sc+i*(smemTileNeK/8)+i/8+k0/16, b.xsc(i, k0/16), live, site)
			for l := 0; l < 16; l++ {
				c.load(tid, b.xLo+i*(2*smemTileNeK+1)+k0+l, b.xq(i, k0+l), live, site)
				c.load(tid, yqs+j*smemTileYK+k01+l, b.yv(j, 4+k01+l), true, site)
			}
			c.load(tid, b.xLo+df+i*(smemTileNeK/quant.QI6_K)+i/quant.QI6_K, b.xd(i, 0), live, site)
			for e := 0; e < 2; e++ {
				c.load(tid, b.yLo+j*smemTileYK+k01/8+e, b.yv(j, k01/8+e), true, site)
			}
		})
	}
}

// smemDotQ3_KDP4A: ggml_cuda_mmq_vec_dot_q3_K_q8_1_dp4a (mmq-vec-dot.cuh:878-910), k01 in
// steps of QR3_K*VDR_Q3_K_Q8_1_MMQ = 8: vec_dot_q3_K_q8_1_impl_mmq (vecdotq.cuh:483-499)
// reads v and u [0..7] of &x_qs[i*(2*MMQ_TILE_NE_K + 1) + k0] and &y_qs[j*MMQ_TILE_Y_K +
// k01], scales[0..1] of the bytes (int8 *)(x_sc + i*(MMQ_TILE_NE_K/8) + i/8) + k0/4,
// x_df[i] and y_df[j*MMQ_TILE_Y_K + k01/QI8_1].
func smemDotQ3_KDP4A(b *smemBlock, tid, tx, ty, k00 int) {
	const site = "vec_dot_q3_K_q8_1_dp4a (mmq-vec-dot.cuh:904-907)"
	c := b.c
	df, sc := b.kDP4A(quant.Q3_K)
	yqs := b.dp4aYQS()
	for k01 := 0; k01 < smemTileNeK; k01 += 8 {
		k0 := k00 + k01
		b.dp4aThreads(tx, ty, func(j, i int) {
			live := b.live(i)
			for e := 0; e < 2; e++ {
				byteIdx := k0/4 + e
				c.load(tid, b.xLo+sc+i*(smemTileNeK/8)+i/8+byteIdx/4, b.xsc(i, byteIdx/4), live, site)
			}
			for l := 0; l < 8; l++ {
				c.load(tid, b.xLo+i*(2*smemTileNeK+1)+k0+l, b.xq(i, k0+l), live, site)
				c.load(tid, yqs+j*smemTileYK+k01+l, b.yv(j, 4+k01+l), true, site)
			}
			c.load(tid, b.xLo+df+i, b.xd(i, 0), live, site)
			c.load(tid, b.yLo+j*smemTileYK+k01/8, b.yv(j, k01/8), true, site)
		})
	}
}

// smemDotQ2_KDP4A: ggml_cuda_mmq_vec_dot_q2_K_q8_1_dp4a (mmq-vec-dot.cuh:616-679): first
// y_ds[j*MMQ_TILE_Y_K] per j; then k01 = 0 (ns = 2) and k01 = MMQ_TILE_NE_K/2 (ns = 1):
// vec_dot_q2_K_q8_1_impl_mmq<ns> (vecdotq.cuh:396-445) reads v and u [0..15] of
// &x_qs[i*(2*MMQ_TILE_NE_K + 1) + k0] and &y_qs[j*MMQ_TILE_Y_K + k01], dm2[0..3] of
// &x_dm[i*(MMQ_TILE_NE_K + 1) + k0/4] and s8[0..ns-1] of &y_ds[j*MMQ_TILE_Y_K + 1 +
// k01/QI8_1].
func smemDotQ2_KDP4A(b *smemBlock, tid, tx, ty, k00 int) {
	const site = "vec_dot_q2_K_q8_1_dp4a (mmq-vec-dot.cuh:631-677)"
	c := b.c
	dm, _ := b.kDP4A(quant.Q2_K)
	yqs := b.dp4aYQS()
	for j0 := 0; j0 < b.J; j0 += b.nw {
		j := j0 + ty
		c.load(tid, b.yLo+j*smemTileYK, b.yv(j, 0), true, site)
	}
	for k01, ns := 0, 2; k01 < smemTileNeK; k01, ns = k01+16, 1 {
		k0 := k00 + k01
		b.dp4aThreads(tx, ty, func(j, i int) {
			live := b.live(i)
			for l := 0; l < 16; l++ {
				c.load(tid, b.xLo+i*(2*smemTileNeK+1)+k0+l, b.xq(i, k0+l), live, site)
				c.load(tid, yqs+j*smemTileYK+k01+l, b.yv(j, 4+k01+l), true, site)
			}
			for e := 0; e < 4; e++ {
				c.load(tid, b.xLo+dm+i*(smemTileNeK+1)+k0/4+e, b.xd(i, k0/4+e), live, site)
			}
			for e := 0; e < ns; e++ {
				c.load(tid, b.yLo+j*smemTileYK+1+k01/8+e, b.yv(j, 1+k01/8+e), true, site)
			}
		})
	}
}

func init() {
	// IQ types, NVFP4, Q1_0, Q2_0: the same vec_dots as above (mmq.cuh:539-840).
	for _, t := range []quant.Type{quant.IQ2_XXS, quant.IQ3_XXS, quant.IQ3_S} {
		smemKernelsMMA[t] = &smemKernel{load: smemLoadIQGrid(t, false), dot: smemDotMMA}
		smemKernelsDP4A[t] = &smemKernel{load: smemLoadIQGrid(t, false), dot: smemDotQ8DP4A}
	}
	smemKernelsMMA[quant.IQ1_S] = &smemKernel{load: smemLoadIQGrid(quant.IQ1_S, false), dot: smemDotMMA}
	smemKernelsDP4A[quant.IQ1_S] = &smemKernel{load: smemLoadIQGrid(quant.IQ1_S, false), dot: smemDotQ8DP4A}
	for _, t := range []quant.Type{quant.IQ2_XS, quant.IQ2_S} {
		smemKernelsMMA[t] = &smemKernel{load: smemLoadIQGrid(t, true), dot: smemDotQ8_0_16MMA}
		smemKernelsDP4A[t] = &smemKernel{load: smemLoadIQGrid(t, true), dot: smemDotQ8_0_16DP4A}
	}
	smemKernelsMMA[quant.NVFP4] = &smemKernel{load: smemLoadNVFP4, dot: smemDotQ8_0_16MMA}
	smemKernelsDP4A[quant.NVFP4] = &smemKernel{load: smemLoadNVFP4, dot: smemDotQ8_0_16DP4A}
	for _, t := range []quant.Type{quant.Q1_0, quant.Q2_0} {
		smemKernelsMMA[t] = &smemKernel{load: smemLoadQ12_0(t), dot: smemDotMMA}
		smemKernelsDP4A[t] = &smemKernel{load: smemLoadQ12_0(t), dot: smemDotQ8DP4A}
	}
}

// smemIQSites are the x_qs and scale store lines (MMA, dp4a) of the grid-type loads.
var smemIQSites = map[quant.Type][2]string{
	quant.IQ1_S:   {"ggml_cuda_mmq_load_tiles_iq1_s x_qs (mmq-load-tiles.cuh:1071-1072, dp4a 1074-1075)", "ggml_cuda_mmq_load_tiles_iq1_s x_ds (mmq-load-tiles.cuh:1083, dp4a 1085)"},
	quant.IQ2_XXS: {"ggml_cuda_mmq_load_tiles_iq2_xxs x_qs (mmq-load-tiles.cuh:1136-1137, dp4a 1139-1140)", "ggml_cuda_mmq_load_tiles_iq2_xxs x_df (mmq-load-tiles.cuh:1147, dp4a 1149)"},
	quant.IQ2_XS:  {"ggml_cuda_mmq_load_tiles_iq2_xs x_qs (mmq-load-tiles.cuh:1199-1200, dp4a 1202-1203)", "ggml_cuda_mmq_load_tiles_iq2_xs x_df (mmq-load-tiles.cuh:1210-1211, dp4a 1213-1214)"},
	quant.IQ2_S:   {"ggml_cuda_mmq_load_tiles_iq2_s x_qs (mmq-load-tiles.cuh:1267-1268, dp4a 1270-1271)", "ggml_cuda_mmq_load_tiles_iq2_s x_df (mmq-load-tiles.cuh:1278-1279, dp4a 1281-1282)"},
	quant.IQ3_XXS: {"ggml_cuda_mmq_load_tiles_iq3_xxs x_qs (mmq-load-tiles.cuh:1333-1334, dp4a 1336-1337)", "ggml_cuda_mmq_load_tiles_iq3_xxs x_df (mmq-load-tiles.cuh:1344, dp4a 1346)"},
	quant.IQ3_S:   {"ggml_cuda_mmq_load_tiles_iq3_s x_qs (mmq-load-tiles.cuh:1402-1403, dp4a 1405-1406)", "ggml_cuda_mmq_load_tiles_iq3_s x_df (mmq-load-tiles.cuh:1413, dp4a 1415)"},
}

// smemLoadIQGrid: ggml_cuda_mmq_load_tiles_iq1_s / iq2_xxs / iq2_xs / iq2_s / iq3_xxs /
// iq3_s: threads_per_row = (MMQ_ITER_K/(4*QR))/2 = 8 (QR = 4; IQ1_S: MMQ_ITER_K/(4*QR1_S)
// with QR1_S = 8), nrows = 4, kqsx = threadIdx.x%8, i = i0 + threadIdx.y*4 +
// threadIdx.x/8; thread kqsx decodes the 32 values of sub-block kqsx, 8 per l < 4
// (grid_l: values 8*l..8*l+3, grid_h: the next 4), at x_qs[i*stride + 8*kqsx + 2*l]
// and + 1; its scale at x_df[... + kqsx] (per 32 values), or for IQ2_XS/IQ2_S
// (scale16) the two scales of 16 values at 2*kqsx and 2*kqsx+1. Row strides: sram_stride
// (MMA); 2*MMQ_TILE_NE_K + 1 and the scales at txs.qs with i*(MMQ_TILE_NE_K/4) + i/4
// (Q8_0 layout) or i*(2*MMQ_TILE_NE_K*2/QI8_0) + i/(QI8_0/4) (Q8_0_16 layout) (dp4a).
func smemLoadIQGrid(t quant.Type, scale16 bool) func(b *smemBlock, tid, tx, ty int) {
	sites := smemIQSites[t]
	return func(b *smemBlock, tid, tx, ty int) {
		kqsx := tx % 8
		for i0 := 0; i0 < b.I; i0 += b.nw * 4 {
			r := b.row(i0 + ty*4 + tx/8)
			var base, scBase int
			switch {
			case !b.dp4a:
				base = b.xLo + r*b.xStride(b.stride)
				scBase = b.xLo + r*b.scStride(b.stride) + 2*smemTileNeK
			case scale16:
				base = b.xLo + r*b.xStride(2*smemTileNeK+1)
				scBase = b.xLo + b.dp4aQS(false) + r*b.scStride(2*smemTileNeK*2/quant.QI8_0) + r/(quant.QI8_0/4)
			default:
				base = b.xLo + r*b.xStride(2*smemTileNeK+1)
				scBase = b.xLo + b.dp4aQS(false) + r*b.scStride(smemTileNeK/4) + r/4
			}
			for l := 0; l < 4; l++ {
				b.c.store(tid, base+8*kqsx+2*l, b.xq(r, (32*kqsx+8*l)/4), sites[0])
				b.c.store(tid, base+8*kqsx+2*l+1, b.xq(r, (32*kqsx+8*l+4)/4), sites[0])
			}
			if scale16 {
				b.c.store(tid, scBase+2*kqsx, b.xd(r, 2*kqsx), sites[1])
				b.c.store(tid, scBase+2*kqsx+1, b.xd(r, 2*kqsx+1), sites[1])
			} else {
				b.c.store(tid, scBase+kqsx, b.xd(r, kqsx), sites[1])
			}
		}
	}
}

// smemLoadNVFP4: ggml_cuda_mmq_load_tiles_nvfp4 (mmq-load-tiles.cuh:1680-1718):
// threads_per_row = MMQ_ITER_K/QK_NVFP4 = 4, rows_per_warp = 8, kbx = threadIdx.x%4,
// i = i0 + threadIdx.y*8 + threadIdx.x/4; per sub-block sub < 4 of 16 values
// x_qs[... + 16*kbx + 4*sub + e] = values 64*kbx + 16*sub + {0, 4, 8, 12}[e] (q0.x, q1.x,
// q0.y, q1.y) and x_df[... + 4*kbx + sub] (MMA :1705-1709, dp4a :1711-1715).
func smemLoadNVFP4(b *smemBlock, tid, tx, ty int) {
	const site = "ggml_cuda_mmq_load_tiles_nvfp4 x_qs (mmq-load-tiles.cuh:1705-1708, dp4a 1711-1714)"
	const siteD = "ggml_cuda_mmq_load_tiles_nvfp4 x_df (mmq-load-tiles.cuh:1709, dp4a 1715)"
	kbx := tx % (256 / quant.QK_NVFP4) // threads_per_row = MMQ_ITER_K/QK_NVFP4
	for i0 := 0; i0 < b.I; i0 += 8 * b.nw {
		r := b.row(i0 + ty*8 + tx/4)
		base := b.xLo + r*b.xStride(2*smemTileNeK+1)
		scBase := b.xLo + b.dp4aQS(false) + r*b.scStride(2*smemTileNeK*2/8) + r/(16/8)
		if !b.dp4a {
			base = b.xLo + r*b.xStride(b.stride)
			scBase = b.xLo + r*b.scStride(b.stride) + 2*smemTileNeK
		}
		for sub := 0; sub < 4; sub++ {
			for e, off := range [4]int{0, 4, 8, 12} {
				b.c.store(tid, base+16*kbx+4*sub+e, b.xq(r, (64*kbx+16*sub+off)/4), site)
			}
			b.c.store(tid, scBase+4*kbx+sub, b.xd(r, 4*kbx+sub), siteD)
		}
	}
}

// smemLoadQ12_0: ggml_cuda_mmq_load_tiles_q1_0 / q2_0 (mmq-load-tiles.cuh:7-96, 98-177):
// blocks_per_iter = MMQ_ITER_K/QK (QK1_0 = 128, QK2_0 = 64), threads_per_row =
// blocks_per_iter*QI = 8, nrows = 4, txi = threadIdx.x%8, kbx = txi/QI, kqsx = txi%QI,
// i = i0 + threadIdx.y*4 + threadIdx.x/8; dst_offset = kbx*(QK/32*QI8_0) + kqsx*QI8_0,
// the words dst_offset + 4*j + e (Q1_0, j < 2: 16 values per int16) or + 2*j + e (Q2_0,
// j < 4: 8 values per int16) (MMA :64-67, :149-150; dp4a :69-72, :152-153). Scales:
// ksx = threadIdx.x%8, i = i0 + threadIdx.y: x_df[... + ksx] = d of block ksx/(QK/32)
// (four lanes per row store the same word) (:91, :172; dp4a :93, :174).
func smemLoadQ12_0(t quant.Type) func(b *smemBlock, tid, tx, ty int) {
	qk, qi, perJ, nj := quant.QK1_0, quant.QI1_0, 4, 2 // words per int16, int16s per thread
	site := "ggml_cuda_mmq_load_tiles_q1_0 x_qs (mmq-load-tiles.cuh:64-67, dp4a 69-72)"
	siteD := "ggml_cuda_mmq_load_tiles_q1_0 x_df (mmq-load-tiles.cuh:91, dp4a 93)"
	if t == quant.Q2_0 {
		qk, qi, perJ, nj = quant.QK2_0, quant.QI2_0, 2, 4
		site = "ggml_cuda_mmq_load_tiles_q2_0 x_qs (mmq-load-tiles.cuh:149-150, dp4a 152-153)"
		siteD = "ggml_cuda_mmq_load_tiles_q2_0 x_df (mmq-load-tiles.cuh:172, dp4a 174)"
	}
	return func(b *smemBlock, tid, tx, ty int) {
		txi := tx % 8
		kbx, kqsx := txi/qi, txi%qi
		dstOff := kbx*(qk/32*quant.QI8_0) + kqsx*quant.QI8_0
		rowStride := b.stride
		if b.dp4a {
			rowStride = 2*smemTileNeK + 1
		}
		for i0 := 0; i0 < b.I; i0 += 4 * b.nw {
			r := b.row(i0 + ty*4 + tx/8)
			base := b.xLo + r*b.xStride(rowStride)
			for j := 0; j < nj; j++ {
				for e := 0; e < perJ; e++ {
					// values qk*kbx + 32*kqsx + 4*perJ*j + 4*e
					b.c.store(tid, base+dstOff+perJ*j+e, b.xq(r, (qk*kbx+32*kqsx+4*perJ*j+4*e)/4), site)
				}
			}
		}
		ksx := tx % 8
		for i0 := 0; i0 < b.I; i0 += b.nw {
			r := b.row(i0 + ty)
			a := b.xLo + r*b.scStride(b.stride) + 2*smemTileNeK + ksx
			if b.dp4a {
				a = b.xLo + b.dp4aQS(false) + r*b.scStride(2*smemTileNeK/quant.QI8_0) + r/(quant.QI8_0/2) + ksx
			}
			b.c.store(tid, a, b.xd(r, ksx), siteD)
		}
	}
}

// smemDotQ8_0_16DP4A: ggml_cuda_mmq_vec_dot_q8_0_16_q8_1_dp4a (mmq-vec-dot.cuh:446-479),
// k01 in steps of QI8_0: vec_dot_q8_0_16_q8_1_impl<QI8_0> reads v and u [0..7] of
// &x_qs[i*(2*MMQ_TILE_NE_K + 1) + k0] and &y_qs[j*MMQ_TILE_Y_K + k01], d8_0[0..1] of
// &x_df[i*(2*MMQ_TILE_NE_K*2/QI8_0) + i/(QI8_0/4) + k0/(QI8_0/2)] and
// y_df[j*MMQ_TILE_Y_K + k01/QI8_1].
func smemDotQ8_0_16DP4A(b *smemBlock, tid, tx, ty, k00 int) {
	const site = "vec_dot_q8_0_16_q8_1_dp4a (mmq-vec-dot.cuh:471-475)"
	c := b.c
	df := b.xLo + b.dp4aQS(false)
	yqs := b.dp4aYQS()
	for k01 := 0; k01 < smemTileNeK; k01 += 8 {
		k0 := k00 + k01
		b.dp4aThreads(tx, ty, func(j, i int) {
			live := b.live(i)
			for l := 0; l < 8; l++ {
				c.load(tid, b.xLo+i*(2*smemTileNeK+1)+k0+l, b.xq(i, k0+l), live, site)
				c.load(tid, yqs+j*smemTileYK+k01+l, b.yv(j, 4+k01+l), true, site)
			}
			for e := 0; e < 2; e++ {
				c.load(tid, df+i*(2*smemTileNeK*2/quant.QI8_0)+i/(quant.QI8_0/4)+k0/4+e, b.xd(i, k0/4+e), live, site)
			}
			c.load(tid, b.yLo+j*smemTileYK+k01/8, b.yv(j, k01/8), true, site)
		})
	}
}
