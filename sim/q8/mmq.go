package q8

import (
	"fmt"

	"github.com/ggsim/ggsim/f16"
	"github.com/ggsim/ggsim/sim"
)

// Layout is the layout of the 16-byte header of a block_q8_1_mmq (mmq_q8_1_ds_layout in
// src/ggml-cuda/mmq.cuh).
type Layout int

const (
	// D4: d4[4], one float32 scale per 32 values (no half rounding).
	D4 Layout = iota
	// DS4: ds4[4], {f2h(d), f2h(sum)} per 32 values.
	DS4
	// D2S6: d2s6[8] halves: [0] = d of values 0..63, [1] = d of 64..127, [2..7] = sums
	// of the 16-value groups 0..15, ..., 80..95.
	D2S6
)

func (l Layout) String() string {
	switch l {
	case D4:
		return "D4"
	case DS4:
		return "DS4"
	case D2S6:
		return "D2S6"
	}
	return fmt.Sprintf("Layout(%d)", int(l))
}

// BlockMMQBytes is sizeof(block_q8_1_mmq).
const BlockMMQBytes = 144

// BlockMMQ is one block_q8_1_mmq: 128 consecutive values of one activation column with a
// 16-byte header whose meaning depends on the Layout. Meta holds the header as four
// little-endian 32-bit words (the union's bytes); the accessors read it per layout.
type BlockMMQ struct {
	Meta [4]uint32
	Qs   [128]int8
}

// D4 returns d4[k] (k in 0..3).
func (b *BlockMMQ) D4(k int) float32 { return float32frombits(b.Meta[k]) }

// DS4 returns ds4[k] = {d, sum} (k in 0..3).
func (b *BlockMMQ) DS4(k int) (d, s f16.Half) {
	return f16.Half(b.Meta[k]), f16.Half(b.Meta[k] >> 16)
}

// D2S6 returns the half d2s6[k] (k in 0..7).
func (b *BlockMMQ) D2S6(k int) f16.Half { return f16.Half(b.Meta[k/2] >> (16 * (k % 2))) }

func (b *BlockMMQ) setHalf(k int, h f16.Half) {
	sh := 16 * uint(k%2)
	b.Meta[k/2] = b.Meta[k/2]&^(0xffff<<sh) | uint32(h)<<sh
}

// Int returns the i-th 32-bit little-endian word of qs (i in 0..31).
func (b *BlockMMQ) Int(i int) int32 {
	q := b.Qs[4*i : 4*i+4]
	return int32(uint32(uint8(q[0])) | uint32(uint8(q[1]))<<8 | uint32(uint8(q[2]))<<16 | uint32(uint8(q[3]))<<24)
}

// AppendBytes appends the 144-byte wire form of b.
func (b *BlockMMQ) AppendBytes(dst []byte) []byte {
	for _, w := range b.Meta {
		dst = append(dst, byte(w), byte(w>>8), byte(w>>16), byte(w>>24))
	}
	for _, q := range b.Qs {
		dst = append(dst, byte(q))
	}
	return dst
}

// MMQFromBytes decodes the 144-byte wire form. It panics if len(p) < 144.
func MMQFromBytes(p []byte) BlockMMQ {
	if len(p) < BlockMMQBytes {
		panic("q8: MMQFromBytes: short block")
	}
	var b BlockMMQ
	for k := range b.Meta {
		b.Meta[k] = uint32(p[4*k]) | uint32(p[4*k+1])<<8 | uint32(p[4*k+2])<<16 | uint32(p[4*k+3])<<24
	}
	for i := range b.Qs {
		b.Qs[i] = int8(p[16+i])
	}
	return b
}

// QuantizeBlockMMQ quantizes 128 values as one warp of quantize_mmq_q8_1<layout>
// (src/ggml-cuda/quantize.cu) does, lane g holding values 4g..4g+3 (as read from SASS of
// the sm_90 build):
//
//	amax_g = fmaxf(fmaxf(fmaxf(|x0|,|x1|),|x2|),|x3|), then xor butterfly over lanes with
//	         offsets 4,2,1 (D4, DS4: 32-value groups) or 8,4,2,1 (D2S6: 64-value groups)
//	s_g    = ((x0+x1)+x2)+x3, then butterfly 4,2,1 (DS4) or 2,1 (D2S6: 16-value sums)
//	d_inv  = 127 * MUFU.RCP(amax)                 (FMUL.FTZ)
//	q      = roundf(x * d_inv) stored as the low byte of an int32 (see roundToInt8)
//	d      = MUFU.RCP(d_inv)
//
// All float32 operations FTZ. amax == 0 gives d_inv = +Inf, q = 0 (NaN -> 0) and d = 0.
// Stored: D4 d4[k] = d (float32); DS4 ds4[k] = {f2h(d), f2h(sum)}; D2S6 d2s6[k/64] =
// f2h(d), d2s6[2+k/16] = f2h(sum16) for the first 96 values.
func QuantizeBlockMMQ(x *[128]float32, layout Layout) BlockMMQ {
	valsPerScale, valsPerSum := 32, 32
	if layout == D2S6 {
		valsPerScale, valsPerSum = 64, 16
	}
	var amax, sum [32]float32
	for g := 0; g < 32; g++ {
		v := x[4*g : 4*g+4]
		a := sim.FMaxf(sim.Abs(v[0]), sim.Abs(v[1]))
		a = sim.FMaxf(a, sim.Abs(v[2]))
		a = sim.FMaxf(a, sim.Abs(v[3]))
		amax[g] = a
		sum[g] = sim.Add(sim.Add(sim.Add(v[0], v[1]), v[2]), v[3])
	}
	// Butterflies within groups of lanes: all lanes of a group end with the tree value.
	lanesScale, lanesSum := valsPerScale/4, valsPerSum/4
	var b BlockMMQ
	for g0 := 0; g0 < 32; g0 += lanesScale {
		var t [16]float32
		copy(t[:lanesScale], amax[g0:g0+lanesScale])
		a := sim.ReduceMaxTree(t[:lanesScale])
		dInv := sim.Mul(sim.Rcp(a), 127)
		for i := 4 * g0; i < 4*(g0+lanesScale); i++ {
			b.Qs[i] = roundToInt8(sim.Mul(x[i], dInv))
		}
		d := sim.Rcp(dInv)
		switch layout {
		case D4:
			b.Meta[g0/8] = float32bits(d)
		case DS4:
			var s [8]float32
			copy(s[:], sum[g0:g0+8])
			sm := sim.ReduceSumTree(s[:lanesSum])
			b.Meta[g0/8] = uint32(sim.F2H(d)) | uint32(sim.F2H(sm))<<16
		case D2S6:
			b.setHalf(g0/16, sim.F2H(d))
		}
	}
	if layout == D2S6 {
		for g0 := 0; g0 < 24; g0 += lanesSum { // sums of values 0..95 only
			var s [4]float32
			copy(s[:], sum[g0:g0+4])
			b.setHalf(2+g0/4, sim.F2H(sim.ReduceSumTree(s[:])))
		}
	}
	return b
}

