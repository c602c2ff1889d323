package quant

import (
	"fmt"
	"math"

	"github.com/ggsim/ggsim/f16"
)

// The legacy 32-value block types Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q8_1 and the 32-value
// non-linear types IQ4_NL and MXFP4: block views, kernel constants, dequantization
// bit-exact with ggml's dequantize_row_* and reference quantizers byte-exact with
// ggml_quantize_chunk without an importance matrix (ggml-quants.c at d99724f2b141,
// x86-64, compiled without FMA; see testdata/README.md).
//
// A block view is a []byte of exactly one block (Traits().TypeSize bytes); its accessors
// read the fields in place, little-endian, without copying. The <T>Block(row, i)
// functions return block i of a row. A shorter slice makes an accessor panic (index out
// of range).
//
// Value layout shared by all eight types: value j < 16 of a block is in the low nibble (or
// byte j) of qs[j], value j+16 in the high nibble of qs[j] (Q8_0/Q8_1: byte j+16).

// Block sizes and kernel constants (ggml-common.h): QK values per block, QR values per
// quant position ("ratio"), QI = QK/(4*QR) 32-bit ints of quant data per block.
const (
	QK4_0 = 32
	QR4_0 = 2
	QI4_0 = QK4_0 / (4 * QR4_0)

	QK4_1 = 32
	QR4_1 = 2
	QI4_1 = QK4_1 / (4 * QR4_1)

	QK5_0 = 32
	QR5_0 = 2
	QI5_0 = QK5_0 / (4 * QR5_0)

	QK5_1 = 32
	QR5_1 = 2
	QI5_1 = QK5_1 / (4 * QR5_1)

	QK8_0 = 32
	QR8_0 = 1
	QI8_0 = QK8_0 / (4 * QR8_0)

	QK8_1 = 32
	QR8_1 = 1
	QI8_1 = QK8_1 / (4 * QR8_1)

	QK4_NL = 32
	QR4_NL = 2
	QI4_NL = QK4_NL / (4 * QR4_NL)

	QK_MXFP4 = 32
	QR_MXFP4 = 2
	QI_MXFP4 = QK_MXFP4 / (4 * QR_MXFP4)
)

// Block sizes in bytes (sizeof(block_*)).
const (
	sizeQ4_0   = 18
	sizeQ4_1   = 20
	sizeQ5_0   = 22
	sizeQ5_1   = 24
	sizeQ8_0   = 34
	sizeQ8_1   = 36
	sizeIQ4_NL = 18
	sizeMXFP4  = 17
)

// blockAt returns bytes [i*size, (i+1)*size) of row with the capacity clipped to the
// block. It panics with a message naming the type if the block is not inside row.
func blockAt(t Type, row []byte, size, i int) []byte {
	if i < 0 || (i+1)*size > len(row) {
		panic(fmt.Sprintf("quant: %v block %d is outside a row of %d bytes", t, i, len(row)))
	}
	return row[i*size : (i+1)*size : (i+1)*size]
}

// BlockQ4_0 is a view of a block_q4_0 (18 bytes, 32 values): d half (offset 0),
// qs[16] (2). Value j<16 = ((qs[j]&15)-8)*d, value j+16 = ((qs[j]>>4)-8)*d.
type BlockQ4_0 []byte

// Q4_0Block returns block i of a Q4_0 row. It panics if the block is outside row.
func Q4_0Block(row []byte, i int) BlockQ4_0 { return BlockQ4_0(blockAt(Q4_0, row, sizeQ4_0, i)) }

// D returns the block scale.
func (b BlockQ4_0) D() f16.Half { return f16.Half(le16(b[0:])) }

// Qs returns the 16 bytes of nibbles.
func (b BlockQ4_0) Qs() []byte { return b[2:18:18] }

// BlockQ4_1 is a view of a block_q4_1 (20 bytes, 32 values): d half (0), m half (2) — read
// together as the half2 dm —, qs[16] (4). Value j<16 = (qs[j]&15)*d + m, value j+16 =
// (qs[j]>>4)*d + m.
type BlockQ4_1 []byte

// Q4_1Block returns block i of a Q4_1 row. It panics if the block is outside row.
func Q4_1Block(row []byte, i int) BlockQ4_1 { return BlockQ4_1(blockAt(Q4_1, row, sizeQ4_1, i)) }

