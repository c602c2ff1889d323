package quant

import (
	"math"
)

// Reference quantizers of the K-quants and IQ4_XS: ports of ggml-quants.c at ggml commit
// d99724f2b141, byte-exact with ggml_quantize_chunk(type, ..., imatrix = NULL) as ggml-base
// computes it on x86-64 (SSE float32, no FMA contraction):
//
//	Q2_K   quantize_q2_K   -> quantize_row_q2_K_ref   (make_qkx2_quants, MAD weights |x|)
//	Q3_K   quantize_q3_K   -> quantize_row_q3_K_ref   (make_q3_quants with RMSE refinement)
//	Q4_K   quantize_q4_K   -> quantize_row_q4_K_ref   (make_qkx2_quants, weights av_x+|x|)
//	Q5_K   quantize_q5_K   -> quantize_row_q5_K_ref   (make_qkx2_quants, weights av_x+|x|)
//	Q6_K   quantize_q6_K   -> quantize_row_q6_K_ref   (make_qx_quants, rmse_type 1)
//	Q8_K   quantize_row_q8_K_ref (ggml_quantize_chunk has no Q8_K case)
//	IQ4_XS quantize_iq4_xs -> quantize_row_iq4_nl_impl(256, 32, ..., ntry = 7)
//
// Every float32 operation is one C operation in the C order; each product that feeds an
// addition or subtraction is wrapped in float32() so that Go cannot fuse it. Implicit C
// int->float conversions are explicit here, and C's narrowing stores to int8_t/uint8_t
// (which wrap on gcc/x86-64) are Go's wrapping conversions.

// sqrtf is C's sqrtf: the correctly rounded float32 square root (the float64 root of a
// float32 rounds to the same float32, and NaN/negative inputs give NaN).
func sqrtf(f float32) float32 { return float32(math.Sqrt(float64(f))) }

// clampInt returns MAX(lo, MIN(hi, v)) as ggml's macros compute it.
func clampInt(v, lo, hi int) int {
	if v > hi {
		v = hi
	}
	if v < lo {
		v = lo
	}
	return v
}

// makeQxQuants is make_qx_quants: a symmetric scale for n values with levels -nmax..nmax-1,
// found by trying iscale = -(nmax + 0.1*is)/max for is in -9..9 and keeping the one with
// the largest weighted sumlx^2/suml2. L receives the levels biased by nmax. rmseType
// selects the weights when qw is nil (1: x^2, 2: 1, 3: |x|, else sqrt|x|); a negative
// rmseType returns after the first pass; 0 skips the search.
func makeQxQuants(n, nmax int, x []float32, L []int8, rmseType int, qw []float32) float32 {
	amax, max := absMaxSigned(x[:n])
	if amax < groupMaxEps { // all zero
		for i := 0; i < n; i++ {
			L[i] = 0
		}
		return 0
	}
	iscale := float32(-nmax) / max
	if rmseType == 0 {
		for i := 0; i < n; i++ {
			l := nearestInt(float32(iscale * x[i]))
			L[i] = int8(nmax + clampInt(l, -nmax, nmax-1))
		}
		return 1 / iscale
	}
	returnEarly := false
	if rmseType < 0 {
		rmseType = -rmseType
		returnEarly = true
	}
	weight := func(i int) float32 {
		switch {
		case qw != nil:
			return qw[i]
		case rmseType == 1:
			return x[i] * x[i]
		case rmseType == 2:
			return 1
		case rmseType == 3:
			return fabsf(x[i])
		default:
			return sqrtf(fabsf(x[i]))
		}
	}
	var sumlx, suml2 float32
	for i := 0; i < n; i++ {
		l := nearestInt(float32(iscale * x[i]))
		l = clampInt(l, -nmax, nmax-1)
		L[i] = int8(l + nmax)
		w := weight(i)
		fl := float32(l)
		sumlx += float32(float32(w*x[i]) * fl)
		suml2 += float32(float32(w*fl) * fl)
	}
	var scale float32
	if suml2 != 0 {
		scale = sumlx / suml2
	}
	if returnEarly {
		if suml2 > 0 {
			return 0.5 * (scale + 1/iscale)
		}
		return 1 / iscale
	}
	best := scale * sumlx
	for is := -9; is <= 9; is++ {
		if is == 0 {
			continue
		}
		iscale = -(float32(nmax) + float32(0.1*float32(is))) / max
		sumlx, suml2 = 0, 0
		for i := 0; i < n; i++ {
			l := nearestInt(float32(iscale * x[i]))
			l = clampInt(l, -nmax, nmax-1)
			w := weight(i)
			fl := float32(l)
			sumlx += float32(float32(w*x[i]) * fl)
			suml2 += float32(float32(w*fl) * fl)
		}
		if suml2 > 0 && sumlx*sumlx > best*suml2 {
			for i := 0; i < n; i++ {
				l := nearestInt(float32(iscale * x[i]))
				L[i] = int8(nmax + clampInt(l, -nmax, nmax-1))
			}
			scale = sumlx / suml2
			best = scale * sumlx
		}
	}
	return scale
}

