package quant

import "github.com/ggsim/ggsim/f16"

// The i-quants IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S, IQ1_S and IQ1_M: block views,
// kernel constants and dequantization bit-exact with ggml's dequantize_row_* (ggml-quants.c
// at d99724f2b141, compiled for x86-64 without FMA). ggsim has no quantizer for them
// (Codec.QuantizeRef is nil): ggml's quantize_iq2_xxs, quantize_iq2_xs and quantize_iq1_s
// require an importance matrix (they GGML_ASSERT one), and all seven search the grids with
// neighbour tables built at run time by iq2xs_init_impl / iq3xs_init_impl, which ggsim
// does not port.
//
// A block view is a []byte of exactly one block (Traits().TypeSize bytes); its accessors
// read the fields in place, little-endian, without copying. The <T>Block(row, i) functions
// return block i of a row. A shorter slice makes an accessor panic (index out of range).

// Kernel constants (ggml-common.h, GGML_COMMON_DECL_CUDA): QR values per quant position
// and QI 32-bit ints of quant data per block, QI = QK_K/(4*QR).
const (
	QR2_XXS = 4
	QI2_XXS = 256 / (4 * QR2_XXS)
	QR2_XS  = 4
	QI2_XS  = 256 / (4 * QR2_XS)
	QR2_S   = 4
	QI2_S   = 256 / (4 * QR2_S)
	QR3_XXS = 4
	QI3_XXS = 256 / (4 * QR3_XXS)
	QR3_S   = 4
	QI3_S   = 256 / (4 * QR3_S)
	QR1_S   = 8
	QI1_S   = 256 / (4 * QR1_S)
	QR1_M   = 8
	QI1_M   = 256 / (4 * QR1_M)
)

// Block sizes in bytes (sizeof(block_*)).
const (
	sizeIQ2_XXS = 66
	sizeIQ2_XS  = 74
	sizeIQ2_S   = 82
	sizeIQ3_XXS = 98
	sizeIQ3_S   = 110
	sizeIQ1_S   = 50
	sizeIQ1_M   = 56
)

// BlockIQ2_XXS is a view of a block_iq2_xxs (66 bytes, 256 values):
// d half (offset 0), qs[32] uint16 (offset 2). Each group of 32 values owns qs[4g..4g+3]
// = two uint32 aux0, aux1: byte l of aux0 is the iq2xxs_grid index of values 8l..8l+7,
// bits 7l..7l+6 of aux1 their sign group (ksigns_iq2xs), aux1>>28 the group's 4-bit scale.
type BlockIQ2_XXS []byte

// IQ2_XXSBlock returns block i of an IQ2_XXS row. It panics if the block is outside row.
func IQ2_XXSBlock(row []byte, i int) BlockIQ2_XXS {
	return BlockIQ2_XXS(blockAt(IQ2_XXS, row, sizeIQ2_XXS, i))
}

// D returns the block scale.
func (b BlockIQ2_XXS) D() f16.Half { return f16.Half(le16(b[0:])) }

// Qs returns qs[i], i < 32.
func (b BlockIQ2_XXS) Qs(i int) uint16 { return le16(b[2+2*i:]) }

// QsBytes returns the 64 bytes of qs.
func (b BlockIQ2_XXS) QsBytes() []byte { return b[2:66:66] }

// BlockIQ2_XS is a view of a block_iq2_xs (74 bytes): d half (0), qs[32] uint16 (2),
// scales[8] (66). qs[i]&511 is the iq2xs_grid index of values 8i..8i+7 and qs[i]>>9 their
// sign group; scales[g] holds the 4-bit scales of values 32g..32g+15 (low nibble) and
// 32g+16..32g+31 (high nibble).
type BlockIQ2_XS []byte

// IQ2_XSBlock returns block i of an IQ2_XS row. It panics if the block is outside row.
func IQ2_XSBlock(row []byte, i int) BlockIQ2_XS {
	return BlockIQ2_XS(blockAt(IQ2_XS, row, sizeIQ2_XS, i))
}

// D returns the block scale.
func (b BlockIQ2_XS) D() f16.Half { return f16.Half(le16(b[0:])) }

// Qs returns qs[i], i < 32.
func (b BlockIQ2_XS) Qs(i int) uint16 { return le16(b[2+2*i:]) }

// QsBytes returns the 64 bytes of qs.
func (b BlockIQ2_XS) QsBytes() []byte { return b[2:66:66] }

// Scales returns scales[8].
func (b BlockIQ2_XS) Scales() []byte { return b[66:74:74] }