// D returns the block scale.
func (b BlockQ4_1) D() f16.Half { return f16.Half(le16(b[0:])) }

// M returns the block minimum.
func (b BlockQ4_1) M() f16.Half { return f16.Half(le16(b[2:])) }

// DM returns the half2 dm as the 32-bit word the CUDA kernels load (d in the low half).
func (b BlockQ4_1) DM() uint32 { return le32(b[0:]) }

// Qs returns the 16 bytes of nibbles.
func (b BlockQ4_1) Qs() []byte { return b[4:20:20] }

// BlockQ5_0 is a view of a block_q5_0 (22 bytes, 32 values): d half (0), qh[4] (2), qs[16]
// (6). Bit j of the little-endian uint32 qh is bit 4 of value j. Value j<16 =
// ((qs[j]&15 | bit j of qh <<4) - 16)*d, value j+16 likewise with qs[j]>>4 and bit j+16.
type BlockQ5_0 []byte

// Q5_0Block returns block i of a Q5_0 row. It panics if the block is outside row.
func Q5_0Block(row []byte, i int) BlockQ5_0 { return BlockQ5_0(blockAt(Q5_0, row, sizeQ5_0, i)) }

// D returns the block scale.
func (b BlockQ5_0) D() f16.Half { return f16.Half(le16(b[0:])) }

// Qh returns the 32 fifth bits as a little-endian uint32 (bit j: value j).
func (b BlockQ5_0) Qh() uint32 { return le32(b[2:]) }

// Qs returns the 16 bytes of low nibbles.
func (b BlockQ5_0) Qs() []byte { return b[6:22:22] }

// BlockQ5_1 is a view of a block_q5_1 (24 bytes, 32 values): d half (0), m half (2), qh[4]
// (4), qs[16] (8). Value j = q_j*d + m with the 5-bit q_j built as in BlockQ5_0.
type BlockQ5_1 []byte

// Q5_1Block returns block i of a Q5_1 row. It panics if the block is outside row.
func Q5_1Block(row []byte, i int) BlockQ5_1 { return BlockQ5_1(blockAt(Q5_1, row, sizeQ5_1, i)) }

// D returns the block scale.
func (b BlockQ5_1) D() f16.Half { return f16.Half(le16(b[0:])) }

// M returns the block minimum.
func (b BlockQ5_1) M() f16.Half { return f16.Half(le16(b[2:])) }

// DM returns the half2 dm as a 32-bit word (d in the low half).
func (b BlockQ5_1) DM() uint32 { return le32(b[0:]) }

// Qh returns the 32 fifth bits as a little-endian uint32 (bit j: value j).
func (b BlockQ5_1) Qh() uint32 { return le32(b[4:]) }

// Qs returns the 16 bytes of low nibbles.
func (b BlockQ5_1) Qs() []byte { return b[8:24:24] }

// BlockQ8_0 is a view of a block_q8_0 (34 bytes, 32 values): d half (0), qs[32] int8 (2).
// Value j = qs[j]*d.
type BlockQ8_0 []byte

// Q8_0Block returns block i of a Q8_0 row. It panics if the block is outside row.
func Q8_0Block(row []byte, i int) BlockQ8_0 { return BlockQ8_0(blockAt(Q8_0, row, sizeQ8_0, i)) }

// D returns the block scale.
func (b BlockQ8_0) D() f16.Half { return f16.Half(le16(b[0:])) }

// Qs returns the 32 quants as raw bytes (two's complement int8).
func (b BlockQ8_0) Qs() []byte { return b[2:34:34] }

// Q returns quant j as int8.
func (b BlockQ8_0) Q(j int) int8 { return int8(b[2+j]) }

// BlockQ8_1 is a view of a block_q8_1 (36 bytes, 32 values): d half (0), s half (2) —
// the half2 ds, with s = d*sum(qs) —, qs[32] int8 (4). Value j = qs[j]*d.
type BlockQ8_1 []byte

// Q8_1Block returns block i of a Q8_1 row. It panics if the block is outside row.
func Q8_1Block(row []byte, i int) BlockQ8_1 { return BlockQ8_1(blockAt(Q8_1, row, sizeQ8_1, i)) }