// makeQ3Quants is make_q3_quants: a symmetric scale for n values with levels
// -nmax..nmax-1 starting from iscale = -nmax/max; with doRMSE, up to 5 passes of
// coordinate descent on the x^2-weighted error. L receives the levels biased by nmax
// (all 0 for an all-zero group).
func makeQ3Quants(n, nmax int, x []float32, L []int8, doRMSE bool) float32 {
	amax, max := absMaxSigned(x[:n])
	if amax < groupMaxEps { // all zero
		for i := 0; i < n; i++ {
			L[i] = 0
		}
		return 0
	}
	iscale := float32(-nmax) / max
	if doRMSE {
		var sumlx, suml2 float32
		for i := 0; i < n; i++ {
			l := nearestInt(float32(iscale * x[i]))
			l = clampInt(l, -nmax, nmax-1)
			L[i] = int8(l)
			w := x[i] * x[i]
			fl := float32(l)
			sumlx += float32(float32(w*x[i]) * fl)
			suml2 += float32(float32(w*fl) * fl)
		}
		for itry := 0; itry < 5; itry++ {
			nChanged := 0
			for i := 0; i < n; i++ {
				w := x[i] * x[i]
				li := float32(L[i])
				slx := sumlx - float32(float32(w*x[i])*li)
				if slx > 0 {
					sl2 := suml2 - float32(float32(w*li)*li)
					newL := nearestInt(x[i] * sl2 / slx)
					newL = clampInt(newL, -nmax, nmax-1)
					if newL != int(L[i]) {
						fn := float32(newL)
						slx += float32(float32(w*x[i]) * fn)
						sl2 += float32(float32(w*fn) * fn)
						if sl2 > 0 && slx*slx*suml2 > sumlx*sumlx*sl2 {
							L[i] = int8(newL)
							sumlx = slx
							suml2 = sl2
							nChanged++
						}
					}
				}
			}
			if nChanged == 0 {
				break
			}
		}
		for i := 0; i < n; i++ {
			L[i] += int8(nmax)
		}
		if suml2 > 0 {
			return sumlx / suml2
		}
		return 0
	}
	for i := 0; i < n; i++ {
		l := nearestInt(float32(iscale * x[i]))
		l = clampInt(l, -nmax, nmax-1)
		L[i] = int8(l + nmax)
	}
	return 1 / iscale
}