// BlockIQ2_S is a view of a block_iq2_s (82 bytes): d half (0), qs[64] (2), qh[8] (66),
// scales[8] (74). qs[0:32] are the low 8 bits of the iq2s_grid indices (one per 8 values),
// qs[32:64] the sign bytes (bit j = value j negative), qh[g] bits 2l..2l+1 the high index
// bits of group l of 32-value group g; scales as IQ2_XS.
type BlockIQ2_S []byte

// IQ2_SBlock returns block i of an IQ2_S row. It panics if the block is outside row.
func IQ2_SBlock(row []byte, i int) BlockIQ2_S { return BlockIQ2_S(blockAt(IQ2_S, row, sizeIQ2_S, i)) }

// D returns the block scale.
func (b BlockIQ2_S) D() f16.Half { return f16.Half(le16(b[0:])) }

// Qs returns the 64 bytes of qs (32 grid-index bytes, then 32 sign bytes).
func (b BlockIQ2_S) Qs() []byte { return b[2:66:66] }

// Qh returns qh[8].
func (b BlockIQ2_S) Qh() []byte { return b[66:74:74] }

// Scales returns scales[8].
func (b BlockIQ2_S) Scales() []byte { return b[74:82:82] }

// BlockIQ3_XXS is a view of a block_iq3_xxs (98 bytes): d half (0), qs[96] (2). qs[0:64]
// are iq3xxs_grid indices (one per 4 values); qs[64:96] are 8 uint32 "scales and signs",
// one per 32 values: bits 7l..7l+6 the sign group of values 8l..8l+7, bits 28..31 the scale.
type BlockIQ3_XXS []byte

// IQ3_XXSBlock returns block i of an IQ3_XXS row. It panics if the block is outside row.
func IQ3_XXSBlock(row []byte, i int) BlockIQ3_XXS {
	return BlockIQ3_XXS(blockAt(IQ3_XXS, row, sizeIQ3_XXS, i))
}

// D returns the block scale.
func (b BlockIQ3_XXS) D() f16.Half { return f16.Half(le16(b[0:])) }

// Qs returns the 96 bytes of qs (64 grid indices, then 32 bytes of scales and signs).
func (b BlockIQ3_XXS) Qs() []byte { return b[2:98:98] }

// ScalesAndSigns returns the uint32 of scale and signs of 32-value group g, g < 8.
func (b BlockIQ3_XXS) ScalesAndSigns(g int) uint32 { return le32(b[2+64+4*g:]) }

// BlockIQ3_S is a view of a block_iq3_s (110 bytes): d half (0), qs[64] (2), qh[8] (66),
// signs[32] (74), scales[4] (106). Value group of 4 number k (k < 64) has iq3s_grid index
// qs[k] | ((qh[k/8]>>(k%8))&1)<<8; signs[k/2] bit j is the sign of value 8(k/2)+j;
// scales[s] holds the 4-bit scales of values 64s..64s+31 (low) and 64s+32..64s+63 (high).
type BlockIQ3_S []byte

// IQ3_SBlock returns block i of an IQ3_S row. It panics if the block is outside row.
func IQ3_SBlock(row []byte, i int) BlockIQ3_S { return BlockIQ3_S(blockAt(IQ3_S, row, sizeIQ3_S, i)) }

// D returns the block scale.
func (b BlockIQ3_S) D() f16.Half { return f16.Half(le16(b[0:])) }

// Qs returns qs[64].
func (b BlockIQ3_S) Qs() []byte { return b[2:66:66] }

// Qh returns qh[8].
func (b BlockIQ3_S) Qh() []byte { return b[66:74:74] }

// Signs returns signs[32].
func (b BlockIQ3_S) Signs() []byte { return b[74:106:106] }

// Scales returns scales[4].
func (b BlockIQ3_S) Scales() []byte { return b[106:110:110] }

// BlockIQ1_S is a view of a block_iq1_s (50 bytes): d half (0), qs[32] (2), qh[8] uint16
// (34). Value group of 8 number 4g+l has iq1s_grid index qs[4g+l] | ((qh[g]>>3l)&7)<<8;
// qh[g] bits 12..14 are the 3-bit scale of 32-value group g and bit 15 the sign of its
// delta (set: -IQ1S_DELTA).
type BlockIQ1_S []byte

// IQ1_SBlock returns block i of an IQ1_S row. It panics if the block is outside row.
func IQ1_SBlock(row []byte, i int) BlockIQ1_S { return BlockIQ1_S(blockAt(IQ1_S, row, sizeIQ1_S, i)) }