// D returns the block scale.
func (b BlockQ8_1) D() f16.Half { return f16.Half(le16(b[0:])) }

// S returns the stored d*sum(qs).
func (b BlockQ8_1) S() f16.Half { return f16.Half(le16(b[2:])) }

// DS returns the half2 ds as a 32-bit word (d in the low half).
func (b BlockQ8_1) DS() uint32 { return le32(b[0:]) }

// Qs returns the 32 quants as raw bytes (two's complement int8).
func (b BlockQ8_1) Qs() []byte { return b[4:36:36] }

// Q returns quant j as int8.
func (b BlockQ8_1) Q(j int) int8 { return int8(b[4+j]) }

// BlockIQ4_NL is a view of a block_iq4_nl (18 bytes, 32 values): d half (0), qs[16] (2).
// Value j<16 = d*KValuesIQ4NL[qs[j]&15], value j+16 = d*KValuesIQ4NL[qs[j]>>4].
type BlockIQ4_NL []byte

// IQ4_NLBlock returns block i of an IQ4_NL row. It panics if the block is outside row.
func IQ4_NLBlock(row []byte, i int) BlockIQ4_NL {
	return BlockIQ4_NL(blockAt(IQ4_NL, row, sizeIQ4_NL, i))
}

// D returns the block scale.
func (b BlockIQ4_NL) D() f16.Half { return f16.Half(le16(b[0:])) }

// Qs returns the 16 bytes of 4-bit codes.
func (b BlockIQ4_NL) Qs() []byte { return b[2:18:18] }

// BlockMXFP4 is a view of a block_mxfp4 (17 bytes, 32 values): e E8M0 exponent (0),
// qs[16] (1). Value j<16 = KValuesMXFP4[qs[j]&15]*e8m0ToFP32Half(e), value j+16 the same
// with qs[j]>>4.
type BlockMXFP4 []byte

// MXFP4Block returns block i of an MXFP4 row. It panics if the block is outside row.
func MXFP4Block(row []byte, i int) BlockMXFP4 {
	return BlockMXFP4(blockAt(MXFP4, row, sizeMXFP4, i))
}

// E returns the shared E8M0 exponent byte.
func (b BlockMXFP4) E() uint8 { return b[0] }

// Qs returns the 16 bytes of E2M1 codes.
func (b BlockMXFP4) Qs() []byte { return b[1:17:17] }

// ---------------------------------------------------------------------------------------
// Dequantization. Each is ggml's dequantize_row_<type>: one float32 product (and for the
// types with a minimum one float32 sum) per value, the int quant converted exactly.

// dequantizeQ4_0: y = float32(q-8) * d.
func dequantizeQ4_0(src []byte, dst []float32) {
	for i := 0; i < len(dst)/QK4_0; i++ {
		b := BlockQ4_0(src[i*sizeQ4_0 : (i+1)*sizeQ4_0])
		d := fp16ToFP32(b.D())
		y := dst[i*QK4_0 : (i+1)*QK4_0]
		qs := b.Qs()
		for j := 0; j < QK4_0/2; j++ {
			x0 := int(qs[j]&0x0F) - 8
			x1 := int(qs[j]>>4) - 8
			y[j] = float32(x0) * d
			y[j+QK4_0/2] = float32(x1) * d
		}
	}
}

// dequantizeQ4_1: y = float32(q)*d + m, two roundings.
func dequantizeQ4_1(src []byte, dst []float32) {
	for i := 0; i < len(dst)/QK4_1; i++ {
		b := BlockQ4_1(src[i*sizeQ4_1 : (i+1)*sizeQ4_1])
		d := fp16ToFP32(b.D())
		m := fp16ToFP32(b.M())
		y := dst[i*QK4_1 : (i+1)*QK4_1]
		qs := b.Qs()
		for j := 0; j < QK4_1/2; j++ {
			x0 := int(qs[j] & 0x0F)
			x1 := int(qs[j] >> 4)
			y[j] = float32(float32(x0)*d) + m
			y[j+QK4_1/2] = float32(float32(x1)*d) + m
		}
	}
}

