package quant

import (
	"math"

	"github.com/ggsim/ggsim/f16"
)

// NVFP4, Q1_0, Q2_0, TQ1_0 and TQ2_0: block views, kernel constants, dequantization
// bit-exact with ggml's dequantize_row_* and reference quantizers byte-exact with
// quantize_row_*_ref, which is what ggml_quantize_chunk runs for these types (ggml-quants.c
// at d99724f2b141, x86-64 gcc, no FMA; Q1_0 and Q2_0 run the same reference quantizer with
// an importance matrix too, NVFP4 and TQ*_0 ignore it). TQ1_0 and TQ2_0 have no CUDA
// matmul kernel, so their QR and QI are 0 (ggml-common.h defines none).
//
// Block views are []byte of exactly one block, read in place as in iquants.go; the
// <T>Block(row, i) functions return block i of a row.

// Kernel constants (ggml-common.h).
const (
	QK_NVFP4   = 64 // values per NVFP4 block
	QKNVFP4Sub = 16 // values per NVFP4 sub-block (one UE4M3 scale each)
	QR_NVFP4   = 2
	QI_NVFP4   = QK_NVFP4 / (4 * QR_NVFP4)

	QK1_0 = 128
	QR1_0 = 1
	QI1_0 = QK1_0 / 32

	QK2_0 = 64
	QR2_0 = 1
	QI2_0 = QK2_0 / 32
)

// Block sizes in bytes (sizeof(block_*)).
const (
	sizeNVFP4 = 36
	sizeQ1_0  = 18
	sizeQ2_0  = 18
	sizeTQ1_0 = 54
	sizeTQ2_0 = 66
)

// BlockNVFP4 is a view of a block_nvfp4 (36 bytes, 64 values): d[4] UE4M3 sub-block
// scales (offset 0), qs[32] E2M1 codes (4). Sub-block s (values 16s..16s+15) has scale d[s]
// and bytes qs[8s..8s+7]: low nibble of qs[8s+j] = value 16s+j, high nibble = 16s+j+8.
type BlockNVFP4 []byte

// NVFP4Block returns block i of an NVFP4 row. It panics if the block is outside row.
func NVFP4Block(row []byte, i int) BlockNVFP4 { return BlockNVFP4(blockAt(NVFP4, row, sizeNVFP4, i)) }

// Scale returns the raw UE4M3 byte d[s], s < 4 (decode it with UE4M3ToFP32 as the CPU
// does or UE4M3ToFP32CUDA as the CUDA kernels do).
func (b BlockNVFP4) Scale(s int) uint8 { return b[s] }

// Qs returns qs[32].
func (b BlockNVFP4) Qs() []byte { return b[4:36:36] }

// BlockQ1_0 is a view of a block_q1_0 (18 bytes, 128 values): d half (0), qs[16] (2).
// Bit j%8 of qs[j/8] set means value j = +d, clear means -d.
type BlockQ1_0 []byte

// Q1_0Block returns block i of a Q1_0 row. It panics if the block is outside row.
func Q1_0Block(row []byte, i int) BlockQ1_0 { return BlockQ1_0(blockAt(Q1_0, row, sizeQ1_0, i)) }

// D returns the block scale.
func (b BlockQ1_0) D() f16.Half { return f16.Half(le16(b[0:])) }

// Qs returns qs[16].
func (b BlockQ1_0) Qs() []byte { return b[2:18:18] }

// BlockQ2_0 is a view of a block_q2_0 (18 bytes, 64 values): d half (0), qs[16] (2).
// Bits 2(j%4)..+1 of qs[j/4] are code q of value j, which is (q-1)*d (00=-1, 01=0,
// 10=+1, 11=+2).
type BlockQ2_0 []byte

// Q2_0Block returns block i of a Q2_0 row. It panics if the block is outside row.
func Q2_0Block(row []byte, i int) BlockQ2_0 { return BlockQ2_0(blockAt(Q2_0, row, sizeQ2_0, i)) }

