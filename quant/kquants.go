package quant

import (
	"fmt"
	"math"

	"github.com/ggsim/ggsim/f16"
)

// K-quants (Q2_K..Q6_K, Q8_K) and IQ4_XS: super-blocks of QK_K = 256 values.
//
// Layouts are ggml-common.h at ggml commit d99724f2b141 (packed, little-endian,
// ggml_half = binary16). Each block type below is a []byte view of exactly one block:
// its accessors return sub-slices of the same memory (no copies), so a kernel emulation
// can read the bytes the GPU reads. Dequantization is ggml's dequantize_row_* with its
// float32 operation order; see kquants_ref.go for the reference quantizers.

// Super-block constants (ggml-common.h).
const (
	QK_K       = 256 // values per super-block
	kScaleSize = 12  // bytes of packed 6-bit scales and mins in Q4_K and Q5_K
)

// Kernel constants (ggml-common.h): QR is the number of values per byte-lane position,
// QI = QK_K/(4*QR) the number of 32-bit ints of quant data per block as the CUDA dot
// products count them. Q8_K has none: it exists on the CPU only.
const (
	QR2_K  = 4
	QI2_K  = QK_K / (4 * QR2_K)
	QR3_K  = 4
	QI3_K  = QK_K / (4 * QR3_K)
	QR4_K  = 2
	QI4_K  = QK_K / (4 * QR4_K)
	QR5_K  = 2
	QI5_K  = QK_K / (4 * QR5_K)
	QR6_K  = 2
	QI6_K  = QK_K / (4 * QR6_K)
	QR4_XS = 2
	QI4_XS = QK_K / (4 * QR4_XS)
)

// Block sizes in bytes (sizeof(block_*)).
const (
	sizeQ2_K   = 84
	sizeQ3_K   = 110
	sizeQ4_K   = 144
	sizeQ5_K   = 176
	sizeQ6_K   = 210
	sizeQ8_K   = 292
	sizeIQ4_XS = 136
)

// blockView returns block i of row as a slice of exactly size bytes whose capacity ends
// with the block, so that appends or re-slicing cannot reach the next block. It panics if
// the row is too short (a programming error: callers size rows with Type.RowSize).
func blockView(row []byte, i, size int) []byte {
	lo := i * size
	hi := lo + size
	if i < 0 || hi > len(row) {
		panic(fmt.Sprintf("quant: block %d of %d bytes is outside a row of %d bytes", i, size, len(row)))
	}
	return row[lo:hi:hi]
}

// ---------------------------------------------------------------------------------------
// Q2_K

// BlockQ2_K is a view of one block_q2_K (84 bytes):
//
//	scales[16]  low nibble: 4-bit scale, high nibble: 4-bit min, of each 16 values
//	qs[64]      2-bit quants
//	d, dmin     binary16 (the half2 dm)
//
// Value i (0..255) of the block: n = i/128, j = (i%128)/32, l = i%32,
// q = (qs[32n+l] >> 2j) & 3, sub-block s = i/16 (natural order),
// x = d*(scales[s]&15)*q - dmin*(scales[s]>>4).
type BlockQ2_K []byte

// Q2_KBlock returns block i of a Q2_K row. It panics if the row has no block i.
func Q2_KBlock(row []byte, i int) BlockQ2_K { return BlockQ2_K(blockView(row, i, sizeQ2_K)) }

// Scales returns the 16 packed scale/min bytes.
func (b BlockQ2_K) Scales() []byte { return b[0:16:16] }

// Qs returns the 64 bytes of 2-bit quants.
func (b BlockQ2_K) Qs() []byte { return b[16:80:80] }

// DM returns the super-block scale d and the super-block min scale dmin.
func (b BlockQ2_K) DM() (d, dmin f16.Half) { return f16.Half(le16(b[80:])), f16.Half(le16(b[82:])) }