// makeQkx2Quants is make_qkx2_quants: an asymmetric scale and min for n values with levels
// 0..nmax, min clamped to <= 0, minimising the weighted squared (or, with useMAD,
// absolute) error over iscale = (rmin + rdelta*is + nmax)/(max - min), is = 0..nstep, each
// followed by a weighted least-squares fit of scale and min. L receives the levels; Laux
// is scratch of n bytes. It returns the scale and theMin = -min (>= 0, or -0).
func makeQkx2Quants(n, nmax int, x, weights []float32, L, Laux []uint8, rmin, rdelta float32, nstep int, useMAD bool) (scale, theMin float32) {
	min := x[0]
	max := x[0]
	sumW := weights[0]
	sumX := float32(sumW * x[0])
	for i := 1; i < n; i++ {
		if x[i] < min {
			min = x[i]
		}
		if x[i] > max {
			max = x[i]
		}
		w := weights[i]
		sumW += w
		sumX += float32(w * x[i])
	}
	if min > 0 {
		min = 0
	}
	if max == min {
		for i := 0; i < n; i++ {
			L[i] = 0
		}
		return 0, -min
	}
	fnmax := float32(nmax)
	iscale := fnmax / (max - min)
	scale = 1 / iscale
	var bestError float32
	for i := 0; i < n; i++ {
		l := nearestInt(float32(iscale * (x[i] - min)))
		L[i] = uint8(clampInt(l, 0, nmax))
		diff := float32(scale*float32(L[i])) + min - x[i]
		if useMAD {
			diff = fabsf(diff)
		} else {
			diff = diff * diff
		}
		bestError += float32(weights[i] * diff)
	}
	if nstep < 1 {
		return scale, -min
	}
	for is := 0; is <= nstep; is++ {
		iscale = (rmin + float32(rdelta*float32(is)) + fnmax) / (max - min)
		var sumL, sumL2, sumXL float32
		for i := 0; i < n; i++ {
			l := nearestInt(float32(iscale * (x[i] - min)))
			l = clampInt(l, 0, nmax)
			Laux[i] = uint8(l)
			w := weights[i]
			fl := float32(l)
			sumL += float32(w * fl)
			sumL2 += float32(float32(w*fl) * fl)
			sumXL += float32(float32(w*fl) * x[i])
		}
		D := float32(sumW*sumL2) - float32(sumL*sumL)
		if D > 0 {
			thisScale := (float32(sumW*sumXL) - float32(sumX*sumL)) / D
			thisMin := (float32(sumL2*sumX) - float32(sumL*sumXL)) / D
			if thisMin > 0 {
				thisMin = 0
				thisScale = sumXL / sumL2
			}
			var curError float32
			for i := 0; i < n; i++ {
				diff := float32(thisScale*float32(Laux[i])) + thisMin - x[i]
				if useMAD {
					diff = fabsf(diff)
				} else {
					diff = diff * diff
				}
				curError += float32(weights[i] * diff)
			}
			if curError < bestError {
				copy(L[:n], Laux[:n])
				bestError = curError
				scale = thisScale
				min = thisMin
			}
		}
	}
	return scale, -min
}

// quantizeQ2_KRef is quantize_row_q2_K_ref.
func quantizeQ2_KRef(src []float32, dst []byte) {
	const q4scale float32 = 15
	var (
		L       [QK_K]uint8
		Laux    [16]uint8
		weights [16]float32
		mins    [QK_K / 16]float32
		scales  [QK_K / 16]float32
	)
	nb := len(src) / QK_K
	for i := 0; i < nb; i++ {
		x := src[i*QK_K : (i+1)*QK_K]
		y := Q2_KBlock(dst, i)
		var maxScale, maxMin float32
		for j := 0; j < QK_K/16; j++ {
			for l := 0; l < 16; l++ {
				weights[l] = fabsf(x[16*j+l])
			}
			scales[j], mins[j] = makeQkx2Quants(16, 3, x[16*j:16*j+16], weights[:], L[16*j:16*j+16], Laux[:], -0.5, 0.1, 15, true)
			if scales[j] > maxScale {
				maxScale = scales[j]
			}
			if mins[j] > maxMin {
				maxMin = mins[j]
			}
		}
		ysc := y.Scales()
		if maxScale > 0 {
			iscale := q4scale / maxScale
			for j := 0; j < QK_K/16; j++ {
				ysc[j] = uint8(nearestInt(float32(iscale * scales[j])))
			}
			put16(y[80:], uint16(fp32ToFP16(maxScale/q4scale)))
		} else {
			for j := 0; j < QK_K/16; j++ {
				ysc[j] = 0
			}
			put16(y[80:], uint16(fp32ToFP16(0)))
		}
		if maxMin > 0 {
			iscale := q4scale / maxMin
			for j := 0; j < QK_K/16; j++ {
				l := nearestInt(float32(iscale * mins[j]))
				ysc[j] |= uint8(l << 4)
			}
			put16(y[82:], uint16(fp32ToFP16(maxMin/q4scale)))
		} else {
			put16(y[82:], uint16(fp32ToFP16(0)))
		}
		dh, mh := y.DM()
		for j := 0; j < QK_K/16; j++ {
			d := fp16ToFP32(dh) * float32(ysc[j]&0xF)
			if d == 0 {
				continue
			}
			dm := float32(fp16ToFP32(mh) * float32(ysc[j]>>4))
			for ii := 0; ii < 16; ii++ {
				l := nearestInt((x[16*j+ii] + dm) / d)
				L[16*j+ii] = uint8(clampInt(l, 0, 3))
			}
		}
		qs := y.Qs()
		for j := 0; j < QK_K; j += 128 {
			for l := 0; l < 32; l++ {
				qs[j/4+l] = L[j+l] | L[j+l+32]<<2 | L[j+l+64]<<4 | L[j+l+96]<<6
			}
		}
	}
}

