package compare

import (
	"fmt"
	"math"

	"github.com/ggsim/ggsim/fp16path"
	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
)

// Class is an instruction class that one issue rate describes.
type Class int

// The classes of the cost model. The SASS they stand for on Pascal is in the comments.
const (
	LD   Class = iota // global/L1 load, counted in 32-bit words per lane (LDG.128 = 4)
	F32               // FFMA, FMUL, FADD
	HF2               // HFMA2 (half2 fma)
	IALU              // IADD, LOP3, XMAD (16-bit multiply-add), ISETP: full-rate integer
	SHF               // SHF, BFE: shifts and bit-field (byte) extracts, half rate on GP100
	PRMT              // PRMT (__byte_perm), half rate on GP100
	CVT               // I2F, F2F (half <-> float), I2I: conversions
	DP4A              // IDP.4A: the int8 dot product (sm_61 and up)
	SHFL              // warp shuffle
	NumClasses
)

var classNames = [NumClasses]string{"LD", "F32", "HF2", "IALU", "SHF", "PRMT", "CVT", "DP4A", "SHFL"}

// String returns the class's short name.
func (c Class) String() string {
	if c < 0 || c >= NumClasses {
		return fmt.Sprintf("Class(%d)", int(c))
	}
	return classNames[c]
}

// Counts are lane-instructions per class (a warp instruction is 32).
type Counts [NumClasses]float64

func (c *Counts) add(o Counts, f float64) {
	for k := range c {
		c[k] += float64(f * o[k]) // no fused multiply-add: the same numbers on every GOARCH
	}
}

// Arch is one GPU for the cost model: its issue rates and its streaming bandwidth.
type Arch struct {
	Name string
	CC   int // compute capability ×100 (600 = sm_60)
	SMs  int
	// ClockGHz is the clock the issue rates are multiplied by.
	ClockGHz float64
	// BandwidthGBs is the DRAM bandwidth a streaming kernel reaches, in 10^9 bytes/s.
	BandwidthGBs float64
	// Rate[c] is lanes per clock per SM of class c (0: the instruction does not exist:
	// DP4A below sm_61, which the q8_1 path then emulates).
	Rate   [NumClasses]float64
	Source string
}

// GP100 is the Tesla P100-PCIE-16GB of the note. Issue rates per SM per clock from the
// CUDA C++ Programming Guide's throughput table for cc 6.0 (FP32 64, half2 128 results =
// 64 HFMA2 lanes, 32-bit add and bitwise 64, shifts 32, conversions 16, shuffles 32; PRMT
// and BFE taken as shifts, as the note says: "PRMT and shifts are half rate; LOP3/HFMA2
// are full rate"); loads 16 words (GP100: 16 LD/ST units, 64 B/clk of L1 per SM). The
// clock is the one the note's HFMA2 measurement implies (14.98 TFLOP/s = 56 SMs × 128
// half FMA × 2 flop × 1.045 GHz; the nominal boost is 1.303 GHz). Bandwidth: the note's
// 608 GB/s streamed with 128-bit coalesced reads.
var GP100 = Arch{
	Name: "P100", CC: 600, SMs: 56, ClockGHz: 1.045, BandwidthGBs: 608,
	Rate:   [NumClasses]float64{LD: 16, F32: 64, HF2: 64, IALU: 64, SHF: 32, PRMT: 32, CVT: 16, DP4A: 0, SHFL: 32},
	Source: "CUDA C++ Programming Guide throughput table (cc 6.0); clock from the note's 14.98 TFLOP/s HFMA2; 608 GB/s from the note",
}

// GP102 is the Tesla P40 (sm_61), for contrast: it has DP4A (128 lanes per clock per
// SM) but half2 arithmetic at 2 results per clock per SM, so the fp16 path is no use
// there. Nominal numbers (boost clock, datasheet bandwidth), not measured.
var GP102 = Arch{
	Name: "P40", CC: 610, SMs: 30, ClockGHz: 1.531, BandwidthGBs: 346,
	Rate:   [NumClasses]float64{LD: 32, F32: 128, HF2: 1, IALU: 128, SHF: 64, PRMT: 64, CVT: 32, DP4A: 128, SHFL: 32},
	Source: "CUDA C++ Programming Guide throughput table (cc 6.1); P40 datasheet (1.531 GHz boost, 346 GB/s, 47 TOPS int8)",
}

// Archs lists the architectures of the cost model.
func Archs() []Arch { return []Arch{GP100, GP102} }

// Path names one of the two ways to compute the product.
type Path int

