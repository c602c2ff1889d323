package q8

import (
	"fmt"
	"math"

	"github.com/ggsim/ggsim/f16"
	"github.com/ggsim/ggsim/sim"
)

// RowPadding is ggml's MATRIX_ROW_PADDING: the CUDA quantizers pad every activation row
// to a multiple of this many values (ne10_padded = GGML_PAD(ne10, 512)); the padding
// reads as 0.0f.
const RowPadding = 512

// PaddedLen returns GGML_PAD(k, RowPadding), the number of values per quantized row.
func PaddedLen(k int) int { return (k + RowPadding - 1) / RowPadding * RowPadding }

// roundToInt8 returns what the quantizers store for a scaled value v. The SASS computes
// roundf(v) as FADD.FTZ.RZ(v, copysign(0.5, v)) then FRND.TRUNC (round half away from
// zero: sim.RoundF, checked on the H200 over all 2^32 inputs), converts it with
// F2I.FTZ.TRUNC.NTZ to a 32-bit integer (saturating at the int32 range, NaN -> 0) and
// stores the low byte (STG.E.U8 / PRMT): sim.F2I8, a wrap, not an int8 saturation. The
// wrap only shows for ±Inf (+Inf -> -1, -Inf -> 0), which occurs when the scale flushes
// to zero.
func roundToInt8(v float32) int8 { return sim.F2I8(sim.RoundF(v)) }

// QuantizeBlock quantizes 32 values as quantize_q8_1 (src/ggml-cuda/quantize.cu) does in
// one warp, one value per lane:
//
//	amax = warp_reduce_max(fabsf(x))        (FMNMX.FTZ; NaN operands ignored)
//	sum  = warp_reduce_sum(x)               (xor butterfly 16,8,4,2,1 of FADD.FTZ)
//	d    = amax * 0x3c010204                (amax/127.0f: FMUL.FTZ by RN(1/127))
//	q    = amax == 0 ? 0 : roundf(x * MUFU.RCP(d))   (see roundToInt8)
//	ds   = {f2h(d), f2h(sum)}               (F2FP.F16.F32.PACK_AB: RN-even, half subnormals kept)
//
// Every float32 operation flushes subnormal operands and results (FTZ).
func QuantizeBlock(x *[32]float32) Block {
	var ab, sm [32]float32
	for l, v := range x {
		ab[l] = sim.Abs(v)
		sm[l] = v
	}
	amax := sim.ReduceMaxTree(ab[:])
	sum := sim.ReduceSumTree(sm[:])
	d := sim.Mul(amax, sim.Inv127)
	var b Block
	if amax != 0 {
		r := sim.Rcp(d)
		for l, v := range x {
			b.Qs[l] = roundToInt8(sim.Mul(v, r))
		}
	}
	b.D = sim.F2H(d)
	b.S = sim.F2H(sum)
	return b
}

// QuantizeQ8_1 quantizes nrows activation rows of k values each (row r is x[r*k:(r+1)*k])
// as quantize_row_q8_1_cuda: each row is padded to PaddedLen(k) values (the padding reads
// 0.0f, so padding blocks are all zero) and becomes PaddedLen(k)/32 blocks; the result
// holds the rows one after the other (block index r*PaddedLen(k)/32 + i0/32).
//
// It returns an error if k or nrows is not positive or len(x) != k*nrows.
func QuantizeQ8_1(x []float32, k, nrows int) ([]Block, error) {
	if k <= 0 || nrows <= 0 {
		return nil, fmt.Errorf("q8: quantize_q8_1: need k > 0 and nrows > 0, got k=%d nrows=%d", k, nrows)
	}
	if int64(k)*int64(nrows) != int64(len(x)) {
		return nil, fmt.Errorf("q8: quantize_q8_1: %d values given for %d rows of %d", len(x), nrows, k)
	}
	kp := PaddedLen(k)
	out := make([]Block, nrows*kp/32)
	for r := 0; r < nrows; r++ {
		QuantizeRow(x[r*k:(r+1)*k], out[r*kp/32:(r+1)*kp/32])
	}
	return out, nil
}

// QuantizeRow quantizes one row x into dst (len(dst)*32 >= len(x)); values past the end
// of x read as 0.0f. It panics if dst is too short.
func QuantizeRow(x []float32, dst []Block) {
	if len(dst)*32 < len(x) {
		panic("q8: QuantizeRow: dst too short")
	}
	for i := range dst {
		var v [32]float32
		if i*32 < len(x) {
			copy(v[:], x[i*32:])
		}
		dst[i] = QuantizeBlock(&v)
	}
}

// Sum returns h2f of the block's s (the half-rounded float sum of the activations).
func (b *Block) SumF32() float32 { return sim.H2F(b.S) }

// DF32 returns h2f of the block's d.
func (b *Block) DF32() float32 { return sim.H2F(b.D) }

// FromBytes decodes the 36-byte wire form of a block_q8_1. It panics if len(p) < 36.
func FromBytes(p []byte) Block {
	if len(p) < BlockBytes {
		panic("q8: FromBytes: short block")
	}
	var b Block
	b.D = f16.Half(uint16(p[0]) | uint16(p[1])<<8)
	b.S = f16.Half(uint16(p[2]) | uint16(p[3])<<8)
	for i := range b.Qs {
		b.Qs[i] = int8(p[4+i])
	}
	return b
}

func float32bits(f float32) uint32     { return math.Float32bits(f) }
func float32frombits(u uint32) float32 { return math.Float32frombits(u) }