// ScaleMin returns the 4-bit scale and 4-bit min of sub-block s (0..15, 16 values each).
func (b BlockQ2_K) ScaleMin(s int) (sc, m uint8) { return b[s] & 0xF, b[s] >> 4 }

// Q returns the 2-bit quant (0..3) of value i (0..255) of the block.
func (b BlockQ2_K) Q(i int) uint8 {
	n, j, l := i/128, (i%128)/32, i%32
	return (b[16+32*n+l] >> (2 * j)) & 3
}

// dequantizeQ2_K is dequantize_row_q2_K: per 16 values dl = d*(sc&15), ml = dmin*(sc>>4),
// y = dl*q - ml, each product rounded to float32.
func dequantizeQ2_K(src []byte, dst []float32) {
	nb := len(dst) / QK_K
	for i := 0; i < nb; i++ {
		b := Q2_KBlock(src, i)
		dh, mh := b.DM()
		d := fp16ToFP32(dh)
		min := fp16ToFP32(mh)
		y := dst[i*QK_K : (i+1)*QK_K]
		q := b.Qs()
		sc := b.Scales()
		is := 0
		k := 0
		for n := 0; n < QK_K; n += 128 {
			shift := 0
			for j := 0; j < 4; j++ {
				s := sc[is]
				is++
				dl := float32(d * float32(s&0xF))
				ml := float32(min * float32(s>>4))
				for l := 0; l < 16; l++ {
					y[k] = float32(dl*float32((q[l]>>shift)&3)) - ml
					k++
				}
				s = sc[is]
				is++
				dl = float32(d * float32(s&0xF))
				ml = float32(min * float32(s>>4))
				for l := 0; l < 16; l++ {
					y[k] = float32(dl*float32((q[l+16]>>shift)&3)) - ml
					k++
				}
				shift += 2
			}
			q = q[32:]
		}
	}
}

// ---------------------------------------------------------------------------------------
// Q3_K

// BlockQ3_K is a view of one block_q3_K (110 bytes):
//
//	hmask[32]   high (third) bit of each quant: value i uses bit i/32 of hmask[i%32]
//	qs[64]      low 2 bits, laid out as Q2_K's
//	scales[12]  16 6-bit scales, biased by 32 (see Scale)
//	d           binary16
//
// x = d*(scale-32)*(q - 4*(1-hbit)), q the low 2 bits.
type BlockQ3_K []byte

// Q3_KBlock returns block i of a Q3_K row. It panics if the row has no block i.
func Q3_KBlock(row []byte, i int) BlockQ3_K { return BlockQ3_K(blockView(row, i, sizeQ3_K)) }

// HMask returns the 32 bytes of high bits.
func (b BlockQ3_K) HMask() []byte { return b[0:32:32] }

// Qs returns the 64 bytes of low 2-bit quants.
func (b BlockQ3_K) Qs() []byte { return b[32:96:96] }

// Scales returns the 12 bytes of packed 6-bit scales.
func (b BlockQ3_K) Scales() []byte { return b[96:108:108] }

// D returns the super-block scale.
func (b BlockQ3_K) D() f16.Half { return f16.Half(le16(b[108:])) }

// Scale returns the signed 6-bit scale of sub-block s (0..15), in -32..31: the low 4 bits
// are nibble s%8 of scales[0..7] (low nibble for s < 8, high for s >= 8) and the high 2
// bits are bits 2(s/4)..2(s/4)+1 of scales[8+s%4]; the stored value is biased by 32.
func (b BlockQ3_K) Scale(s int) int8 {
	sc := b[96:108:108]
	var lo uint8
	if s < 8 {
		lo = sc[s] & 0xF
	} else {
		lo = sc[s-8] >> 4
	}
	hi := (sc[8+s%4] >> (2 * (s / 4))) & 3
	return int8(lo|hi<<4) - 32
}