// D returns the block scale.
func (b BlockQ2_0) D() f16.Half { return f16.Half(le16(b[0:])) }

// Qs returns qs[16].
func (b BlockQ2_0) Qs() []byte { return b[2:18:18] }

// blockTQ1_0 is a view of a block_tq1_0 (54 bytes, 256 values): qs[48] (0), qh[4] (48),
// d half (52). Each byte packs 5 (qs) or 4 (qh) ternary digits in base 3, scaled so that
// digit n is ((uint8(byte*3^n)) * 3) >> 8; value = (digit-1)*d.
type blockTQ1_0 []byte

// tq1_0Block returns block i of a TQ1_0 row. It panics if the block is outside row.
func tq1_0Block(row []byte, i int) blockTQ1_0 { return blockTQ1_0(blockAt(TQ1_0, row, sizeTQ1_0, i)) }

// Qs returns qs[48].
func (b blockTQ1_0) Qs() []byte { return b[0:48:48] }

// Qh returns qh[4].
func (b blockTQ1_0) Qh() []byte { return b[48:52:52] }

// D returns the block scale.
func (b blockTQ1_0) D() f16.Half { return f16.Half(le16(b[52:])) }

// blockTQ2_0 is a view of a block_tq2_0 (66 bytes, 256 values): qs[64] (0), d half (64).
// Value 128c + 32l + m (c < 2, l < 4, m < 32) is ((qs[32c+m]>>2l)&3 - 1)*d.
type blockTQ2_0 []byte

// tq2_0Block returns block i of a TQ2_0 row. It panics if the block is outside row.
func tq2_0Block(row []byte, i int) blockTQ2_0 { return blockTQ2_0(blockAt(TQ2_0, row, sizeTQ2_0, i)) }

// Qs returns qs[64].
func (b blockTQ2_0) Qs() []byte { return b[0:64:64] }

// D returns the block scale.
func (b blockTQ2_0) D() f16.Half { return f16.Half(le16(b[64:])) }

// UE4M3ToFP32CUDA is ggml_cuda_ue4m3_to_fp32 as built for NVIDIA GPUs (FP8_AVAILABLE,
// ggml-cuda/common.cuh): x is read as a signed __nv_fp8_e4m3 (bit 7 = sign, 4 exponent
// bits with bias 7, 3 mantissa bits, subnormals man*2^-9), with the NaN codes 0x7f and
// 0xff replaced by 0, then halved. It equals UE4M3ToFP32 (the CPU decode) for x < 0x80;
// for x >= 0x80 the CPU ignores the sign bit and decodes 0xff as 240, while the GPU gives
// the negative value (0x80 gives -0) and 0xff gives +0. ggml's quantizer never writes
// x >= 0x7f, so the difference only shows on foreign data.
func UE4M3ToFP32CUDA(x uint8) float32 {
	if x == 0x7F || x == 0xFF {
		return 0
	}
	exp := int(x>>3) & 0xF
	man := int(x & 0x7)
	var v float64
	if exp == 0 {
		v = math.Ldexp(float64(man), -9)
	} else {
		v = math.Ldexp(1+float64(float64(man)/8), exp-7)
	}
	if x&0x80 != 0 {
		v = -v
	}
	return float32(v) / 2 // exact: the smallest magnitude is 2^-9
}

// dequantizeNVFP4 is dequantize_row_nvfp4: y = float(kvalues_mxfp4[code]) * d with
// d = ggml_ue4m3_to_fp32(d[s]) per 16-value sub-block.
func dequantizeNVFP4(src []byte, dst []float32) {
	for i := 0; i < len(dst)/QK_NVFP4; i++ {
		b := NVFP4Block(src, i)
		qs := b.Qs()
		for s := 0; s < QK_NVFP4/QKNVFP4Sub; s++ {
			d := UE4M3ToFP32(b.Scale(s))
			y := dst[i*QK_NVFP4+s*QKNVFP4Sub : i*QK_NVFP4+(s+1)*QKNVFP4Sub]
			for j := 0; j < QKNVFP4Sub/2; j++ {
				q := qs[s*(QKNVFP4Sub/2)+j]
				y[j] = float32(KValuesMXFP4[q&0x0F]) * d
				y[j+QKNVFP4Sub/2] = float32(KValuesMXFP4[q>>4]) * d
			}
		}
	}
}