const (
	// FP16 is the note's fp16 path (fp16path): columns M > 1 are the multi-column
	// kernels (each weight unpacked once, reused for every column).
	FP16 Path = iota
	// Q8_1 is ggml's mul_mat_vec_q with quantize_q8_1 activations.
	Q8_1
)

// String returns "fp16" or "q8_1".
func (p Path) String() string {
	if p == FP16 {
		return "fp16"
	}
	return "q8_1"
}

// PerBlock is the instruction count of one path and type per 32 weights, per lane.
// Weight is the work on the weights (loads, unpacking, scales): done once per weight
// block whatever the number of columns. Column is the work per activation column
// (activation loads, the dot products, the float32 scale arithmetic). Ones counts the
// q8_1 path's dp4a with the constant 0x01010101 (the sum of the activation quants for the
// min term of Q4_K/Q5_K), whose byte extractions are shared with a real dp4a on the same
// activation word when emulated.
type PerBlock struct {
	Weight, Column Counts
	Ones           float64
}

// Counts per 32 weights, from the structure of each path's source, per lane. The tables
// are the model; docs/fp16-compare.md derives every entry.
//
// fp16 path (fp16path: groups of 16 values, 8 PRMT and 8 HFMA2 each; see its doc.go):
// per column and 32 weights it loads 16 half2 words (64 B) of activations, two block sums
// and one unscale factor (19 words), runs 16 HFMA2, converts the 4 half accumulators to
// float32 (4 CVT) and does 8 float32 operations (lo+hi, the offset or min FFMA, the scale
// FMUL, the unscale FFMA, per group).
var fp16Column = Counts{LD: 19, HF2: 16, CVT: 4, F32: 8}

var fp16Weight = map[quant.Type]Counts{
	// 16 bytes of nibbles per group loaded (4 words, half the bits used: 8 words per 32
	// weights), LOP3 mask per word (8), SHF for the high nibbles (4 on average), 16 PRMT;
	// the 6-bit scale and min: 1 load, 3 SHF + 3 LOP3, 2 I2F, 2 FMUL; d, dmin per 256.
	quant.Q4_K: {LD: 9.125, IALU: 11, SHF: 7, PRMT: 16, CVT: 2.25, F32: 2},
	// Q4_K plus 8 words of qh per 32 weights (one bit used per byte), and per word one SHF
	// and one LOP3 to place the bit at bit 4.
	quant.Q5_K: {LD: 17.125, IALU: 19, SHF: 15, PRMT: 16, CVT: 2.25, F32: 2},
	// ql nibbles (8 words, LOP3 and 4 SHF) and qh 2-bit fields (8 words, SHF and LOP3
	// each), one LOP3 merge per word, 16 PRMT; an int8 scale per 16 values (2 loads,
	// 2 I2F, 2 FMUL), d per 256.
	quant.Q6_K: {LD: 18.125, IALU: 24, SHF: 12, PRMT: 16, CVT: 2.125, F32: 2},
	// qs 2-bit fields and the hmask bit (8 + 8 words, SHF and LOP3 each, a merge LOP3),
	// 16 PRMT; the 6-bit scales packed in 12 bytes (~4 SHF, 4 LOP3, the -32), 2 I2F.
	quant.Q3_K: {LD: 17.125, IALU: 30, SHF: 20, PRMT: 16, CVT: 2.125, F32: 2},
	// 4 words of indices per 32 values looked up in the +128 codebook as ggml's
	// get_int_from_table_16 does (8 PRMT, 3 SHF, 2 LOP3 per word), 16 PRMT to halves;
	// the 6-bit sub-block scale (4 SHF, 3 LOP3/IADD, 1 I2F, 1 FMUL), d per 256.
	quant.IQ4_XS: {LD: 5.125, IALU: 11, SHF: 16, PRMT: 48, CVT: 1.125, F32: 1},
	// as IQ4_XS with d per 32 values and no sub-block scale.
	quant.IQ4_NL: {LD: 4.5, IALU: 8, SHF: 12, PRMT: 48, CVT: 1},
	// 8 words of bytes, LOP3 xor 0x80808080 each, 16 PRMT, d per 32.
	quant.Q8_0: {LD: 8.5, IALU: 8, PRMT: 16, CVT: 1},
}