// quantizeQ3_KRef is quantize_row_q3_K_ref.
func quantizeQ3_KRef(src []float32, dst []byte) {
	var (
		L      [QK_K]int8
		scales [QK_K / 16]float32
	)
	nb := len(src) / QK_K
	for i := 0; i < nb; i++ {
		x := src[i*QK_K : (i+1)*QK_K]
		y := Q3_KBlock(dst, i)
		var maxScale, amax float32
		for j := 0; j < QK_K/16; j++ {
			scales[j] = makeQ3Quants(16, 4, x[16*j:16*j+16], L[16*j:16*j+16], true)
			scale := fabsf(scales[j])
			if scale > amax {
				amax = scale
				maxScale = scales[j]
			}
		}
		ysc := y.Scales()
		clear(ysc)
		if maxScale != 0 {
			iscale := -32 / maxScale
			for j := 0; j < QK_K/16; j++ {
				l := int8(nearestInt(float32(iscale * scales[j]))) // C: int8_t l = nearest_int(...)
				l = int8(clampInt(int(l), -32, 31) + 32)
				if j < 8 {
					ysc[j] = uint8(l) & 0xF
				} else {
					ysc[j-8] |= (uint8(l) & 0xF) << 4
				}
				l >>= 4
				ysc[j%4+8] |= uint8(l) << (2 * (j / 4))
			}
			put16(y[108:], uint16(fp32ToFP16(1/iscale)))
		} else {
			put16(y[108:], uint16(fp32ToFP16(0)))
		}
		dh := fp16ToFP32(y.D())
		for j := 0; j < QK_K/16; j++ {
			var sc int8
			if j < 8 {
				sc = int8(ysc[j] & 0xF)
			} else {
				sc = int8(ysc[j-8] >> 4)
			}
			sc = int8(int(sc|int8(((ysc[8+j%4]>>(2*(j/4)))&3)<<4)) - 32)
			d := dh * float32(sc)
			if d == 0 {
				continue
			}
			for ii := 0; ii < 16; ii++ {
				l := nearestInt(x[16*j+ii] / d)
				L[16*j+ii] = int8(clampInt(l, -4, 3) + 4)
			}
		}
		hmask := y.HMask()
		clear(hmask)
		m := 0
		hm := uint8(1)
		for j := 0; j < QK_K; j++ {
			if L[j] > 3 {
				hmask[m] |= hm
				L[j] -= 4
			}
			m++
			if m == QK_K/8 {
				m = 0
				hm <<= 1
			}
		}
		qs := y.Qs()
		for j := 0; j < QK_K; j += 128 {
			for l := 0; l < 32; l++ {
				qs[j/4+l] = uint8(L[j+l] | L[j+l+32]<<2 | L[j+l+64]<<4 | L[j+l+96]<<6)
			}
		}
	}
}