// D returns the block scale.
func (b BlockIQ1_S) D() f16.Half { return f16.Half(le16(b[0:])) }

// Qs returns qs[32].
func (b BlockIQ1_S) Qs() []byte { return b[2:34:34] }

// Qh returns qh[g], g < 8.
func (b BlockIQ1_S) Qh(g int) uint16 { return le16(b[34+2*g:]) }

// BlockIQ1_M is a view of a block_iq1_m (56 bytes): qs[32] (0), qh[16] (32), scales[8]
// (48); it has no d field: the block scale is a half spread over the top nibbles of the
// four uint16 of scales (see D). Value group of 8 number 4g+l has iq1s_grid index
// qs[4g+l] | ((qh[2g+l/2] >> 4(l%2))&7)<<8 and delta sign bit 3 of that nibble;
// the 3-bit scales of the two 16-value halves of group g are bits 6(g%2)..+2 and
// 6(g%2)+3..+5 of the uint16 sc[g/2].
type BlockIQ1_M []byte

// IQ1_MBlock returns block i of an IQ1_M row. It panics if the block is outside row.
func IQ1_MBlock(row []byte, i int) BlockIQ1_M { return BlockIQ1_M(blockAt(IQ1_M, row, sizeIQ1_M, i)) }

// Qs returns qs[32].
func (b BlockIQ1_M) Qs() []byte { return b[0:32:32] }

// Qh returns qh[16].
func (b BlockIQ1_M) Qh() []byte { return b[32:48:48] }

// Scales returns the 8 bytes of scales.
func (b BlockIQ1_M) Scales() []byte { return b[48:56:56] }

// Sc returns the uint16 sc[i] = scales[2i] | scales[2i+1]<<8, i < 4.
func (b BlockIQ1_M) Sc(i int) uint16 { return le16(b[48+2*i:]) }

// D returns the block scale (iq1m_scale_t): the half with bits
// sc[0]>>12 | (sc[1]>>8)&0x00f0 | (sc[2]>>4)&0x0f00 | sc[3]&0xf000.
func (b BlockIQ1_M) D() f16.Half {
	return f16.Half(b.Sc(0)>>12 | (b.Sc(1)>>8)&0x00f0 | (b.Sc(2)>>4)&0x0f00 | b.Sc(3)&0xf000)
}

// signed returns v, or -v when neg: ggml's C writes x * (neg ? -1.f : 1.f), which gcc
// compiles to a sign flip (not a multiplication), so a NaN's sign is flipped too. The
// difference from a multiplication shows only for NaN; it was checked against ggml-base
// built with gcc 12 -O3 on x86-64.
func signed(v float32, neg bool) float32 {
	if neg {
		return -v
	}
	return v
}

// dequantizeIQ2XXS is dequantize_row_iq2_xxs: for each group of 32 values,
// db = (d * (0.5 + float(aux1>>28))) * 0.25 and y = ±(db * grid).
func dequantizeIQ2XXS(src []byte, dst []float32) {
	for i := 0; i < len(dst)/256; i++ {
		b := IQ2_XXSBlock(src, i)
		d := fp16ToFP32(b.D())
		y := dst[i*256 : (i+1)*256]
		for ib32 := 0; ib32 < 8; ib32++ {
			aux0 := le32(b[2+8*ib32:])
			aux1 := le32(b[2+8*ib32+4:])
			db := float32(d*(0.5+float32(aux1>>28))) * 0.25
			for l := 0; l < 4; l++ {
				grid := iq2xxsGrid[uint8(aux0>>(8*l))]
				signs := ksignsIQ2XS[(aux1>>(7*l))&127]
				for j := 0; j < 8; j++ {
					y[8*l+j] = signed(db*float32(uint8(grid>>(8*j))), signs&kmaskIQ2XS[j] != 0)
				}
			}
			y = y[32:]
		}
	}
}

// dequantizeIQ2XS is dequantize_row_iq2_xs: db[h] = (d * (0.5 + float(scale nibble h)))
// * 0.25 for the two halves of each group of 32, y = ±(db * grid).
func dequantizeIQ2XS(src []byte, dst []float32) {
	for i := 0; i < len(dst)/256; i++ {
		b := IQ2_XSBlock(src, i)
		d := fp16ToFP32(b.D())
		sc := b.Scales()
		y := dst[i*256 : (i+1)*256]
		for ib32 := 0; ib32 < 8; ib32++ {
			var db [2]float32
			db[0] = float32(d*(0.5+float32(sc[ib32]&0xf))) * 0.25
			db[1] = float32(d*(0.5+float32(sc[ib32]>>4))) * 0.25
			for l := 0; l < 4; l++ {
				q := b.Qs(4*ib32 + l)
				grid := iq2xsGrid[q&511]
				signs := ksignsIQ2XS[q>>9]
				for j := 0; j < 8; j++ {
					y[8*l+j] = signed(db[l/2]*float32(uint8(grid>>(8*j))), signs&kmaskIQ2XS[j] != 0)
				}
			}
			y = y[32:]
		}
	}
}