// dequantizeQ5_0: y = float32(q-16) * d with q = low nibble | fifth bit from qh.
func dequantizeQ5_0(src []byte, dst []float32) {
	for i := 0; i < len(dst)/QK5_0; i++ {
		b := BlockQ5_0(src[i*sizeQ5_0 : (i+1)*sizeQ5_0])
		d := fp16ToFP32(b.D())
		qh := b.Qh()
		y := dst[i*QK5_0 : (i+1)*QK5_0]
		qs := b.Qs()
		for j := 0; j < QK5_0/2; j++ {
			xh0 := uint8((qh>>uint(j))<<4) & 0x10
			xh1 := uint8(qh>>uint(j+12)) & 0x10
			x0 := int32(qs[j]&0x0F|xh0) - 16
			x1 := int32(qs[j]>>4|xh1) - 16
			y[j] = float32(x0) * d
			y[j+QK5_0/2] = float32(x1) * d
		}
	}
}

// dequantizeQ5_1: y = float32(q)*d + m, two roundings.
func dequantizeQ5_1(src []byte, dst []float32) {
	for i := 0; i < len(dst)/QK5_1; i++ {
		b := BlockQ5_1(src[i*sizeQ5_1 : (i+1)*sizeQ5_1])
		d := fp16ToFP32(b.D())
		m := fp16ToFP32(b.M())
		qh := b.Qh()
		y := dst[i*QK5_1 : (i+1)*QK5_1]
		qs := b.Qs()
		for j := 0; j < QK5_1/2; j++ {
			xh0 := uint8((qh>>uint(j))<<4) & 0x10
			xh1 := uint8(qh>>uint(j+12)) & 0x10
			x0 := int(qs[j]&0x0F | xh0)
			x1 := int(qs[j]>>4 | xh1)
			y[j] = float32(float32(x0)*d) + m
			y[j+QK5_1/2] = float32(float32(x1)*d) + m
		}
	}
}

// dequantizeQ8_0: y = float32(qs) * d.
func dequantizeQ8_0(src []byte, dst []float32) {
	for i := 0; i < len(dst)/QK8_0; i++ {
		b := BlockQ8_0(src[i*sizeQ8_0 : (i+1)*sizeQ8_0])
		d := fp16ToFP32(b.D())
		y := dst[i*QK8_0 : (i+1)*QK8_0]
		for j := 0; j < QK8_0; j++ {
			y[j] = float32(b.Q(j)) * d
		}
	}
}

// dequantizeQ8_1: y = float32(qs) * d, ignoring s. ggml has no dequantize_row_q8_1 (its
// type has no to_float); this is dequantize_row_q8_0's formula, which the test vectors'
// generator uses too.
func dequantizeQ8_1(src []byte, dst []float32) {
	for i := 0; i < len(dst)/QK8_1; i++ {
		b := BlockQ8_1(src[i*sizeQ8_1 : (i+1)*sizeQ8_1])
		d := fp16ToFP32(b.D())
		y := dst[i*QK8_1 : (i+1)*QK8_1]
		for j := 0; j < QK8_1; j++ {
			y[j] = float32(b.Q(j)) * d
		}
	}
}

// dequantizeIQ4_NL: y = d * float32(kvalues_iq4nl[code]).
func dequantizeIQ4_NL(src []byte, dst []float32) {
	for i := 0; i < len(dst)/QK4_NL; i++ {
		b := BlockIQ4_NL(src[i*sizeIQ4_NL : (i+1)*sizeIQ4_NL])
		d := fp16ToFP32(b.D())
		y := dst[i*QK4_NL : (i+1)*QK4_NL]
		qs := b.Qs()
		for j := 0; j < QK4_NL/2; j++ {
			y[j] = d * float32(KValuesIQ4NL[qs[j]&0xf])
			y[j+QK4_NL/2] = d * float32(KValuesIQ4NL[qs[j]>>4])
		}
	}
}

// dequantizeMXFP4: y = float32(kvalues_mxfp4[code]) * 2^(e-128).
func dequantizeMXFP4(src []byte, dst []float32) {
	for i := 0; i < len(dst)/QK_MXFP4; i++ {
		b := BlockMXFP4(src[i*sizeMXFP4 : (i+1)*sizeMXFP4])
		d := e8m0ToFP32Half(b.E())
		y := dst[i*QK_MXFP4 : (i+1)*QK_MXFP4]
		qs := b.Qs()
		for j := 0; j < QK_MXFP4/2; j++ {
			y[j] = float32(KValuesMXFP4[qs[j]&0x0F]) * d
			y[j+QK_MXFP4/2] = float32(KValuesMXFP4[qs[j]>>4]) * d
		}
	}
}