// quantizeQ45KRef is the shared body of quantize_row_q4_K_ref (nmax 15, rmin -1, nstep
// 20) and quantize_row_q5_K_ref (nmax 31, rmin -0.5, nstep 15): per 32 values weights
// av_x + |x| with av_x = sqrt(sum x^2 / 32), make_qkx2_quants, 6-bit scales and mins
// relative to the largest, and the quants recomputed from the stored half scales. It
// returns the levels of the block in L; the caller packs them.
func quantizeQ45KRef(x []float32, y []byte, L *[QK_K]uint8, nmax int, rmin float32, nstep int) {
	var (
		Laux    [32]uint8
		weights [32]float32
		mins    [QK_K / 32]float32
		scales  [QK_K / 32]float32
	)
	var maxScale, maxMin float32
	for j := 0; j < QK_K/32; j++ {
		xb := x[32*j : 32*j+32]
		var sumX2 float32
		for l := 0; l < 32; l++ {
			sumX2 += float32(xb[l] * xb[l])
		}
		avX := sqrtf(sumX2 / 32)
		for l := 0; l < 32; l++ {
			weights[l] = avX + fabsf(xb[l])
		}
		scales[j], mins[j] = makeQkx2Quants(32, nmax, xb, weights[:], L[32*j:32*j+32], Laux[:], rmin, 0.1, nstep, false)
		if scales[j] > maxScale {
			maxScale = scales[j]
		}
		if mins[j] > maxMin {
			maxMin = mins[j]
		}
	}
	var invScale, invMin float32
	if maxScale > 0 {
		invScale = 63 / maxScale
	}
	if maxMin > 0 {
		invMin = 63 / maxMin
	}
	sc := y[4:16:16]
	for j := 0; j < QK_K/32; j++ {
		ls := uint8(nearestInt(float32(invScale * scales[j])))
		lm := uint8(nearestInt(float32(invMin * mins[j])))
		ls = min(63, ls)
		lm = min(63, lm)
		if j < 4 {
			sc[j] = ls
			sc[j+4] = lm
		} else {
			sc[j+4] = (ls & 0xF) | ((lm & 0xF) << 4)
			sc[j-4] |= (ls >> 4) << 6
			sc[j-0] |= (lm >> 4) << 6
		}
	}
	put16(y[0:], uint16(fp32ToFP16(maxScale/63)))
	put16(y[2:], uint16(fp32ToFP16(maxMin/63)))
	dhh, mhh := BlockQ4_K(y).DM() // Q5_K has the same d, dmin and scales offsets
	dh, mh := fp16ToFP32(dhh), fp16ToFP32(mhh)
	for j := 0; j < QK_K/32; j++ {
		s, m := getScaleMinK4(j, sc)
		d := dh * float32(s)
		if d == 0 {
			continue
		}
		dm := float32(mh * float32(m))
		for ii := 0; ii < 32; ii++ {
			l := nearestInt((x[32*j+ii] + dm) / d)
			L[32*j+ii] = uint8(clampInt(l, 0, nmax))
		}
	}
}

// quantizeQ4_KRef is quantize_row_q4_K_ref.
func quantizeQ4_KRef(src []float32, dst []byte) {
	var L [QK_K]uint8
	nb := len(src) / QK_K
	for i := 0; i < nb; i++ {
		x := src[i*QK_K : (i+1)*QK_K]
		y := Q4_KBlock(dst, i)
		quantizeQ45KRef(x, y, &L, 15, -1, 20)
		q := y.Qs()
		for j := 0; j < QK_K; j += 64 {
			for l := 0; l < 32; l++ {
				q[l] = L[j+l] | L[j+l+32]<<4
			}
			q = q[32:]
		}
	}
}

// quantizeQ5_KRef is quantize_row_q5_K_ref.
func quantizeQ5_KRef(src []float32, dst []byte) {
	var L [QK_K]uint8
	nb := len(src) / QK_K
	for i := 0; i < nb; i++ {
		x := src[i*QK_K : (i+1)*QK_K]
		y := Q5_KBlock(dst, i)
		quantizeQ45KRef(x, y, &L, 31, -0.5, 15)
		qh := y.Qh()
		ql := y.Qs()
		clear(qh)
		m1, m2 := uint8(1), uint8(2)
		for n := 0; n < QK_K; n += 64 {
			for j := 0; j < 32; j++ {
				l1 := L[n+j]
				if l1 > 15 {
					l1 -= 16
					qh[j] |= m1
				}
				l2 := L[n+j+32]
				if l2 > 15 {
					l2 -= 16
					qh[j] |= m2
				}
				ql[j] = l1 | l2<<4
			}
			m1 <<= 2
			m2 <<= 2
			ql = ql[32:]
		}
	}
}