// q8_1 path (ggml vecdotq.cuh, the vec_dot_*_q8_1 of each type at its MMVQ VDR): per 32
// weights. DP4A in Column counts the real dp4a (weight word times activation word).
var q8Blocks = map[quant.Type]PerBlock{
	// vec_dot_q4_K_q8_1 (VDR 2, 16 weights per call, 2 calls): v loads, scale loads and
	// get_scale_min_k4 extraction (4 SHF, 4 LOP3 per call), (v >> 4i) & 0x0F0F0F0F
	// (2 SHF, 4 LOP3), dm4 H2F (2); per column: 4 u words and 2 ds per call, 4 + 4 dp4a,
	// dot·sc and dot·m (XMAD, I2F, FFMA each), d8 H2F, the final FMUL/FFMA and FADD.
	quant.Q4_K: {Weight: Counts{LD: 10, IALU: 16, SHF: 12, CVT: 4}, Column: Counts{LD: 12, DP4A: 8, IALU: 8, CVT: 12, F32: 14}, Ones: 8},
	// as Q4_K, plus the qh words (2 loads per call) and per word a SHF and a LOP3.
	quant.Q5_K: {Weight: Counts{LD: 14, IALU: 24, SHF: 20, CVT: 4}, Column: Counts{LD: 12, DP4A: 8, IALU: 8, CVT: 12, F32: 14}, Ones: 8},
	// vec_dot_q6_K_q8_1 (VDR 1, 8 weights per call, 4 calls): ql, qh, 2 scales and d
	// loaded per call; per i < 2: vil (SHF, LOP3), vih (SHF, LOP3), the OR, and
	// __vsubss4, which sm_60 has no instruction for (taken as 4 byte extracts and 6 ALU);
	// per column: 2 u, 2 ds, 2 dp4a, dot·sc (XMAD), I2F, d8 H2F, FFMA, then d·sumf and
	// the FADD.
	quant.Q6_K: {Weight: Counts{LD: 20, IALU: 72, SHF: 44, CVT: 12}, Column: Counts{LD: 16, DP4A: 8, IALU: 8, CVT: 16, F32: 16}},
	// vec_dot_q3_K_q8_1 (VDR 1, 16 weights per call, 2 calls): per i < 4 the 6-bit scale
	// from two bytes (2 loads, 3 SHF, 3 ALU), vil (SHF, LOP3), vih (2 SHF, LOP3) and
	// __vsubss4 (4 + 6); per column: 4 u, 4 ds, 4 dp4a, XMAD, I2F, H2F, FFMA each.
	quant.Q3_K: {Weight: Counts{LD: 22, IALU: 88, SHF: 80, CVT: 2}, Column: Counts{LD: 16, DP4A: 8, IALU: 8, CVT: 16, F32: 12}},
	// vec_dot_iq4_xs_q8_1 (VDR 4, one call per 32 weights): 4 words, the scale bytes,
	// d; get_int_from_table_16 per word (8 PRMT, 3 SHF, 2 LOP3); the scale (4 SHF, 3 ALU,
	// I2F, FMUL); per column: 8 u words, 1 ds, 8 dp4a, I2F, H2F, 2 FMUL, FADD.
	quant.IQ4_XS: {Weight: Counts{LD: 7, IALU: 11, SHF: 16, PRMT: 32, CVT: 2, F32: 1}, Column: Counts{LD: 9, DP4A: 8, CVT: 2, F32: 3}},
	// vec_dot_iq4_nl_q8_1 (VDR 2, 2 calls): 2 words and d per call, the table lookup;
	// per column: 4 u and 1 ds per call, 4 dp4a, I2F, H2F, FMULs and FADD.
	quant.IQ4_NL: {Weight: Counts{LD: 6, IALU: 8, SHF: 12, PRMT: 32, CVT: 2}, Column: Counts{LD: 10, DP4A: 8, CVT: 4, F32: 6}},
	// vec_dot_q8_0_q8_1 (VDR 2, 8 weights per call, 4 calls): 2 words and d per call;
	// per column: 2 u words and ds, 2 dp4a, I2F, H2F, d8·d, ·sumi, FADD.
	quant.Q8_0: {Weight: Counts{LD: 12, CVT: 4}, Column: Counts{LD: 12, DP4A: 8, CVT: 8, F32: 12}},
}

// Per row and column, the warp's butterfly (5 SHFL and 5 FADD on 32 lanes) and the
// store; ggml's MMVQ adds a shared-memory reduction across its warps (a few words per
// lane, not counted).
var perRowColumn = Counts{SHFL: 5 * 32, F32: 5 * 32}