// ---------------------------------------------------------------------------------------
// Reference quantizers. Inputs that make ggml's C undefined (NaN or ±Inf reaching a
// float-to-int conversion, e.g. any NaN/Inf in Q4_0..Q8_1, or a block of float32
// subnormals whose 1/d overflows) give what gcc's x86-64 code gives for the conversions
// (see cvttF32); ggml's bytes for those inputs are not a contract.

// absMaxSigned returns the first value of largest magnitude in x and that magnitude
// (C: if (amax < fabsf(v)) { amax = fabsf(v); max = v; }); NaNs are skipped.
func absMaxSigned(x []float32) (amax, max float32) {
	for _, v := range x {
		if amax < fabsf(v) {
			amax = fabsf(v)
			max = v
		}
	}
	return amax, max
}

// minMax is ggml's min/max loop from FLT_MAX/-FLT_MAX (NaNs are skipped).
func minMax(x []float32) (min, max float32) {
	min, max = math.MaxFloat32, -math.MaxFloat32
	for _, v := range x {
		if v < min {
			min = v
		}
		if v > max {
			max = v
		}
	}
	return min, max
}

// inv is ggml's `d ? 1.0f/d : 0.0f` (a NaN d is "true").
func inv(d float32) float32 {
	if d != 0 {
		return 1 / d
	}
	return 0
}

// quantizeQ4_0Ref is quantize_row_q4_0_ref: d = max/-8 for the signed value max of largest
// magnitude, q = min(15, (int8)(x/d + 8.5)).
//
// Bound (tested): for a block whose d is a normal binary16, |dequantized - x| <=
// 1.01*amax/8 + |x|*2^-22 (half a step, a whole step for the clamped top code, plus the
// binary16 rounding of d).
func quantizeQ4_0Ref(src []float32, dst []byte) {
	for i := 0; i < len(src)/QK4_0; i++ {
		x := src[i*QK4_0 : (i+1)*QK4_0]
		b := dst[i*sizeQ4_0 : (i+1)*sizeQ4_0]
		_, max := absMaxSigned(x)
		d := max / -8
		id := inv(d)
		put16(b[0:], uint16(fp32ToFP16(d)))
		for j := 0; j < QK4_0/2; j++ {
			x0 := float32(x[j] * id)
			x1 := float32(x[j+QK4_0/2] * id)
			xi0 := uint8(min(15, int(cToInt8(x0+8.5))))
			xi1 := uint8(min(15, int(cToInt8(x1+8.5))))
			b[2+j] = xi0 | xi1<<4
		}
	}
}

// quantizeQ4_1Ref is quantize_row_q4_1_ref: d = (max-min)/15, m = min,
// q = min(15, (int8)((x-min)/d + 0.5)).
//
// Bound (tested): |dequantized - x| <= 0.51*(max-min)/15 + |min|*2^-10 + |x|*2^-22 for a
// block whose d and m are normal binary16.
func quantizeQ4_1Ref(src []float32, dst []byte) {
	for i := 0; i < len(src)/QK4_1; i++ {
		x := src[i*QK4_1 : (i+1)*QK4_1]
		b := dst[i*sizeQ4_1 : (i+1)*sizeQ4_1]
		mn, mx := minMax(x)
		d := (mx - mn) / 15
		id := inv(d)
		put16(b[0:], uint16(fp32ToFP16(d)))
		put16(b[2:], uint16(fp32ToFP16(mn)))
		for j := 0; j < QK4_1/2; j++ {
			x0 := float32((x[j] - mn) * id)
			x1 := float32((x[j+QK4_1/2] - mn) * id)
			xi0 := uint8(min(15, int(cToInt8(x0+0.5))))
			xi1 := uint8(min(15, int(cToInt8(x1+0.5))))
			b[4+j] = xi0 | xi1<<4
		}
	}
}