// dequantizeQ1_0 is dequantize_row_q1_0: y = d if the bit is set, else -d (a sign flip,
// as C's unary minus).
func dequantizeQ1_0(src []byte, dst []float32) {
	for i := 0; i < len(dst)/QK1_0; i++ {
		b := Q1_0Block(src, i)
		d := fp16ToFP32(b.D())
		negD := -d
		qs := b.Qs()
		y := dst[i*QK1_0 : (i+1)*QK1_0]
		for j := range y {
			if (qs[j/8]>>(j%8))&1 != 0 {
				y[j] = d
			} else {
				y[j] = negD
			}
		}
	}
}

// dequantizeQ2_0 is dequantize_row_q2_0: y = float(q - 1) * d.
func dequantizeQ2_0(src []byte, dst []float32) {
	for i := 0; i < len(dst)/QK2_0; i++ {
		b := Q2_0Block(src, i)
		d := fp16ToFP32(b.D())
		qs := b.Qs()
		y := dst[i*QK2_0 : (i+1)*QK2_0]
		for j := range y {
			q := (qs[j/4] >> ((j % 4) * 2)) & 0x03
			y[j] = float32(int(q)-1) * d
		}
	}
}

// pow3 is the pow3[] of dequantize_row_tq1_0.
var pow3 = [6]uint8{1, 3, 9, 27, 81, 243}

// tq1Digit is digit n of a TQ1_0 byte q: (uint16(uint8(q*3^n)) * 3) >> 8, in 0..2 for the
// bytes ggml writes (up to 2 for foreign bytes too: the result is < 3 for any byte).
func tq1Digit(q uint8, n int) int { return int(uint16(q*pow3[n])*3) >> 8 }

// dequantizeTQ1_0 is dequantize_row_tq1_0: y = float(digit - 1) * d, in the order
// qs[0:32] (digits 0..4, 32 bytes each), qs[32:48] (digits 0..4, 16 bytes each),
// qh[0:4] (digits 0..3).
func dequantizeTQ1_0(src []byte, dst []float32) {
	for i := 0; i < len(dst)/256; i++ {
		b := tq1_0Block(src, i)
		d := fp16ToFP32(b.D())
		qs := b.Qs()
		y := dst[i*256 : (i+1)*256]
		k := 0
		for _, part := range [2][]byte{qs[0:32], qs[32:48]} {
			for n := 0; n < 5; n++ {
				for _, q := range part {
					y[k] = float32(tq1Digit(q, n)-1) * d
					k++
				}
			}
		}
		qh := b.Qh()
		for n := 0; n < 4; n++ {
			for _, q := range qh {
				y[k] = float32(tq1Digit(q, n)-1) * d
				k++
			}
		}
	}
}

// dequantizeTQ2_0 is dequantize_row_tq2_0: y = float(((qs>>2l)&3) - 1) * d.
func dequantizeTQ2_0(src []byte, dst []float32) {
	for i := 0; i < len(dst)/256; i++ {
		b := tq2_0Block(src, i)
		d := fp16ToFP32(b.D())
		qs := b.Qs()
		y := dst[i*256 : (i+1)*256]
		k := 0
		for j := 0; j < 64; j += 32 {
			for l := 0; l < 4; l++ {
				for m := 0; m < 32; m++ {
					q := int(qs[j+m]>>(2*l)) & 3
					y[k] = float32(q-1) * d
					k++
				}
			}
		}
	}
}

// ---------------------------------------------------------------------------------------
// Reference quantizers.