// Instructions returns the instruction count per 32 weights of path p and type t on
// arch a with m columns (lane-instructions per class: Weight once, Column m times), the
// q8_1 path's dp4a expanded where a has none (sm_60: each dp4a of two variable words is
// 4 sign-extending byte extracts of the weight word, shared by every column, 4 of the
// activation word and 4 XMAD, as ggml_cuda_dp4a's fallback
// c + a8[0]*b8[0] + ... + a8[3]*b8[3] compiles; a dp4a with 0x01010101 is 4 IADD of the
// activation bytes already extracted).
func Instructions(a Arch, p Path, t quant.Type, m int) (Counts, error) {
	if m < 1 || m > 8 {
		return Counts{}, fmt.Errorf("compare: %d columns: the cost model covers 1..8", m)
	}
	var c Counts
	switch p {
	case FP16:
		w, ok := fp16Weight[t]
		if !ok {
			return c, fmt.Errorf("compare: type %v: the fp16 path does not cover it: %w", t, sim.ErrUnsupported)
		}
		c.add(w, 1)
		c.add(fp16Column, float64(m))
	case Q8_1:
		b, ok := q8Blocks[t]
		if !ok {
			return c, fmt.Errorf("compare: type %v: no q8_1 cost table: %w", t, sim.ErrUnsupported)
		}
		w, col := b.Weight, b.Column
		if a.Rate[DP4A] == 0 {
			n := col[DP4A]
			col[DP4A] = 0
			w[SHF] += float64(4 * n)
			col[SHF] += float64(4 * n)
			col[IALU] += float64(4*n) + float64(4*b.Ones)
		} else {
			col[DP4A] += b.Ones
		}
		c.add(w, 1)
		c.add(col, float64(m))
	default:
		return c, fmt.Errorf("compare: unknown path %d", int(p))
	}
	return c, nil
}

// Estimate is the cost model's prediction for one matmul.
type Estimate struct {
	Arch string
	Path Path
	Type quant.Type
	K, N int
	M    int
	// Instr is the total lane-instructions per class.
	Instr Counts
	// Cycles is the issue time per SM: Σ_c Instr[c] / (Rate[c]·SMs), the classes not
	// overlapping.
	Cycles float64
	// Bytes is what the kernel and its activation conversion move through DRAM: the
	// weights, the activations read as float32 and written and read in the path's
	// format, and the output.
	Bytes int64
	// IssueSec, MemSec are Cycles at the clock and Bytes at the bandwidth; Sec is the
	// larger (a roofline: the two are taken to overlap fully).
	IssueSec, MemSec, Sec float64
}

// Bound returns "issue" or "memory": which of the two times Sec is.
func (e Estimate) Bound() string {
	if e.IssueSec >= e.MemSec {
		return "issue"
	}
	return "memory"
}

// GBs returns the weight bandwidth the prediction amounts to (weight bytes / Sec), the
// figure the note quotes for the stock kernels (246-298 GB/s on the P100).
func (e Estimate) GBs() float64 {
	rs, _ := e.Type.RowSize(int64(e.K))
	return float64(rs*int64(e.N)) / e.Sec / 1e9
}

// Predict estimates one MUL_MAT of N rows of K weights of type t by m columns on arch a
// through path p.
func Predict(a Arch, p Path, t quant.Type, K, N, m int) (Estimate, error) {
	e := Estimate{Arch: a.Name, Path: p, Type: t, K: K, N: N, M: m}
	if K <= 0 || N <= 0 || K%32 != 0 {
		return e, fmt.Errorf("compare: shape K=%d N=%d: want positive sizes and K a multiple of 32", K, N)
	}
	rs, err := t.RowSize(int64(K))
	if err != nil {
		return e, fmt.Errorf("compare: %w", err)
	}
	if p == FP16 && !fp16path.Supported(t) {
		return e, fmt.Errorf("compare: type %v: the fp16 path does not cover it: %w", t, sim.ErrUnsupported)
	}
	per, err := Instructions(a, p, t, m)
	if err != nil {
		return e, err
	}
	blocks := float64(K/32) * float64(N)
	e.Instr.add(per, blocks)
	e.Instr.add(perRowColumn, float64(N)*float64(m))
	for c, n := range e.Instr {
		if n == 0 {
			continue
		}
		if a.Rate[c] == 0 {
			return e, fmt.Errorf("compare: %v has no %v instruction", a.Name, Class(c))
		}
		e.Cycles += n / (a.Rate[c] * float64(a.SMs))
	}
	act := int64(K) * 36 / 32 // block_q8_1
	if p == FP16 {
		act = int64(K)*2 + int64(K/16)*4 + int64(K/32)*4 // halves, sums, unscale factors
	}
	e.Bytes = rs*int64(N) + int64(m)*(int64(K)*4+2*act) + int64(N)*int64(m)*4
	e.IssueSec = e.Cycles / (a.ClockGHz * 1e9)
	e.MemSec = float64(e.Bytes) / (a.BandwidthGBs * 1e9)
	e.Sec = math.Max(e.IssueSec, e.MemSec)
	return e, nil
}