// QuantizeMMQ8_1 quantizes activations as quantize_mmq_q8_1_cuda (gather version without
// ids): x holds nch channels of ncols rows ("columns" of the matmul) of k values each
// (x[(c*ncols+j)*k + i]); each row is padded with zeros to PaddedLen(k) values. Block
// order (quantize_mmq_q8_1_cuda; docs/arithmetic.md, "Activation quantizers"):
// ib = c*(ncols*kp/128) + kBlock*ncols + j with kp = PaddedLen(k),
// i.e. for one 128-value kBlock all columns are contiguous.
//
// It returns an error if k, ncols or nch is not positive, k is not a multiple of 4
// (GGML_ASSERT(ne00 % 4 == 0)), the layout is unknown, or len(x) != k*ncols*nch.
func QuantizeMMQ8_1(x []float32, k, ncols, nch int, layout Layout) ([]BlockMMQ, error) {
	if k <= 0 || ncols <= 0 || nch <= 0 {
		return nil, fmt.Errorf("q8: quantize_mmq_q8_1: need positive sizes, got k=%d ncols=%d nch=%d", k, ncols, nch)
	}
	if int64(k)*int64(ncols)*int64(nch) != int64(len(x)) {
		return nil, fmt.Errorf("q8: quantize_mmq_q8_1: %d values given for %d×%d rows of %d", len(x), nch, ncols, k)
	}
	offs := make([]int, ncols*nch)
	for r := range offs {
		offs[r] = r * k
	}
	return quantizeMMQ(x, k, offs, ncols, nch, layout)
}

// QuantizeMMQ8_1Gather quantizes one channel whose column j is the k values starting at
// x[rowOffset[j]] (the ids gather of quantize_mmq_q8_1 in MUL_MAT_ID: i01 = ids[j]; the
// scatter variant is numerically identical). Block order as QuantizeMMQ8_1 with nch = 1.
// It returns an error for an offset whose row does not lie inside x.
func QuantizeMMQ8_1Gather(x []float32, k int, rowOffset []int, layout Layout) ([]BlockMMQ, error) {
	if k <= 0 || len(rowOffset) == 0 {
		return nil, fmt.Errorf("q8: quantize_mmq_q8_1: need k > 0 and at least one column, got k=%d, %d columns", k, len(rowOffset))
	}
	for j, o := range rowOffset {
		if o < 0 || o > len(x)-k {
			return nil, fmt.Errorf("q8: quantize_mmq_q8_1: column %d reads x[%d:%d], outside the %d values given", j, o, o+k, len(x))
		}
	}
	return quantizeMMQ(x, k, rowOffset, len(rowOffset), 1, layout)
}

func quantizeMMQ(x []float32, k int, offs []int, ncols, nch int, layout Layout) ([]BlockMMQ, error) {
	if layout != D4 && layout != DS4 && layout != D2S6 {
		return nil, fmt.Errorf("q8: quantize_mmq_q8_1: unknown layout %v", layout)
	}
	if k%4 != 0 {
		return nil, fmt.Errorf("q8: quantize_mmq_q8_1: k=%d is not a multiple of 4", k)
	}
	kp := PaddedLen(k)
	nkb := kp / 128
	out := make([]BlockMMQ, nch*ncols*nkb)
	for c := 0; c < nch; c++ {
		for j := 0; j < ncols; j++ {
			row := x[offs[c*ncols+j]:][:k]
			for kb := 0; kb < nkb; kb++ {
				var v [128]float32
				if kb*128 < k {
					copy(v[:], row[kb*128:])
				}
				out[c*ncols*nkb+kb*ncols+j] = QuantizeBlockMMQ(&v, layout)
			}
		}
	}
	return out, nil
}