// quantizeQ5_0Ref is quantize_row_q5_0_ref: d = max/-16, q = min(31, (int8)(x/d + 16.5)).
//
// Bound (tested): |dequantized - x| <= 1.01*amax/16 + |x|*2^-22 for a block whose d is a
// normal binary16.
func quantizeQ5_0Ref(src []float32, dst []byte) {
	for i := 0; i < len(src)/QK5_0; i++ {
		x := src[i*QK5_0 : (i+1)*QK5_0]
		b := dst[i*sizeQ5_0 : (i+1)*sizeQ5_0]
		_, max := absMaxSigned(x)
		d := max / -16
		id := inv(d)
		put16(b[0:], uint16(fp32ToFP16(d)))
		var qh uint32
		for j := 0; j < QK5_0/2; j++ {
			x0 := float32(x[j] * id)
			x1 := float32(x[j+QK5_0/2] * id)
			xi0 := uint8(min(31, int(cToInt8(x0+16.5))))
			xi1 := uint8(min(31, int(cToInt8(x1+16.5))))
			b[6+j] = xi0&0x0F | (xi1&0x0F)<<4
			qh |= uint32(xi0&0x10) >> 4 << uint(j)
			qh |= uint32(xi1&0x10) >> 4 << uint(j+QK5_0/2)
		}
		put32(b[2:], qh)
	}
}

// quantizeQ5_1Ref is quantize_row_q5_1_ref: d = (max-min)/31, m = min,
// q = (uint8)((x-min)/d + 0.5) (no clamp, as in ggml).
//
// Bound (tested): |dequantized - x| <= 0.52*(max-min)/31 + |min|*2^-10 + |x|*2^-22 for a
// block whose d and m are normal binary16.
func quantizeQ5_1Ref(src []float32, dst []byte) {
	for i := 0; i < len(src)/QK5_1; i++ {
		x := src[i*QK5_1 : (i+1)*QK5_1]
		b := dst[i*sizeQ5_1 : (i+1)*sizeQ5_1]
		mn, mx := minMax(x)
		d := (mx - mn) / 31
		id := inv(d)
		put16(b[0:], uint16(fp32ToFP16(d)))
		put16(b[2:], uint16(fp32ToFP16(mn)))
		var qh uint32
		for j := 0; j < QK5_1/2; j++ {
			x0 := float32((x[j] - mn) * id)
			x1 := float32((x[j+QK5_1/2] - mn) * id)
			xi0 := cToUint8(x0 + 0.5)
			xi1 := cToUint8(x1 + 0.5)
			b[8+j] = xi0&0x0F | (xi1&0x0F)<<4
			qh |= uint32(xi0&0x10) >> 4 << uint(j)
			qh |= uint32(xi1&0x10) >> 4 << uint(j+QK5_1/2)
		}
		put32(b[4:], qh)
	}
}

// absMax is ggml's amax = MAX(amax, fabsf(v)) loop, MAX(a,b) = a > b ? a : b: a NaN
// becomes amax and is replaced by the next value.
func absMax(x []float32) float32 {
	var amax float32
	for _, v := range x {
		if a := fabsf(v); !(amax > a) {
			amax = a
		}
	}
	return amax
}

// quantizeQ8Block writes d = amax/127 and qs = (int8)roundf(x/d) of one block, and returns
// d and the sum of the stored quants.
func quantizeQ8Block(x []float32, dh, qs []byte) (d float32, sum int) {
	amax := absMax(x)
	d = amax / 127
	id := inv(d)
	put16(dh, uint16(fp32ToFP16(d)))
	for j := range x {
		q := cToInt8(roundf(float32(x[j] * id)))
		qs[j] = byte(q)
		sum += int(q)
	}
	return d, sum
}

// quantizeQ8_0Ref is quantize_row_q8_0_ref: d = amax/127, q = (int8)roundf(x/d).
//
// Bound (tested, Q8_1 too): |dequantized - x| <= 0.57*amax/127 + |x|*2^-22 for a block
// whose d is a normal binary16 (half a step plus 127 times d's binary16 rounding).
func quantizeQ8_0Ref(src []float32, dst []byte) {
	for i := 0; i < len(src)/QK8_0; i++ {
		b := dst[i*sizeQ8_0 : (i+1)*sizeQ8_0]
		quantizeQ8Block(src[i*QK8_0:(i+1)*QK8_0], b[0:2], b[2:34])
	}
}