// quantizeQ6_KRef is quantize_row_q6_K_ref.
func quantizeQ6_KRef(src []float32, dst []byte) {
	var (
		L      [QK_K]int8
		scales [QK_K / 16]float32
	)
	nb := len(src) / QK_K
	for i := 0; i < nb; i++ {
		x := src[i*QK_K : (i+1)*QK_K]
		y := Q6_KBlock(dst, i)
		var maxScale, maxAbsScale float32
		for ib := 0; ib < QK_K/16; ib++ {
			scale := makeQxQuants(16, 32, x[16*ib:16*ib+16], L[16*ib:16*ib+16], 1, nil)
			scales[ib] = scale
			absScale := fabsf(scale)
			if absScale > maxAbsScale {
				maxAbsScale = absScale
				maxScale = scale
			}
		}
		if maxAbsScale < groupMaxEps {
			clear(y)
			put16(y[208:], uint16(fp32ToFP16(0)))
			continue
		}
		iscale := -128 / maxScale
		put16(y[208:], uint16(fp32ToFP16(1/iscale)))
		ysc := y.Scales()
		for ib := 0; ib < QK_K/16; ib++ {
			ysc[ib] = uint8(int8(min(127, nearestInt(float32(iscale*scales[ib])))))
		}
		dh := fp16ToFP32(y.D())
		for j := 0; j < QK_K/16; j++ {
			d := dh * float32(int8(ysc[j]))
			if d == 0 {
				continue
			}
			for ii := 0; ii < 16; ii++ {
				l := nearestInt(x[16*j+ii] / d)
				L[16*j+ii] = int8(clampInt(l, -32, 31) + 32)
			}
		}
		ql := y.Ql()
		qh := y.Qh()
		for j := 0; j < QK_K; j += 128 {
			for l := 0; l < 32; l++ {
				q1 := uint8(L[j+l+0]) & 0xF
				q2 := uint8(L[j+l+32]) & 0xF
				q3 := uint8(L[j+l+64]) & 0xF
				q4 := uint8(L[j+l+96]) & 0xF
				ql[l+0] = q1 | q3<<4
				ql[l+32] = q2 | q4<<4
				qh[l] = uint8(L[j+l]>>4 | (L[j+l+32]>>4)<<2 | (L[j+l+64]>>4)<<4 | (L[j+l+96]>>4)<<6)
			}
			ql = ql[64:]
			qh = qh[32:]
		}
	}
}

// quantizeQ8_KRef is quantize_row_q8_K_ref: iscale = -127/max (max the value of largest
// magnitude), q = min(127, nearest_int(iscale*x)), d = 1/iscale stored as float32, and
// bsums the sums of each 16 quants. For an all-zero block ggml writes d = 0 and zero
// quants and leaves bsums untouched; here bsums are zeroed too.
func quantizeQ8_KRef(src []float32, dst []byte) {
	nb := len(src) / QK_K
	for i := 0; i < nb; i++ {
		x := src[i*QK_K : (i+1)*QK_K]
		y := q8KBlock(dst, i)
		amax, max := absMaxSigned(x[:QK_K])
		if amax == 0 {
			clear(y)
			continue
		}
		iscale := -127 / max
		qs := y.Qs()
		for j := 0; j < QK_K; j++ {
			v := nearestInt(float32(iscale * x[j]))
			qs[j] = uint8(int8(min(127, v)))
		}
		for j := 0; j < QK_K/16; j++ {
			sum := 0
			for ii := 0; ii < 16; ii++ {
				sum += int(int8(qs[j*16+ii]))
			}
			put16(y[260+2*j:], uint16(int16(sum)))
		}
		put32(y[0:], math.Float32bits(1/iscale))
	}
}