// Q returns the signed 3-bit quant (-4..3) of value i (0..255) of the block.
func (b BlockQ3_K) Q(i int) int8 {
	n, j, l := i/128, (i%128)/32, i%32
	q := int8((b[32+32*n+l] >> (2 * j)) & 3)
	if b[l]&(1<<(4*n+j)) == 0 {
		q -= 4
	}
	return q
}

// q3KScales unpacks the 16 6-bit scales as dequantize_row_q3_K does (kmask1/kmask2 on
// 32-bit words), still biased by 32.
func q3KScales(packed []byte) (s [16]int8) {
	const kmask1, kmask2 = 0x03030303, 0x0f0f0f0f
	a0, a1, tmp := le32(packed[0:]), le32(packed[4:]), le32(packed[8:])
	aux := [4]uint32{
		(a0 & kmask2) | (((tmp >> 0) & kmask1) << 4),
		(a1 & kmask2) | (((tmp >> 2) & kmask1) << 4),
		((a0 >> 4) & kmask2) | (((tmp >> 4) & kmask1) << 4),
		((a1 >> 4) & kmask2) | (((tmp >> 6) & kmask1) << 4),
	}
	for k := 0; k < 16; k++ {
		s[k] = int8(aux[k/4] >> (8 * (k % 4)))
	}
	return s
}

// dequantizeQ3_K is dequantize_row_q3_K: dl = d*(scale-32), y = dl*q with q in -4..3.
func dequantizeQ3_K(src []byte, dst []float32) {
	nb := len(dst) / QK_K
	for i := 0; i < nb; i++ {
		b := Q3_KBlock(src, i)
		dAll := fp16ToFP32(b.D())
		scales := q3KScales(b.Scales())
		q := b.Qs()
		hm := b.HMask()
		y := dst[i*QK_K : (i+1)*QK_K]
		m := uint8(1)
		is := 0
		k := 0
		for n := 0; n < QK_K; n += 128 {
			shift := 0
			for j := 0; j < 4; j++ {
				dl := dAll * float32(int(scales[is])-32)
				is++
				for l := 0; l < 16; l++ {
					v := int((q[l]>>shift)&3) - q3Hi(hm[l], m)
					y[k] = dl * float32(v)
					k++
				}
				dl = dAll * float32(int(scales[is])-32)
				is++
				for l := 0; l < 16; l++ {
					v := int((q[l+16]>>shift)&3) - q3Hi(hm[l+16], m)
					y[k] = dl * float32(v)
					k++
				}
				shift += 2
				m <<= 1
			}
			q = q[32:]
		}
	}
}

// q3Hi is 0 if the high bit m is set in h, else 4.
func q3Hi(h, m uint8) int {
	if h&m != 0 {
		return 0
	}
	return 4
}

// ---------------------------------------------------------------------------------------
// Q4_K and Q5_K share the 12-byte packing of eight 6-bit scales and mins.

// getScaleMinK4 is get_scale_min_k4: the 6-bit scale and min of sub-block j (0..7) from
// the 12 packed bytes q.
func getScaleMinK4(j int, q []byte) (d, m uint8) {
	if j < 4 {
		return q[j] & 63, q[j+4] & 63
	}
	return (q[j+4] & 0xF) | ((q[j-4] >> 6) << 4), (q[j+4] >> 4) | ((q[j] >> 6) << 4)
}

// BlockQ4_K is a view of one block_q4_K (144 bytes):
//
//	d, dmin     binary16 (the half2 dm)
//	scales[12]  eight 6-bit scales and eight 6-bit mins (see ScaleMin)
//	qs[128]     4 chunks of 32 bytes: byte l of chunk c holds value 64c+l in its low
//	            nibble and value 64c+32+l in its high nibble
//
// Sub-block j = i/32 of value i: x = d*sc_j*q - dmin*m_j.
type BlockQ4_K []byte

// Q4_KBlock returns block i of a Q4_K row. It panics if the row has no block i.
func Q4_KBlock(row []byte, i int) BlockQ4_K { return BlockQ4_K(blockView(row, i, sizeQ4_K)) }

