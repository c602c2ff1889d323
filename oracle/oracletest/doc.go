// Package oracletest is the conformance suite for implementations of ggml's MMVQ
// (mul_mat_vec_q: MUL_MAT of a quantized matrix by 1..8 float32 columns, and MUL_MAT_ID
// with 1..8 tokens) and MMQ (mul_mat_q: MUL_MAT by more than 8 columns, and MUL_MAT_ID
// with more than 8 tokens in its ID mode), in the style of gonum's lapack/testlapack: one exported function,
// Run, that every implementation's tests call with their oracle.Impl: the simulator
// (oracle/conformance_test.go) and each GPU backend (gpu/ggml, build tag cuda).
//
// # Cases
//
// Run draws cases with pgregory.net/rapid, the shape before the data so that a failure
// shrinks to a small shape first:
//
//   - the type: every type ggsim simulates in MMVQ (mmvq.Types()) unless Options.Types
//     says otherwise;
//   - the op and shape: MUL_MAT with K a multiple of the block size (so K not a multiple
//     of 256 for the 32-value types; K <= 2048 in about three cases of four, in (2048,
//     4096] in about one of seven, in (4096, Options.MaxK] in about one of ten, where
//     every thread of the kernel makes several vec_dot calls), N = 1..40 rows (1..8 for K > 4096: odd counts and counts not a
//     multiple of rows_per_block included) and the column counts M in 1..8 that ggml
//     dispatches to MMVQ on the device (package tiling); or MUL_MAT_ID with E = 1..8
//     experts, U = 1..E slots per token, the token counts in 1..8 dispatched to MMVQ,
//     B1 = 1 (activations broadcast) or U, N = 1..16 rows (1..4 for K > 4096) and any
//     expert ids (repeats allowed); or, in about one case of five (Options.NoMMQ: never),
//     MUL_MAT by more than 8 columns, which ggml dispatches to MMQ (package tiling; the
//     column counts up to the largest for which every count from 9 on goes to MMQ on
//     the device), in six shape classes biased to MMQ's boundaries: N not a multiple of
//     128 (the need_check "fallback" kernel, a partial last row tile); M = 9..12; M =
//     J-1, J, J+1 for J = 16, 24, ..., 128, 256 (the J search and a second column tile);
//     about one tile per SM (one wave at 90% to 100% efficiency: one block per tile;
//     up to 8 tiles fewer, or one wave and up to 8 tiles more: stream-K; the two sides
//     of launch_mul_mat_q's 90% efficiency rule; K one or two blocks); long K
//     (2048..MaxK) with one or two row tiles, so that many stream-K blocks share a tile
//     and the fixup adds many partial sums; and general shapes up to 400 rows and 320
//     columns. K·N·M is kept to about a million multiply-adds but in the
//     one-tile-per-SM class. The Report counts the MMQ cases per class and per launch;
//     or, in about one case of six (Options.NoMMQ: never), MUL_MAT_ID of more than 8
//     tokens, which ggml dispatches to mul_mat_q in ID mode (routing: package moe): T =
//     9..32 tokens in about seven cases of ten, 33..256 in two, 257..1024 in one; E =
//     4..256 experts; U = 1..min(8, E) slots (top-k); B1 = 1 or U; K one MMQ
//     iteration (256 values) in four cases of ten, up to 2048 in five, up to MaxK in one;
//     N = 1..300; K, then N, cut so that K·N·T·U stays within about a million
//     multiply-adds and the E·N·K weights within two million values (16 and 32 million
//     when GGSIM_CONFORMANCE_CHECKS is set: a long run gets the larger shapes). The expert ids follow one of five routings: uniform (U
//     distinct experts per token), one hot expert (named by every token, in a random
//     slot), sparse (only U..U+3 experts ever named: the others have no columns and
//     their tiles are skipped), same experts (every token the same U, in its own order)
//     and top-k (the U best of per-token gate scores with a popularity skew, best
//     first). A token never names an expert twice: ggml's mm_ids_helper races on that
//     (moe.Route refuses it with an error wrapping errors.ErrUnsupported; the package's
//     tests check that the simulator reports it). The ids come from a seed drawn by
//     rapid (a thousand tokens are too many draws to shrink one by one). The Report
//     counts these cases per routing;
//   - the data, plain or adversarial with equal odds. Plain: weights quantized from
//     uniform floats by ggml's reference quantizer (quant.QuantizeRowRef; random raw
//     blocks with moderate scales for the IQ types, which have none), activations uniform
//     at scale 1, 1e-3 or 100. Adversarial: weights quantized from floats at scales up to
//     3e4 or down to 1e-4, or random raw blocks, then up to four crafted blocks holding
//     the largest finite scale, a binary16 subnormal scale, a zero scale, all zero bytes
//     and, with NonFiniteInputs, a NaN or ±Inf scale (in d or in the min field);
//     activations uniform, tiny (1e-5 down to 3e-39: half-subnormal or zero q8_1 scales,
//     float32 subnormals that the GPU flushes), all equal along a row, with 32-value
//     blocks of one sign whose sum exceeds 65504 (the q8_1 block sum becomes ±Inf in
//     binary16), or near the float32 maximum, then up to four crafted values: a zeroed
//     block, ±MaxFloat32 and, with NonFiniteInputs, NaN and ±Inf.
//
// The data come from a seed drawn by rapid (rapid's draws are the case's structure:
// type, shape, ids, kinds and positions of the crafted blocks and values), so a failure
// report lists the case and -rapid.seed replays the whole run.
//
// # Properties
//
// Each is selected by a Property bit (Options.Properties; all by default):
//
//	(a) Bound: on plain data every output of a MUL_MAT lies within oracle.MulMatRefOn's
//	    kernel bound (docs/bounds.md; MulMatRef's where the kernel bound does not model
//	    the type or dispatch), and every output of a MUL_MAT_ID within MulMatRef's bound of the
//	    fp64 truth (per slot for MUL_MAT_ID). The bound is derived for weights quantized
//	    from floats at moderate scales and activations whose q8_1 scales and block sums
//	    are finite. Plain data meet that: weights quantized from floats at scale 0.05 or,
//	    for the IQ types (no reference quantizer in ggsim), random raw blocks with binary16
//	    d in [2^-12, 2^-5), where every bit pattern of the quants is a valid codebook
//	    encoding and the derivation, which uses only the dequantized values and the
//	    offsets the kernels apply, holds as well (5000 simulator cases were all within);
//	    activations at scale 1, 1e-3 or 100. Adversarial data are never checked against
//	    it: block sums that overflow binary16 or scales at the edges of the formats can
//	    put a correct kernel outside it.
//	(b) Determinism: a second call on the same inputs gives the same bits (NaN payloads
//	    included); no call modifies its inputs.
//	(c) Columns (MMVQ shapes only): on MMVQ's GENERIC parameter table (every NVIDIA
//	    device ggsim knows but Turing builds and GB10), mul_mat_vec_q uses 4 warps for 1..4 columns and 2 for 5..8,
//	    and reduces every column alone: with M = 2..4 each column's bits equal those of
//	    M = 1 on that column; with M = 5..8 they equal those of M = 5 on columns 0..4 and
//	    M-5..M-1 (M = 5: the columns reversed). MUL_MAT_ID with 2..8 tokens
//	    (mul_mat_vec_q_moe, one warp per token on every table): reversing the tokens
//	    reverses the result.
//	(d) IDOneToken: MUL_MAT_ID of one token equals, slot by slot, MUL_MAT (M = 1) of the
//	    slot's expert matrix by its activation row, wherever ggml launches both with the
//	    same partition (tiling.MakeMMVQPlan).
//	(e) NonFiniteInputs: NaN/±Inf inputs are drawn and never make a call fail or panic;
//	    NonFiniteOutputs: an output must be NaN or ±Inf where ggml's arithmetic must give
//	    one, whatever the order of its operations: where the activation block meets a
//	    q8_1 scale d that is non-finite (a ±Inf in the 32 values, or a finite |value| >=
//	    1e7, for which amax/127 rounds to +Inf in binary16) or the weight block's d is NaN
//	    or ±Inf (binary16 d, IQ1_M's packed d, MXFP4's E8M0 255): each product of that d
//	    is ±Inf or NaN (Inf·0) and stays so through every sum. Nothing is asserted for NaN
//	    activations (quantize_q8_1 ignores NaN in amax and stores 0 for it) or for block
//	    sums that overflow binary16: what those give is type-specific and left to (f).
//	    On MMQ shapes only a ±Inf activation counts (quantize_mmq_q8_1 keeps float
//	    scales in some layouts, where a finite value >= 1e7 gives a finite scale), and
//	    the weight rows as above.
//	(f) Options.Reference: every output of every call equals the reference's bits. The
//	    GPU run uses it with the simulator as the reference.
//
//	(g) IDAsMulMat (MUL_MAT_ID on MMQ only): where ggml computes the MUL_MAT_ID launch
//	    and MUL_MAT on MMQ of one expert's matrix by that expert's activation rows (in
//	    token order, the last repeated up to 9 columns so that MUL_MAT goes to MMQ) both
//	    unsplit (sim/mmq plans: every computed tile one CUDA block from k = 0 to the end,
//	    no stream-K fixup), on the same path (MMA or dp4a) and row tiling, with K a whole
//	    number of MMQ iterations, each slot of that expert equals, bit for bit, its
//	    column of the MUL_MAT. Then every output is one K-ordered sum per element whose
//	    float order does not depend on the tile width J or the column's place in the
//	    tile, and the activations are quantized per column. It does not hold otherwise:
//	    stream-K splits and their fixup order depend on the whole shape (with the guard
//	    removed, split cases differ by a few ulp), and where K is not a whole number of
//	    iterations the last expert row's iteration reads past the row's end, the next
//	    expert's first row in ID mode but the buffer's padding in MUL_MAT. Checked on the
//	    experts with the most columns (at most 6 per case).
//
// MMQ shapes get (a) (up to 6M multiply-adds: the fp64 reference is slow), (b), (e),
// (f) and, for MUL_MAT_ID, (g), never (c) or (d): mul_mat_q has no such column structure
// (its columns share a tile, and the stream-K split depends on the whole shape).
//
// Invariants of Run: every case drawn is one ggml dispatches to MMVQ or (MMQ shapes)
// MMQ on the device; a case the implementation reports as unsupported (oracle.ErrUnsupported) fails the test
// unless Options.SkipUnsupported, and is then counted as unsupported, never as passed;
// the Report counts the cases that passed per type, per batch size and op, per MMQ
// shape class and launch, per MUL_MAT_ID routing on MMQ and per property, and gives
// rapid's seed.
//
// # The bound study
//
// Tightness, Power and FalseAlarms measure oracle.MulMatRefOn's kernel bound on an
// implementation: bound over observed error per type, path and data kind; six injected
// kernel bugs (a dropped block, a scale half an ulp off, the min term's sign, a
// neighbour's activation block, a lost stream-K partial, a fixup added twice) that the
// fp64 check must catch; and generated correct cases that it must never flag
// (docs/bounds.md; simrun bounds).
//
// # Model-like data
//
// RealisticWeights (RealisticFloats) and RealisticActivations make operands with the
// statistics of a trained transformer's matmuls instead of the conformance cases'
// uniform and adversarial data, for judging the kernels on what a model feeds them
// (simrun run): heavy-tailed weights (Student-t, 5 degrees of freedom) with a per-row
// scale spread and outlier input channels, quantized by ggml's reference quantizer
// (random valid blocks with moderate scales for the types without one), and activations
// shaped like an RMS norm's output with per-channel gains and a few outlier dimensions of
// 20..100 shared by every token. The constants and their sources are on the generators
// (realistic.go). They are a model of the shape of real data, not data of a particular
// model: a user with a model file runs its weights (simrun run --gguf).
//
// # Sweeps
//
// Sweep makes numbered, reproducible cases for device runs recorded as output digests
// (gpu/ggml TestSweepCUDA) and verified anywhere (VerifySweep, `simrun sweep verify`):
// kinds mmq and mmqid (MMQ shapes), and glu, gluid and gluid2 (sweepglu.go): one token through a
// gate and an up matmul of every MMVQ type and a swiglu, geglu or swiglu_oai (alpha and
// limit at ggml's 1.702/7, around them, or adversarial), with fusion allowed or disabled,
// on plain, wide (gate values past the range where expf overflows) and adversarial but
// finite data.
package oracletest