// quantizeNVFP4Ref is quantize_row_nvfp4_ref: per 16-value sub-block, amax = the largest
// |x| (NaNs skipped), scale code ue = ggml_fp32_to_ue4m3(amax/6), d = its CPU decode, and
// each value the first E2M1 code whose kvalues_mxfp4[i]*d is strictly nearest.
func quantizeNVFP4Ref(src []float32, dst []byte) {
	for i := 0; i < len(src)/QK_NVFP4; i++ {
		b := NVFP4Block(dst, i)
		for s := 0; s < QK_NVFP4/QKNVFP4Sub; s++ {
			xb := src[i*QK_NVFP4+s*QKNVFP4Sub : i*QK_NVFP4+(s+1)*QKNVFP4Sub]
			amax, _ := absMaxSigned(xb)
			ue := fp32ToUE4M3(amax / 6)
			b[s] = ue
			d := UE4M3ToFP32(ue)
			for j := 0; j < QKNVFP4Sub/2; j++ {
				x0 := bestIndexMXFP4(xb[j], d)
				x1 := bestIndexMXFP4(xb[QKNVFP4Sub/2+j], d)
				b[4+s*(QKNVFP4Sub/2)+j] = uint8(x0) | uint8(x1)<<4
			}
		}
	}
}

// quantizeQ1_0Ref is quantize_row_q1_0_ref: d = (sum of |x| in order, float32) / 128, and
// bit j set iff x[j] >= 0 (so -0 sets it and NaN does not).
func quantizeQ1_0Ref(src []float32, dst []byte) {
	for i := 0; i < len(src)/QK1_0; i++ {
		x := src[i*QK1_0 : (i+1)*QK1_0]
		b := Q1_0Block(dst, i)
		var sumAbs float32
		for _, v := range x {
			sumAbs += fabsf(v)
		}
		d := sumAbs / QK1_0
		put16(b[0:], uint16(fp32ToFP16(d)))
		qs := b[2:18]
		clear(qs)
		for j, v := range x {
			if v >= 0 {
				qs[j/8] |= 1 << (j % 8)
			}
		}
	}
}

// quantizeQ2_0Ref is quantize_row_q2_0_ref: d = amax (NaNs skipped), id = 1/d (0 if d is
// 0), q = clamp((int)roundf(x*id) + 1, 0, 3), with C's x86-64 conversion of a NaN or
// out-of-range float to INT_MIN.
func quantizeQ2_0Ref(src []float32, dst []byte) {
	for i := 0; i < len(src)/QK2_0; i++ {
		x := src[i*QK2_0 : (i+1)*QK2_0]
		b := Q2_0Block(dst, i)
		d, _ := absMaxSigned(x)
		var id float32
		if d > 0 {
			id = 1 / d
		}
		put16(b[0:], uint16(fp32ToFP16(d)))
		qs := b[2:18]
		clear(qs)
		for j, v := range x {
			q := int64(cvttF32(roundf(v*id))) + 1
			q = max(0, min(q, 3))
			qs[j/4] |= uint8(q) << ((j % 4) * 2)
		}
	}
}

// cLroundfPlus1 is C's "int xi = lroundf(v) + 1" as ggml-base computes it on x86-64 with
// glibc: lroundf rounds half away from zero and returns LONG_MIN for NaN and for values
// outside the long range; the long sum is then truncated to int.
func cLroundfPlus1(v float32) int32 {
	l := int64(math.MinInt64)
	if v == v && v > -0x1p63 && v < 0x1p63 {
		l = int64(roundf(v))
	}
	return int32(l + 1)
}

// tqAbsMax is the amax loop of the TQ reference quantizers, amax = MAX(amax, fabsf(v))
// with ggml's MAX(a, b) = a > b ? a : b: a NaN replaces amax, and the next value
// replaces a NaN amax.
func tqAbsMax(x []float32) float32 {
	var amax float32
	for _, v := range x {
		if a := fabsf(v); !(amax > a) {
			amax = a
		}
	}
	return amax
}