// DM returns the super-block scale d and min scale dmin.
func (b BlockQ4_K) DM() (d, dmin f16.Half) { return f16.Half(le16(b[0:])), f16.Half(le16(b[2:])) }

// Scales returns the 12 packed scale/min bytes.
func (b BlockQ4_K) Scales() []byte { return b[4:16:16] }

// Qs returns the 128 bytes of 4-bit quants.
func (b BlockQ4_K) Qs() []byte { return b[16:144:144] }

// ScaleMin returns the 6-bit scale and min of sub-block j (0..7), as get_scale_min_k4:
// j < 4: sc = q[j]&63, m = q[j+4]&63; j >= 4: sc = q[j+4]&15 | (q[j-4]>>6)<<4,
// m = q[j+4]>>4 | (q[j]>>6)<<4, with q = Scales().
func (b BlockQ4_K) ScaleMin(j int) (sc, m uint8) { return getScaleMinK4(j, b[4:16:16]) }

// Q returns the 4-bit quant (0..15) of value i (0..255) of the block.
func (b BlockQ4_K) Q(i int) uint8 {
	c, h, l := i/64, (i%64)/32, i%32
	return (b[16+32*c+l] >> (4 * h)) & 0xF
}

// dequantizeQ4_K is dequantize_row_q4_K: d1 = d*sc, m1 = dmin*m, y = d1*q - m1.
func dequantizeQ4_K(src []byte, dst []float32) {
	nb := len(dst) / QK_K
	for i := 0; i < nb; i++ {
		b := Q4_KBlock(src, i)
		dh, mh := b.DM()
		d := fp16ToFP32(dh)
		min := fp16ToFP32(mh)
		q := b.Qs()
		y := dst[i*QK_K : (i+1)*QK_K]
		is := 0
		for j := 0; j < QK_K; j += 64 {
			sc, m := b.ScaleMin(is + 0)
			d1 := float32(d * float32(sc))
			m1 := float32(min * float32(m))
			sc, m = b.ScaleMin(is + 1)
			d2 := float32(d * float32(sc))
			m2 := float32(min * float32(m))
			for l := 0; l < 32; l++ {
				y[j+l] = float32(d1*float32(q[l]&0xF)) - m1
			}
			for l := 0; l < 32; l++ {
				y[j+32+l] = float32(d2*float32(q[l]>>4)) - m2
			}
			q = q[32:]
			is += 2
		}
	}
}

// BlockQ5_K is a view of one block_q5_K (176 bytes):
//
//	d, dmin     binary16
//	scales[12]  as Q4_K
//	qh[32]      fifth bits: value 64c+l uses bit 2c of qh[l], value 64c+32+l bit 2c+1
//	qs[128]     low 4 bits, laid out as Q4_K's
//
// x = d*sc_j*q - dmin*m_j with q in 0..31.
type BlockQ5_K []byte

// Q5_KBlock returns block i of a Q5_K row. It panics if the row has no block i.
func Q5_KBlock(row []byte, i int) BlockQ5_K { return BlockQ5_K(blockView(row, i, sizeQ5_K)) }

// DM returns the super-block scale d and min scale dmin.
func (b BlockQ5_K) DM() (d, dmin f16.Half) { return f16.Half(le16(b[0:])), f16.Half(le16(b[2:])) }

// Scales returns the 12 packed scale/min bytes.
func (b BlockQ5_K) Scales() []byte { return b[4:16:16] }

// Qh returns the 32 bytes of fifth bits.
func (b BlockQ5_K) Qh() []byte { return b[16:48:48] }

// Qs returns the 128 bytes of low 4-bit quants.
func (b BlockQ5_K) Qs() []byte { return b[48:176:176] }

// ScaleMin returns the 6-bit scale and min of sub-block j (0..7), as for Q4_K.
func (b BlockQ5_K) ScaleMin(j int) (sc, m uint8) { return getScaleMinK4(j, b[4:16:16]) }