// dequantizeIQ2S is dequantize_row_iq2_s: scales as IQ2_XS, grid index
// qs[l] | (qh[ib32] << (8-2l)) & 0x300, signs from the second half of qs.
func dequantizeIQ2S(src []byte, dst []float32) {
	for i := 0; i < len(dst)/256; i++ {
		b := IQ2_SBlock(src, i)
		d := fp16ToFP32(b.D())
		qs := b.Qs()
		qh := b.Qh()
		sc := b.Scales()
		y := dst[i*256 : (i+1)*256]
		for ib32 := 0; ib32 < 8; ib32++ {
			var db [2]float32
			db[0] = float32(d*(0.5+float32(sc[ib32]&0xf))) * 0.25
			db[1] = float32(d*(0.5+float32(sc[ib32]>>4))) * 0.25
			for l := 0; l < 4; l++ {
				dl := db[l/2]
				idx := int(qs[4*ib32+l]) | (int(qh[ib32])<<(8-2*l))&0x300
				grid := iq2sGrid[idx]
				signs := qs[32+4*ib32+l]
				for j := 0; j < 8; j++ {
					y[8*l+j] = signed(dl*float32(uint8(grid>>(8*j))), signs&kmaskIQ2XS[j] != 0)
				}
			}
			y = y[32:]
		}
	}
}

// dequantizeIQ3XXS is dequantize_row_iq3_xxs: db = (d * (0.5 + float(aux>>28))) * 0.5,
// y = ±(db * grid), two iq3xxs_grid entries of 4 values per sign group.
func dequantizeIQ3XXS(src []byte, dst []float32) {
	for i := 0; i < len(dst)/256; i++ {
		b := IQ3_XXSBlock(src, i)
		d := fp16ToFP32(b.D())
		qs := b.Qs()
		y := dst[i*256 : (i+1)*256]
		for ib32 := 0; ib32 < 8; ib32++ {
			aux := b.ScalesAndSigns(ib32)
			db := float32(d*(0.5+float32(aux>>28))) * 0.5
			for l := 0; l < 4; l++ {
				signs := ksignsIQ2XS[(aux>>(7*l))&127]
				grid1 := iq3xxsGrid[qs[8*ib32+2*l]]
				grid2 := iq3xxsGrid[qs[8*ib32+2*l+1]]
				for j := 0; j < 4; j++ {
					y[8*l+j] = signed(db*float32(uint8(grid1>>(8*j))), signs&kmaskIQ2XS[j] != 0)
					y[8*l+j+4] = signed(db*float32(uint8(grid2>>(8*j))), signs&kmaskIQ2XS[j+4] != 0)
				}
			}
			y = y[32:]
		}
	}
}

// dequantizeIQ3S is dequantize_row_iq3_s: per pair of 32-value groups,
// db1 = d * float(1 + 2*(scale&0xf)), db2 = d * float(1 + 2*(scale>>4)),
// y = ±(db * grid).
func dequantizeIQ3S(src []byte, dst []float32) {
	for i := 0; i < len(dst)/256; i++ {
		b := IQ3_SBlock(src, i)
		d := fp16ToFP32(b.D())
		qs := b.Qs()
		qh := b.Qh()
		signs := b.Signs()
		sc := b.Scales()
		y := dst[i*256 : (i+1)*256]
		for ib32 := 0; ib32 < 8; ib32 += 2 {
			db := [2]float32{
				d * float32(1+2*int(sc[ib32/2]&0xf)),
				d * float32(1+2*int(sc[ib32/2]>>4)),
			}
			for h := 0; h < 2; h++ {
				h8 := int(qh[h])
				for l := 0; l < 4; l++ {
					grid1 := iq3sGrid[int(qs[2*l])|(h8<<(8-2*l))&256]
					grid2 := iq3sGrid[int(qs[2*l+1])|(h8<<(7-2*l))&256]
					for j := 0; j < 4; j++ {
						y[8*l+j] = signed(db[h]*float32(uint8(grid1>>(8*j))), signs[l]&kmaskIQ2XS[j] != 0)
						y[8*l+j+4] = signed(db[h]*float32(uint8(grid2>>(8*j))), signs[l]&kmaskIQ2XS[j+4] != 0)
					}
				}
				y = y[32:]
				qs = qs[8:]
				signs = signs[4:]
			}
			qh = qh[2:]
		}
	}
}