// quantizeIQ4_XSRef is quantize_iq4_xs(..., quant_weights = NULL), that is
// quantize_row_iq4_nl_impl(QK_K, 32, ..., kvalues_iq4nl, NULL, ntry = 7) per block:
// per 32 values weights x^2, d = max/127 (max the value of largest magnitude) refined
// over id = (itry - 127)/max, itry = -7..7, by the largest sumqx^2/sumq2; then
// d = -max_scale/32 over the eight scales, 6-bit scales l = nearest_int(scale/d), and
// the codes re-chosen for dl = d*l by best_index_int8(idl*x) with idl = 1/dl.
func quantizeIQ4_XSRef(src []float32, dst []byte) {
	const ntry = 7
	values := KValuesIQ4NL[:]
	v0 := int(values[0])
	var (
		L      [QK_K]uint8
		weight [32]float32
		scales [QK_K / 32]float32
	)
	nb := len(src) / QK_K
	for ibl := 0; ibl < nb; ibl++ {
		x := src[ibl*QK_K : (ibl+1)*QK_K]
		y := IQ4_XSBlock(dst, ibl)
		// sigma2 is only used with quant weights; the C computes it and ignores it.
		q4 := y.Qs()
		clear(q4)
		put16(y[0:], uint16(fp32ToFP16(0)))

		var maxScale, amaxScale float32
		for ib := 0; ib < QK_K/32; ib++ {
			xb := x[ib*32 : ib*32+32]
			Lb := L[ib*32 : ib*32+32]
			for j := 0; j < 32; j++ {
				weight[j] = xb[j] * xb[j]
			}
			amax, max := absMaxSigned(xb[:32])
			if amax < groupMaxEps {
				scales[ib] = 0
				continue
			}
			d := -max / float32(v0) // ntry > 0
			id := 1 / d
			var sumqx, sumq2 float32
			for j := 0; j < 32; j++ {
				al := float32(id * xb[j])
				l := bestIndexInt8(16, values, al)
				Lb[j] = uint8(l)
				q := float32(values[l])
				w := weight[j]
				sumqx += float32(float32(w*q) * xb[j])
				sumq2 += float32(float32(w*q) * q)
			}
			if sumq2 > 0 {
				d = sumqx / sumq2
			} else {
				d = 0
			}
			best := d * sumqx
			for itry := -ntry; itry <= ntry; itry++ {
				id = float32(itry+v0) / max
				sumqx, sumq2 = 0, 0
				for j := 0; j < 32; j++ {
					al := float32(id * xb[j])
					l := bestIndexInt8(16, values, al)
					q := float32(values[l])
					w := weight[j]
					sumqx += float32(float32(w*q) * xb[j])
					sumq2 += float32(float32(w*q) * q)
				}
				if sumq2 > 0 && sumqx*sumqx > best*sumq2 {
					d = sumqx / sumq2
					best = d * sumqx
				}
			}
			scales[ib] = d
			absD := fabsf(d)
			if absD > amaxScale {
				amaxScale = absD
				maxScale = d
			}
		}

		// super_block_size/block_size = 8 > 1
		scalesL := y.ScalesL()
		var scalesH uint16
		d := -maxScale / 32
		put16(y[0:], uint16(fp32ToFP16(d)))
		var id float32
		if d != 0 {
			id = 1 / d
		}
		for ib := 0; ib < QK_K/32; ib++ {
			l := nearestInt(float32(id * scales[ib]))
			l = clampInt(l, -32, 31)
			dl := d * float32(l)
			var idl float32
			if dl != 0 {
				idl = 1 / dl
			}
			Lb := L[ib*32 : ib*32+32]
			xb := x[ib*32 : ib*32+32]
			for j := 0; j < 32; j++ {
				Lb[j] = uint8(bestIndexInt8(16, values, float32(idl*xb[j])))
			}
			l += 32
			lL := uint8(l & 0xf)
			lH := uint8(l >> 4)
			if ib%2 == 0 {
				scalesL[ib/2] = lL
			} else {
				scalesL[ib/2] |= lL << 4
			}
			scalesH |= uint16(lH) << (2 * (ib % 8))
		}
		put16(y[2:], scalesH)

		for i := 0; i < QK_K/32; i++ {
			for j := 0; j < 16; j++ {
				q4[16*i+j] = L[32*i+j] | L[32*i+16+j]<<4
			}
		}
	}
}