// Q returns the 5-bit quant (0..31) of value i (0..255) of the block.
func (b BlockQ5_K) Q(i int) uint8 {
	c, h, l := i/64, (i%64)/32, i%32
	lo := (b[48+32*c+l] >> (4 * h)) & 0xF
	hi := (b[16+l] >> (2*c + h)) & 1
	return lo | hi<<4
}

// dequantizeQ5_K is dequantize_row_q5_K: d1 = d*sc, m1 = dmin*m, y = d1*q - m1.
func dequantizeQ5_K(src []byte, dst []float32) {
	nb := len(dst) / QK_K
	for i := 0; i < nb; i++ {
		b := Q5_KBlock(src, i)
		dh, mh := b.DM()
		d := fp16ToFP32(dh)
		min := fp16ToFP32(mh)
		ql := b.Qs()
		qh := b.Qh()
		y := dst[i*QK_K : (i+1)*QK_K]
		is := 0
		u1, u2 := uint8(1), uint8(2)
		for j := 0; j < QK_K; j += 64 {
			sc, m := b.ScaleMin(is + 0)
			d1 := float32(d * float32(sc))
			m1 := float32(min * float32(m))
			sc, m = b.ScaleMin(is + 1)
			d2 := float32(d * float32(sc))
			m2 := float32(min * float32(m))
			for l := 0; l < 32; l++ {
				v := ql[l] & 0xF
				if qh[l]&u1 != 0 {
					v += 16
				}
				y[j+l] = float32(d1*float32(v)) - m1
			}
			for l := 0; l < 32; l++ {
				v := ql[l] >> 4
				if qh[l]&u2 != 0 {
					v += 16
				}
				y[j+32+l] = float32(d2*float32(v)) - m2
			}
			ql = ql[32:]
			is += 2
			u1 <<= 2
			u2 <<= 2
		}
	}
}

// ---------------------------------------------------------------------------------------
// Q6_K

// BlockQ6_K is a view of one block_q6_K (210 bytes):
//
//	ql[128]     low 4 bits
//	qh[64]      high 2 bits
//	scales[16]  int8 scale of each 16 values (natural order)
//	d           binary16
//
// In half n (values 128n..128n+127; ql += 64n, qh += 32n), for l in 0..31:
// v[l] = ql[l]&15 | (qh[l]&3)<<4, v[l+32] = ql[l+32]&15 | (qh[l]>>2&3)<<4,
// v[l+64] = ql[l]>>4 | (qh[l]>>4&3)<<4, v[l+96] = ql[l+32]>>4 | (qh[l]>>6&3)<<4;
// x = d*scales[i/16]*(v-32).
type BlockQ6_K []byte

// Q6_KBlock returns block i of a Q6_K row. It panics if the row has no block i.
func Q6_KBlock(row []byte, i int) BlockQ6_K { return BlockQ6_K(blockView(row, i, sizeQ6_K)) }

// Ql returns the 128 bytes of low 4 bits.
func (b BlockQ6_K) Ql() []byte { return b[0:128:128] }

// Qh returns the 64 bytes of high 2 bits.
func (b BlockQ6_K) Qh() []byte { return b[128:192:192] }

// Scales returns the 16 scale bytes (each an int8; see Scale).
func (b BlockQ6_K) Scales() []byte { return b[192:208:208] }

// Scale returns the signed 8-bit scale of sub-block s (0..15, 16 values each).
func (b BlockQ6_K) Scale(s int) int8 { return int8(b[192+s]) }

// D returns the super-block scale.
func (b BlockQ6_K) D() f16.Half { return f16.Half(le16(b[208:])) }