// dequantizeIQ1S is dequantize_row_iq1_s: dl = d * float(2*((qh>>12)&7) + 1),
// delta = ±IQ1S_DELTA by qh bit 15, y = dl * (float(grid value) + delta).
func dequantizeIQ1S(src []byte, dst []float32) {
	for i := 0; i < len(dst)/256; i++ {
		b := IQ1_SBlock(src, i)
		d := fp16ToFP32(b.D())
		qs := b.Qs()
		y := dst[i*256 : (i+1)*256]
		for ib := 0; ib < 8; ib++ {
			qh := b.Qh(ib)
			dl := d * float32(2*int((qh>>12)&7)+1)
			delta := iq1sDelta
			if qh&0x8000 != 0 {
				delta = -iq1sDelta
			}
			for l := 0; l < 4; l++ {
				grid := iq1sGrid[int(qs[4*ib+l])|int((qh>>(3*l))&7)<<8]
				for j := 0; j < 8; j++ {
					y[8*l+j] = dl * (float32(int8(grid>>(8*j))) + delta)
				}
			}
			y = y[32:]
		}
	}
}

// dequantizeIQ1M is dequantize_row_iq1_m: d from the scattered half (BlockIQ1_M.D),
// dl1, dl2 = d * float(2*s+1) for the 3-bit scales of the two halves of each group of 32,
// y = dl * (float(grid value) + delta), delta = ±IQ1M_DELTA by bit 3 of the index nibble
// (ggml's C uses IQ1S_DELTA here; both are 0.125).
func dequantizeIQ1M(src []byte, dst []float32) {
	for i := 0; i < len(dst)/256; i++ {
		b := IQ1_MBlock(src, i)
		d := fp16ToFP32(b.D())
		qs := b.Qs()
		qh := b.Qh()
		y := dst[i*256 : (i+1)*256]
		for ib := 0; ib < 8; ib++ {
			sc := int(b.Sc(ib / 2))
			dl1 := d * float32(2*((sc>>(6*(ib%2)+0))&0x7)+1)
			dl2 := d * float32(2*((sc>>(6*(ib%2)+3))&0x7)+1)
			q, h := qs[4*ib:4*ib+4], qh[2*ib:2*ib+2]
			idx := [4]int{
				int(q[0]) | (int(h[0])<<8)&0x700,
				int(q[1]) | (int(h[0])<<4)&0x700,
				int(q[2]) | (int(h[1])<<8)&0x700,
				int(q[3]) | (int(h[1])<<4)&0x700,
			}
			neg := [4]bool{h[0]&0x08 != 0, h[0]&0x80 != 0, h[1]&0x08 != 0, h[1]&0x80 != 0}
			for l := 0; l < 4; l++ {
				dl := dl1
				if l >= 2 {
					dl = dl2
				}
				delta := iq1sDelta
				if neg[l] {
					delta = -iq1sDelta
				}
				grid := iq1sGrid[idx[l]]
				for j := 0; j < 8; j++ {
					y[8*l+j] = dl * (float32(int8(grid>>(8*j))) + delta)
				}
			}
			y = y[32:]
		}
	}
}

func init() {
	register(IQ2_XXS, Codec{Dequantize: dequantizeIQ2XXS, QR: QR2_XXS, QI: QI2_XXS})
	register(IQ2_XS, Codec{Dequantize: dequantizeIQ2XS, QR: QR2_XS, QI: QI2_XS})
	register(IQ2_S, Codec{Dequantize: dequantizeIQ2S, QR: QR2_S, QI: QI2_S})
	register(IQ3_XXS, Codec{Dequantize: dequantizeIQ3XXS, QR: QR3_XXS, QI: QI3_XXS})
	register(IQ3_S, Codec{Dequantize: dequantizeIQ3S, QR: QR3_S, QI: QI3_S})
	register(IQ1_S, Codec{Dequantize: dequantizeIQ1S, QR: QR1_S, QI: QI1_S})
	register(IQ1_M, Codec{Dequantize: dequantizeIQ1M, QR: QR1_M, QI: QI1_M})
}