// tqInverse is "d ? 1.0f/d : 0.0f" (a NaN d is true in C).
func tqInverse(d float32) float32 {
	if d != 0 {
		return 1 / d
	}
	return 0
}

// tq1Pack packs the ternary digits xi of xs (most significant first) as
// quantize_row_tq1_0_ref does: q = q*3 + xi in uint8 arithmetic, times 3 more when
// shift, then the ceiling division q = (q*256 + 242) / 243 truncated to uint8.
func tq1Pack(xs []float32, id float32, shift bool) uint8 {
	var q uint8
	for _, v := range xs {
		q = q*3 + uint8(cLroundfPlus1(v*id))
	}
	if shift {
		q *= 3
	}
	return uint8((uint32(q)*256 + 242) / 243)
}

// quantizeTQ1_0Ref is quantize_row_tq1_0_ref: d = amax (tqAbsMax), digits
// lroundf(x/d)+1 packed five per byte (qs[0:32]: values m+32n; qs[32:48]: 160+m+16n) and
// four per byte (qh[j]: 240+j+4m).
func quantizeTQ1_0Ref(src []float32, dst []byte) {
	var xs [5]float32
	for i := 0; i < len(src)/256; i++ {
		x := src[i*256 : (i+1)*256]
		b := tq1_0Block(dst, i)
		d := tqAbsMax(x)
		id := tqInverse(d)
		put16(b[52:], uint16(fp32ToFP16(d)))
		for m := 0; m < 32; m++ {
			for n := 0; n < 5; n++ {
				xs[n] = x[m+n*32]
			}
			b[m] = tq1Pack(xs[:], id, false)
		}
		for m := 0; m < 16; m++ {
			for n := 0; n < 5; n++ {
				xs[n] = x[160+m+n*16]
			}
			b[32+m] = tq1Pack(xs[:], id, false)
		}
		for j := 0; j < 4; j++ {
			for m := 0; m < 4; m++ {
				xs[m] = x[240+j+m*4]
			}
			b[48+j] = tq1Pack(xs[:4], id, true)
		}
	}
}

// quantizeTQ2_0Ref is quantize_row_tq2_0_ref: d = amax (tqAbsMax), and for value
// 128c+32n+m the 2-bit code (lroundf(x/d)+1)&3 at bits 2n of qs[32c+m].
func quantizeTQ2_0Ref(src []float32, dst []byte) {
	for i := 0; i < len(src)/256; i++ {
		x := src[i*256 : (i+1)*256]
		b := tq2_0Block(dst, i)
		d := tqAbsMax(x)
		id := tqInverse(d)
		put16(b[64:], uint16(fp32ToFP16(d)))
		for c := 0; c < 2; c++ {
			for m := 0; m < 32; m++ {
				var q uint8
				for n := 0; n < 4; n++ {
					xi := cLroundfPlus1(x[128*c+32*n+m] * id)
					q += uint8(xi&3) << (2 * n)
				}
				b[32*c+m] = q
			}
		}
	}
}

func init() {
	register(NVFP4, Codec{Dequantize: dequantizeNVFP4, QuantizeRef: quantizeNVFP4Ref, QR: QR_NVFP4, QI: QI_NVFP4})
	register(Q1_0, Codec{Dequantize: dequantizeQ1_0, QuantizeRef: quantizeQ1_0Ref, QR: QR1_0, QI: QI1_0})
	register(Q2_0, Codec{Dequantize: dequantizeQ2_0, QuantizeRef: quantizeQ2_0Ref, QR: QR2_0, QI: QI2_0})
	register(TQ1_0, Codec{Dequantize: dequantizeTQ1_0, QuantizeRef: quantizeTQ1_0Ref})
	register(TQ2_0, Codec{Dequantize: dequantizeTQ2_0, QuantizeRef: quantizeTQ2_0Ref})
}