// Q returns the signed 6-bit quant (-32..31) of value i (0..255) of the block.
func (b BlockQ6_K) Q(i int) int8 {
	n, r := i/128, i%128
	g, l := r/32, r%32 // g: 0..3 selects (ql offset, nibble, qh shift)
	ql := b[64*n:]
	qh := b[128+32*n:]
	var lo uint8
	switch g {
	case 0:
		lo = ql[l] & 0xF
	case 1:
		lo = ql[l+32] & 0xF
	case 2:
		lo = ql[l] >> 4
	default:
		lo = ql[l+32] >> 4
	}
	hi := (qh[l] >> (2 * g)) & 3
	return int8(lo|hi<<4) - 32
}

// dequantizeQ6_K is dequantize_row_q6_K: y = (d*sc)*q, left to right.
func dequantizeQ6_K(src []byte, dst []float32) {
	nb := len(dst) / QK_K
	for i := 0; i < nb; i++ {
		b := Q6_KBlock(src, i)
		d := fp16ToFP32(b.D())
		ql := b.Ql()
		qh := b.Qh()
		sc := b.Scales()
		y := dst[i*QK_K : (i+1)*QK_K]
		for n := 0; n < QK_K; n += 128 {
			for l := 0; l < 32; l++ {
				is := l / 16
				q1 := int8((ql[l+0]&0xF)|(((qh[l]>>0)&3)<<4)) - 32
				q2 := int8((ql[l+32]&0xF)|(((qh[l]>>2)&3)<<4)) - 32
				q3 := int8((ql[l+0]>>4)|(((qh[l]>>4)&3)<<4)) - 32
				q4 := int8((ql[l+32]>>4)|(((qh[l]>>6)&3)<<4)) - 32
				y[n+l+0] = float32(d*float32(int8(sc[is+0]))) * float32(q1)
				y[n+l+32] = float32(d*float32(int8(sc[is+2]))) * float32(q2)
				y[n+l+64] = float32(d*float32(int8(sc[is+4]))) * float32(q3)
				y[n+l+96] = float32(d*float32(int8(sc[is+6]))) * float32(q4)
			}
			ql = ql[64:]
			qh = qh[32:]
			sc = sc[8:]
		}
	}
}

// ---------------------------------------------------------------------------------------
// Q8_K

// blockQ8_K is a view of one block_q8_K (292 bytes), ggml's CPU-only intermediate format:
//
//	d           float32
//	qs[256]     int8 quants
//	bsums[16]   int16 sum of each 16 quants
//
// x = d*q.
type blockQ8_K []byte

// q8KBlock returns block i of a Q8_K row. It panics if the row has no block i.
func q8KBlock(row []byte, i int) blockQ8_K { return blockQ8_K(blockView(row, i, sizeQ8_K)) }

// D returns the block scale (a float32, not a half).
func (b blockQ8_K) D() float32 { return math.Float32frombits(le32(b[0:])) }

// Qs returns the 256 quant bytes (each an int8; see Q).
func (b blockQ8_K) Qs() []byte { return b[4:260:260] }

// Q returns quant i (0..255).
func (b blockQ8_K) Q(i int) int8 { return int8(b[4+i]) }

// BSum returns the stored sum of quants 16g..16g+15 (g in 0..15).
func (b blockQ8_K) BSum(g int) int16 { return int16(le16(b[260+2*g:])) }

// dequantizeQ8_K is dequantize_row_q8_K: y = d*q.
func dequantizeQ8_K(src []byte, dst []float32) {
	nb := len(dst) / QK_K
	for i := 0; i < nb; i++ {
		b := q8KBlock(src, i)
		d := b.D()
		qs := b.Qs()
		y := dst[i*QK_K : (i+1)*QK_K]
		for j := 0; j < QK_K; j++ {
			y[j] = d * float32(int8(qs[j]))
		}
	}
}

// ---------------------------------------------------------------------------------------
// IQ4_XS

// BlockIQ4_XS is a view of one block_iq4_xs (136 bytes):
//
//	d           binary16
//	scales_h    uint16: bits 2ib..2ib+1 are the high 2 bits of sub-block ib's scale
//	scales_l[4] low 4 bits of the scales, two per byte (ib even: low nibble)
//	qs[128]     16 bytes per sub-block of 32: low nibble value j, high nibble value j+16
//
// Sub-block ib (0..7): dl = d*(ls-32), x = dl*kvalues_iq4nl[nibble].
type BlockIQ4_XS []byte