// quantizeQ8_1Ref is quantize_row_q8_1_ref: as Q8_0, plus s = fp16(float32(sum(q))*d).
// (ggml_quantize_chunk has no case for Q8_1; this is the type's from_float_ref.)
func quantizeQ8_1Ref(src []float32, dst []byte) {
	for i := 0; i < len(src)/QK8_1; i++ {
		b := dst[i*sizeQ8_1 : (i+1)*sizeQ8_1]
		d, sum := quantizeQ8Block(src[i*QK8_1:(i+1)*QK8_1], b[0:2], b[4:36])
		put16(b[2:], uint16(fp32ToFP16(float32(sum)*d)))
	}
}

// floorLog2f is C's floorf(log2f(x)) with glibc's log2f, for x > 0 (and +Inf). It rounds
// the float64 log2 to float32 before the floor: for x just below a power of two with a
// large exponent, log2f(x) rounds up to the integer, and so must this. It was checked equal
// to glibc 2.36's floorf(log2f(x)) for every positive finite float32 (2^31 - 2^23 values);
// at the decisive points math.Log2 is at least 2e6 float64 ulps from a float32 rounding
// boundary, so the result does not depend on math.Log2's last bits.
func floorLog2f(x float32) float32 {
	l := float32(math.Log2(float64(x)))
	return float32(math.Floor(float64(l)))
}

// bestIndexMXFP4 is best_index_mxfp4: the first code whose value kvalues_mxfp4[i]*e is
// nearest to x (strictly smaller error wins); a NaN x gives 0.
func bestIndexMXFP4(x, e float32) int {
	x = float32(x)
	best := 0
	bestErr := fabsf(float32(float32(KValuesMXFP4[0])*e) - x)
	for i := 1; i < 16; i++ {
		err := fabsf(float32(float32(KValuesMXFP4[i])*e) - x)
		if err < bestErr {
			best = i
			bestErr = err
		}
	}
	return best
}

// quantizeMXFP4Ref is quantize_row_mxfp4_ref: e = (uint8)(floorf(log2f(amax)) - 2 + 127)
// (0 if amax is 0), and each value the nearest E2M1 code at scale 2^(e-128).
//
// Bound (tested): with s = 2^(e-128), |dequantized - x| <= 2*s where |x| <= 12*s (half the
// widest gap, 8s..12s) and <= 4*s above (amax < 16*s): at most amax/2.
func quantizeMXFP4Ref(src []float32, dst []byte) {
	for i := 0; i < len(src)/QK_MXFP4; i++ {
		x := src[i*QK_MXFP4 : (i+1)*QK_MXFP4]
		b := dst[i*sizeMXFP4 : (i+1)*sizeMXFP4]
		amax, _ := absMaxSigned(x)
		var e uint8
		if amax > 0 {
			e = cToUint8(floorLog2f(amax) - 2 + 127)
		}
		d := e8m0ToFP32Half(e)
		b[0] = e
		for j := 0; j < QK_MXFP4/2; j++ {
			x0 := uint8(bestIndexMXFP4(x[j], d))
			x1 := uint8(bestIndexMXFP4(x[j+QK_MXFP4/2], d))
			b[1+j] = x0 | x1<<4
		}
	}
}

// quantizeIQ4NLBlock is quantize_row_iq4_nl_impl for one block of 32 values with
// super_block_size = block_size = 32, values = kvalues_iq4nl and no importance matrix
// (weights x^2), as quantize_iq4_nl calls it with ntry = 7 (ggml_quantize_chunk's path)
// and quantize_row_iq4_nl_ref with ntry = -1. It writes d (dst[0:2]) and qs (dst[2:18]).
//
// The scale is the weighted least-squares fit of x onto the codes chosen at d = max/-127
// (ntry > 0; max/-127's negation for ntry <= 0), improved by trying d = max/(itry-127)
// for itry in [-ntry, ntry]; then (ntry > 0) every value takes the code nearest x/d.
// Blocks with max |x| < 1e-15 get d = 0 and code 8.
//
// Bound (tested, ntry = 7): with D the stored scale (possibly negative), |dequantized - x|
// <= 12.2*|D| + the distance from x to the representable interval [-127*D, 113*D] (half
// the widest gap of kvalues_iq4nl, 24, plus 127 times D's binary16 rounding) + |x|*2^-22.
func quantizeIQ4NLBlock(x []float32, dst []byte, ntry int) {
	values := KValuesIQ4NL[:]
	var weight [QK4_NL]float32
	var L [QK4_NL]uint8
	for j := range weight {
		weight[j] = float32(x[j] * x[j])
	}
	amax, max := absMaxSigned(x[:QK4_NL])
	var scale float32
	if !(amax < groupMaxEps) {
		var d float32
		if ntry > 0 {
			d = -max / float32(values[0])
		} else {
			d = max / float32(values[0])
		}
		id := 1 / d
		var sumqx, sumq2 float32
		for j := 0; j < QK4_NL; j++ {
			al := float32(id * x[j])
			l := bestIndexInt8(16, values, al)
			L[j] = uint8(l)
			q := float32(values[l])
			w := weight[j]
			sumqx = sumqx + float32(float32(w*q)*x[j])
			sumq2 = sumq2 + float32(float32(w*q)*q)
		}
		d = 0
		if sumq2 > 0 {
			d = sumqx / sumq2
		}
		best := float32(d * sumqx)
		for itry := -ntry; itry <= ntry; itry++ {
			id = float32(itry+int(values[0])) / max
			sumqx, sumq2 = 0, 0
			for j := 0; j < QK4_NL; j++ {
				al := float32(id * x[j])
				l := bestIndexInt8(16, values, al)
				q := float32(values[l])
				w := weight[j]
				sumqx = sumqx + float32(float32(w*q)*x[j])
				sumq2 = sumq2 + float32(float32(w*q)*q)
			}
			if sumq2 > 0 && float32(sumqx*sumqx) > float32(best*sumq2) {
				d = sumqx / sumq2
				best = float32(d * sumqx)
			}
		}
		scale = d
	}
	put16(dst[0:], uint16(fp32ToFP16(scale)))
	if ntry > 0 {
		id := inv(scale)
		for j := 0; j < QK4_NL; j++ {
			L[j] = uint8(bestIndexInt8(16, values, float32(id*x[j])))
		}
	}
	for j := 0; j < 16; j++ {
		dst[2+j] = L[j] | L[j+16]<<4
	}
}

// quantizeIQ4_NL is quantize_iq4_nl without an importance matrix (ntry = 7), which is what
// ggml_quantize_chunk calls; note that ggml's quantize_row_iq4_nl_ref differs (ntry = -1).
func quantizeIQ4_NL(src []float32, dst []byte) {
	for i := 0; i < len(src)/QK4_NL; i++ {
		quantizeIQ4NLBlock(src[i*QK4_NL:(i+1)*QK4_NL], dst[i*sizeIQ4_NL:(i+1)*sizeIQ4_NL], 7)
	}
}

func init() {
	register(Q4_0, Codec{Dequantize: dequantizeQ4_0, QuantizeRef: quantizeQ4_0Ref, QR: QR4_0, QI: QI4_0})
	register(Q4_1, Codec{Dequantize: dequantizeQ4_1, QuantizeRef: quantizeQ4_1Ref, QR: QR4_1, QI: QI4_1})
	register(Q5_0, Codec{Dequantize: dequantizeQ5_0, QuantizeRef: quantizeQ5_0Ref, QR: QR5_0, QI: QI5_0})
	register(Q5_1, Codec{Dequantize: dequantizeQ5_1, QuantizeRef: quantizeQ5_1Ref, QR: QR5_1, QI: QI5_1})
	register(Q8_0, Codec{Dequantize: dequantizeQ8_0, QuantizeRef: quantizeQ8_0Ref, QR: QR8_0, QI: QI8_0})
	register(Q8_1, Codec{Dequantize: dequantizeQ8_1, QuantizeRef: quantizeQ8_1Ref, QR: QR8_1, QI: QI8_1})
	register(IQ4_NL, Codec{Dequantize: dequantizeIQ4_NL, QuantizeRef: quantizeIQ4_NL, QR: QR4_NL, QI: QI4_NL})
	register(MXFP4, Codec{Dequantize: dequantizeMXFP4, QuantizeRef: quantizeMXFP4Ref, QR: QR_MXFP4, QI: QI_MXFP4})
}