// IQ4_XSBlock returns block i of an IQ4_XS row. It panics if the row has no block i.
func IQ4_XSBlock(row []byte, i int) BlockIQ4_XS {
	return BlockIQ4_XS(blockView(row, i, sizeIQ4_XS))
}

// D returns the super-block scale.
func (b BlockIQ4_XS) D() f16.Half { return f16.Half(le16(b[0:])) }

// ScalesH returns the 16-bit word of high scale bits.
func (b BlockIQ4_XS) ScalesH() uint16 { return le16(b[2:]) }

// ScalesL returns the 4 bytes of low scale nibbles.
func (b BlockIQ4_XS) ScalesL() []byte { return b[4:8:8] }

// Qs returns the 128 bytes of 4-bit codes.
func (b BlockIQ4_XS) Qs() []byte { return b[8:136:136] }

// Ls returns the 6-bit scale (0..63, biased by 32) of sub-block ib (0..7):
// ((scales_l[ib/2] >> 4*(ib%2)) & 15) | ((scales_h >> 2*ib) & 3) << 4.
func (b BlockIQ4_XS) Ls(ib int) int {
	return int((b[4+ib/2]>>(4*(ib%2)))&0xF) | int((b.ScalesH()>>(2*ib))&3)<<4
}

// Code returns the 4-bit code (an index into KValuesIQ4NL) of value i (0..255).
func (b BlockIQ4_XS) Code(i int) uint8 {
	ib, j := i/32, i%32
	return (b[8+16*ib+j%16] >> (4 * (j / 16))) & 0xF
}

// dequantizeIQ4_XS is dequantize_row_iq4_xs: dl = d*(ls-32), y = dl*kvalues_iq4nl[code].
func dequantizeIQ4_XS(src []byte, dst []float32) {
	nb := len(dst) / QK_K
	for i := 0; i < nb; i++ {
		b := IQ4_XSBlock(src, i)
		d := fp16ToFP32(b.D())
		qs := b.Qs()
		y := dst[i*QK_K : (i+1)*QK_K]
		for ib := 0; ib < QK_K/32; ib++ {
			dl := d * float32(b.Ls(ib)-32)
			for j := 0; j < 16; j++ {
				y[j+0] = dl * float32(KValuesIQ4NL[qs[j]&0xF])
				y[j+16] = dl * float32(KValuesIQ4NL[qs[j]>>4])
			}
			y = y[32:]
			qs = qs[16:]
		}
	}
}

func init() {
	register(Q2_K, Codec{Dequantize: dequantizeQ2_K, QuantizeRef: quantizeQ2_KRef, QR: QR2_K, QI: QI2_K})
	register(Q3_K, Codec{Dequantize: dequantizeQ3_K, QuantizeRef: quantizeQ3_KRef, QR: QR3_K, QI: QI3_K})
	register(Q4_K, Codec{Dequantize: dequantizeQ4_K, QuantizeRef: quantizeQ4_KRef, QR: QR4_K, QI: QI4_K})
	register(Q5_K, Codec{Dequantize: dequantizeQ5_K, QuantizeRef: quantizeQ5_KRef, QR: QR5_K, QI: QI5_K})
	register(Q6_K, Codec{Dequantize: dequantizeQ6_K, QuantizeRef: quantizeQ6_KRef, QR: QR6_K, QI: QI6_K})
	register(Q8_K, Codec{Dequantize: dequantizeQ8_K, QuantizeRef: quantizeQ8_KRef})
	register(IQ4_XS, Codec{Dequantize: dequantizeIQ4_XS, QuantizeRef: quantizeIQ4_XSRef, QR: QR4_XS, QI: QI4_XS})
}
