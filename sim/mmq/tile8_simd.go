//go:build goexperiment.simd && amd64

package mmq

import (
	"simd/archsimd"
	"sync"
	"sync/atomic"

	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
	"github.com/ggsim/ggsim/sim/q8"
)

// The 8-column path (GOEXPERIMENT=simd, amd64 with AVX2 and FMA): computeTile with eight
// columns of the tile side by side, column 8g+l in lane l of archsimd vectors. Each
// output's float sequence is independent of the other columns' and stays in its order
// (per row: the ranges, their iterations ascending, each iteration's vec_dot blocks in
// the kernel's order; then the scalar fixup); the lanes run it with the 8-lane
// functions of package sim, which give the scalar functions' bits (FMA8F and Mul8F: every
// operand here is already flushed, being a half converted to float32, a converted
// integer, a y scale flushed in pack, or a result of an 8-lane function). Only the integer half
// is reorganised: the tile's y blocks are transposed once (a vector holds four
// consecutive values of eight columns), and each 16-value dot of a row with eight
// columns is VPMADDUBSW of the row's broadcast values with them, then VPMADDWD with ones
// (exact: see halves8). TestTile8MatchesScalar compares both paths bit for bit.

// useTile8 lets tests run the scalar path in this build; tile8Taken counts the tiles the
// 8-column path computed (tests check that it ran).
var (
	useTile8   = true
	tile8Taken atomic.Int64
)

func init() { tile8 = computeTile8 }

// dot8Func is a kernel's dot on eight columns: hd holds the 16 half dots per lane, f0 and
// f1 the y blocks' scales of the eight columns (y8Scales) for y0 and y1.
type dot8Func func(x *xTile, hd *[16]archsimd.Int32x8, f0, f1 *y8Scales, sum archsimd.Float32x8) archsimd.Float32x8

// y8Scales is what the kernels' dots read of one y block's header for eight columns:
// [k][0] = d4[k] (D4) or the half d of ds4[k] as float (DS4), [k][1] = the half sum of
// ds4[k] as float (DS4), per lane; D2S6: [j/2][j%2] = d2s6[j] as float (j = 0..7) and
// [4][0], [4][1] = the exact sums of the int8 values 96..111 and 112..127 as float.
type y8Scales [5][2][8]float32

var (
	dot8Once  sync.Once
	dot8Table map[*kernel]dot8Func
)

// dot8For returns the 8-column dot of kn, or nil.
func dot8For(kn *kernel) dot8Func {
	dot8Once.Do(func() {
		// Every kernel whose scalar dot one of these is (dot8Q8_0 reads the d of either
		// layout: the DS4 d of dotQ8_0Q8_1(true) is y8Scales' [k][0] too).
		dot8Table = map[*kernel]dot8Func{
			kernels[quant.Q4_K]:        dot8Q8_1,
			kernels[quant.Q5_K]:        dot8Q8_1,
			kernels[quant.Q4_1]:        dot8Q8_1,
			kernels[quant.Q5_1]:        dot8Q8_1,
			kernels[quant.Q8_0]:        dot8Q8_0,
			kernels[quant.Q4_0]:        dot8Q8_0,
			kernels[quant.Q5_0]:        dot8Q8_0,
			kernels[quant.IQ4_XS]:      dot8Q8_0,
			kernels[quant.IQ4_NL]:      dot8Q8_0,
			kernels[quant.MXFP4]:       dot8Q8_0,
			kernels[quant.Q6_K]:        dot8Q6_K,
			kernels[quant.Q3_K]:        dot8Q8_0_16,
			kernels[quant.Q2_K]:        dot8Q2_K,
			kernelsDP4A[quant.Q4_K]:    dot8DP4AQ4_K,
			kernelsDP4A[quant.Q5_K]:    dot8DP4AQ4_K,
			kernelsDP4A[quant.Q8_0]:    dot8DP4AQ8_0,
			kernelsDP4A[quant.Q5_0]:    dot8DP4AQ8_0,
			kernelsDP4A[quant.IQ4_XS]:  dot8DP4AQ8_0,
			kernelsDP4A[quant.IQ4_NL]:  dot8DP4AQ8_0,
			kernelsDP4A[quant.MXFP4]:   dot8DP4AQ8_0,
			kernelsDP4A[quant.Q6_K]:    dot8DP4AQ6_K,
			kernelsDP4A[quant.Q3_K]:    dot8DP4AQ3_K,
			kernelsDP4A[quant.Q2_K]:    dot8DP4AQ2_K,
			kernelsDP4A[quant.Q4_0]:    dot8DP4AQ4_0,
			kernelsDP4A[quant.Q4_1]:    dot8DP4AQ8_1,
			kernelsDP4A[quant.Q5_1]:    dot8DP4AQ8_1,
			kernels[quant.IQ2_XXS]:     dot8Q8_0,
			kernels[quant.IQ3_XXS]:     dot8Q8_0,
			kernels[quant.IQ3_S]:       dot8Q8_0,
			kernels[quant.Q1_0]:        dot8Q8_0,
			kernels[quant.Q2_0]:        dot8Q8_0,
			kernels[quant.IQ2_XS]:      dot8Q8_0_16,
			kernels[quant.IQ2_S]:       dot8Q8_0_16,
			kernels[quant.NVFP4]:       dot8Q8_0_16,
			kernels[quant.IQ1_S]:       dot8Q8_1,
			kernelsDP4A[quant.IQ2_XXS]: dot8DP4AQ8_0,
			kernelsDP4A[quant.IQ3_XXS]: dot8DP4AQ8_0,
			kernelsDP4A[quant.IQ3_S]:   dot8DP4AQ8_0,
			kernelsDP4A[quant.Q1_0]:    dot8DP4AQ8_0,
			kernelsDP4A[quant.Q2_0]:    dot8DP4AQ8_0,
			kernelsDP4A[quant.IQ2_XS]:  dot8DP4AQ8_0_16,
			kernelsDP4A[quant.IQ2_S]:   dot8DP4AQ8_0_16,
			kernelsDP4A[quant.NVFP4]:   dot8DP4AQ8_0_16,
			kernelsDP4A[quant.IQ1_S]:   dot8DP4AQ8_1,
		}
		delete(dot8Table, nil)
	})
	return dot8Table[kn]
}

// tile8Scratch is one worker's state of the 8-column path, reused across tiles.
type tile8Scratch struct {
	ys   []int8     // [(kb-kbLo)*ng + g][32 quads][8 lanes][4 values]
	yf   []y8Scales // [(kb-kbLo)*ng + g]
	part []float32  // [r][ng][8]: the partial sums of one row
	xs   [64]archsimd.Int8x32
	xu   [64]archsimd.Uint8x32
	hd   [16]archsimd.Int32x8
}

var tile8Pool = sync.Pool{New: func() any { return new(tile8Scratch) }}

var ones16 = archsimd.BroadcastInt16x16(1)

// computeTile8 is computeTile on eight columns at a time (see tile8). It declines (false)
// a kernel without an 8-column dot and a tile whose activations hold a -128 (halves8
// needs |y| <= 127; the quantizer gives -128 only for NaN or flushed inputs).
func computeTile8(kn *kernel, mat *matrix, y []q8.BlockMMQ, ncolsY int, p *Plan, w *TileWork, it, jt, N, M int, store func(i, j int, v float32), fixup func(i, j int, s float32)) bool {
	if !useTile8 || !sim.Vec8 {
		return false
	}
	dot := dot8For(kn)
	if dot == nil {
		return false
	}
	ranges := w.Ranges
	i0, j0 := it*p.I, jt*p.J
	imax, jmax := min(p.I, N-i0), min(p.J, M-j0)
	if imax <= 0 || jmax <= 0 {
		return true
	}
	ybLo, ybHi := yBlockSpan(p, ranges)
	ts := tile8Pool.Get().(*tile8Scratch)
	defer tile8Pool.Put(ts)
	ng := (jmax + 7) / 8
	if !ts.pack(kn.layout, ybLo, ybHi, ng, jmax, func(kb, jj int) *q8.BlockMMQ { return &y[kb*ncolsY+j0+jj] }) {
		return false
	}
	nb := len(ranges)
	if n := nb * ng * 8; cap(ts.part) < n {
		ts.part = make([]float32, n)
	}
	part := ts.part[:nb*ng*8]
	var x xTile
	for ii := 0; ii < imax; ii++ {
		i := i0 + ii
		clear(part)
		for r, rg := range ranges {
			for kb0 := rg.Start; kb0 < rg.Stop; kb0 += p.BPI {
				kn.load(mat, i, kb0, &x)
				kb := kb0*(iterK/p.BPI)/128 - ybLo // the first block_q8_1_mmq, from ybLo
				signed, small := ts.loadX(&x)
				for g := 0; g < ng; g++ {
					o0, o1 := kb*ng+g, (kb+1)*ng+g
					ts.halves8(o0, o1, signed, small)
					s := (*[8]float32)(part[(r*ng+g)*8:])
					dot(&x, &ts.hd, &ts.yf[o0], &ts.yf[o1], archsimd.LoadFloat32x8(s)).Store(s)
				}
			}
		}
		for jj := 0; jj < jmax; jj++ {
			v := part[((nb-1)*ng)*8+jj] // the end segment, stored to dst by mul_mat_q
			if w.Adds != nil {
				var s float32 // mul_mat_q_stream_k_fixup: sum = 0.0f; sum += each slot; dst += sum
				for _, blk := range w.Adds {
					s = sim.Add(s, part[(rangeOf(ranges, blk)*ng)*8+jj])
				}
				if fixup != nil {
					fixup(i, j0+jj, s)
				} else {
					v = sim.Add(v, s)
				}
			}
			store(i, j0+jj, v)
		}
	}
	tile8Taken.Add(1)
	return true
}

// pack transposes y blocks kbLo..kbHi-1 of the ncol columns at(kb, 0..ncol-1) into
// ts.ys (lanes past ncol zero) and their scales into ts.yf. It returns false if a value
// is -128.
func (ts *tile8Scratch) pack(layout q8.Layout, kbLo, kbHi, ng, ncol int, at func(kb, jj int) *q8.BlockMMQ) bool {
	n := (kbHi - kbLo) * ng
	if cap(ts.ys) < n*1024 {
		ts.ys = make([]int8, n*1024)
	}
	if cap(ts.yf) < n {
		ts.yf = make([]y8Scales, n)
	}
	ts.ys, ts.yf = ts.ys[:n*1024], ts.yf[:n]
	clear(ts.ys)
	clear(ts.yf)
	bad := false
	for kb := kbLo; kb < kbHi; kb++ {
		for jj := 0; jj < ncol; jj++ {
			g, l := jj/8, jj%8
			o := (kb-kbLo)*ng + g
			b := at(kb, jj)
			dst := ts.ys[o*1024:]
			for v := 0; v < 32; v++ {
				q := (*[4]int8)(b.Qs[4*v:])
				bad = bad || q[0] == -128 || q[1] == -128 || q[2] == -128 || q[3] == -128
				copy(dst[v*32+4*l:v*32+4*l+4], q[:])
			}
			f := &ts.yf[o]
			if layout == q8.D2S6 {
				for j := 0; j < 8; j++ {
					f[j/2][j%2][l] = sim.H2F(b.D2S6(j))
				}
				f[4][0][l], f[4][1][l] = sim.I2F(sumI8(b.Qs[96:112])), sim.I2F(sumI8(b.Qs[112:128]))
				continue
			}
			for k := 0; k < 4; k++ {
				if layout == q8.D4 {
					f[k][0][l] = sim.FTZ(b.D4(k)) // flushed once here: every use flushes it
				} else {
					d, s := b.DS4(k)
					f[k][0][l], f[k][1][l] = sim.H2F(d), sim.H2F(s)
				}
			}
		}
	}
	return !bad
}

// lane8 holds the VPERMD indices that broadcast lane l of an Int32x8.
var lane8 = [8]archsimd.Uint32x8{
	archsimd.BroadcastUint32x8(0), archsimd.BroadcastUint32x8(1), archsimd.BroadcastUint32x8(2), archsimd.BroadcastUint32x8(3),
	archsimd.BroadcastUint32x8(4), archsimd.BroadcastUint32x8(5), archsimd.BroadcastUint32x8(6), archsimd.BroadcastUint32x8(7),
}

// loadX broadcasts each four values of the loaded row (xs) and their magnitudes (xu),
// and says whether the row has negative values and whether all lie in [-32, 32].
func (ts *tile8Scratch) loadX(x *xTile) (signed, small bool) {
	lo, hi := archsimd.BroadcastInt8x32(0), archsimd.BroadcastInt8x32(0)
	for c := 0; c < 8; c++ {
		v := archsimd.LoadInt8x32((*[32]int8)(x.qs[32*c:]))
		lo, hi = lo.Min(v), hi.Max(v)
		w := v.AsInt32x8()
		xs := (*[8]archsimd.Int8x32)(ts.xs[8*c:])
		xu := (*[8]archsimd.Uint8x32)(ts.xu[8*c:])
		for l := 0; l < 8; l++ {
			b := w.Permute(lane8[l]).AsInt8x32()
			xs[l], xu[l] = b, b.Abs().AsUint8x32()
		}
	}
	var l8, h8 [32]int8
	lo.Store(&l8)
	hi.Store(&h8)
	var mn, mx int8
	for k := range l8 {
		mn, mx = min(mn, l8[k]), max(mx, h8[k])
	}
	return mn < 0, mn >= -32 && mx <= 32
}

// halves8 fills ts.hd[h] with the 16-value dots of the loaded row's values 16h..16h+15
// with the eight columns of the y groups o0 (h < 8) and o1 (h >= 8). VPMADDUBSW
// multiplies |x| (unsigned, at most 128) by y with x's sign (VPSIGNB; y itself where no x
// is negative) and adds pairs: |pair| <= 2·128·127 = 32512, no saturation (|y| <= 127,
// pack). Rows in [-32, 32] add the four pair vectors of a 16-value group in int16
// (|.| <= 8·32·127 = 32512) before one VPMADDWD with ones; other rows widen each.
func (ts *tile8Scratch) halves8(o0, o1 int, signed, small bool) {
	for half := 0; half < 2; half++ {
		o := o0
		if half == 1 {
			o = o1
		}
		yq := (*[1024]int8)(ts.ys[o*1024:])
		xs := (*[32]archsimd.Int8x32)(ts.xs[32*half:])
		xu := (*[32]archsimd.Uint8x32)(ts.xu[32*half:])
		hd := (*[8]archsimd.Int32x8)(ts.hd[8*half:])
		for h := 0; h < 8; h++ {
			q := 4 * h // the quad, in the row's half and in the y block
			y0 := archsimd.LoadInt8x32((*[32]int8)(yq[32*q:]))
			y1 := archsimd.LoadInt8x32((*[32]int8)(yq[32*q+32:]))
			y2 := archsimd.LoadInt8x32((*[32]int8)(yq[32*q+64:]))
			y3 := archsimd.LoadInt8x32((*[32]int8)(yq[32*q+96:]))
			if signed {
				y0, y1 = y0.CopySign(xs[q]), y1.CopySign(xs[q+1])
				y2, y3 = y2.CopySign(xs[q+2]), y3.CopySign(xs[q+3])
			}
			p0 := xu[q].DotProductPairsSaturated(y0)
			p1 := xu[q+1].DotProductPairsSaturated(y1)
			p2 := xu[q+2].DotProductPairsSaturated(y2)
			p3 := xu[q+3].DotProductPairsSaturated(y3)
			if small {
				hd[h] = p0.Add(p1).Add(p2.Add(p3)).DotProductPairs(ones16)
			} else {
				a := p0.DotProductPairs(ones16).Add(p1.DotProductPairs(ones16))
				b := p2.DotProductPairs(ones16).Add(p3.DotProductPairs(ones16))
				hd[h] = a.Add(b)
			}
		}
	}
}

// f8 loads lane vector f.
func f8(f *[8]float32) archsimd.Float32x8 { return archsimd.LoadFloat32x8(f) }

// y8Half returns the scales of the y block holding 32-value block b of the iteration
// and the index of b in it (yHalf's).
func y8Half(f0, f1 *y8Scales, b int) (*y8Scales, int) {
	if b < 4 {
		return f0, b
	}
	return f1, b - 4
}

// negRaw8 is Go's unary minus on each lane (the sign bit flipped, NaN payloads kept).
func negRaw8(x archsimd.Float32x8) archsimd.Float32x8 {
	return x.AsInt32x8().Xor(archsimd.BroadcastInt32x8(-0x80000000)).AsFloat32x8()
}

// dot8Q8_1 is dotQ8_1Q8_1 on each lane.
func dot8Q8_1(x *xTile, hd *[16]archsimd.Int32x8, f0, f1 *y8Scales, sum archsimd.Float32x8) archsimd.Float32x8 {
	for b := 0; b < 8; b++ {
		f, k := y8Half(f0, f1, b)
		c := hd[2*b].Add(hd[2*b+1])
		sum = sim.FMA8F(sim.Mul8F(archsimd.BroadcastFloat32x8(x.dm[b][0]), f8(&f[k][0])), sim.I2F8(c), sum)
		sum = sim.FMA8F(archsimd.BroadcastFloat32x8(x.dm[b][1]), f8(&f[k][1]), sum)
	}
	return sum
}

// dot8Q8_0 is dotQ8_0Q8_1 (either layout) on each lane.
func dot8Q8_0(x *xTile, hd *[16]archsimd.Int32x8, f0, f1 *y8Scales, sum archsimd.Float32x8) archsimd.Float32x8 {
	for b := 0; b < 8; b++ {
		f, k := y8Half(f0, f1, b)
		c := hd[2*b].Add(hd[2*b+1])
		sum = sim.FMA8F(sim.Mul8F(sim.I2F8(c), archsimd.BroadcastFloat32x8(x.df[b])), f8(&f[k][0]), sum)
	}
	return sum
}

// dot8Q6_K is dotQ6_K on each lane.
func dot8Q6_K(x *xTile, hd *[16]archsimd.Int32x8, f0, f1 *y8Scales, sum archsimd.Float32x8) archsimd.Float32x8 {
	dA := archsimd.BroadcastFloat32x8(x.df[0])
	for h, f := range [2]*y8Scales{f0, f1} {
		tmp := zeroF8
		for q := 0; q < 4; q++ {
			b := 4*h + q
			n := hd[2*b].Mul(archsimd.BroadcastInt32x8(x.sc[2*b])).Add(hd[2*b+1].Mul(archsimd.BroadcastInt32x8(x.sc[2*b+1])))
			tmp = sim.FMA8F(sim.I2F8(n), f8(&f[q][0]), tmp)
		}
		sum = sim.FMA8F(tmp, dA, sum)
	}
	return sum
}

// dot8DP4AQ8_0 is dp4aDotQ8_0 on each lane.
func dot8DP4AQ8_0(x *xTile, hd *[16]archsimd.Int32x8, f0, f1 *y8Scales, sum archsimd.Float32x8) archsimd.Float32x8 {
	for b := 0; b < 8; b++ {
		f, k := y8Half(f0, f1, b)
		c := hd[2*b].Add(hd[2*b+1])
		sum = sim.FMA8F(sim.Mul8F(archsimd.BroadcastFloat32x8(x.df[b]), f8(&f[k][0])), sim.I2F8(c), sum)
	}
	return sum
}

// dot8DP4AQ4_K is dp4aDotQ4_K on each lane.
func dot8DP4AQ4_K(x *xTile, hd *[16]archsimd.Int32x8, f0, f1 *y8Scales, sum archsimd.Float32x8) archsimd.Float32x8 {
	dmx := archsimd.BroadcastFloat32x8(sim.H2F(x.dmh[0].Lo))
	dmy := archsimd.BroadcastFloat32x8(sim.H2F(x.dmh[0].Hi))
	for s0 := 0; s0 < 8; s0 += 2 {
		sd, sm := zeroF8, zeroF8
		for s := s0; s < s0+2; s++ {
			f, k := y8Half(f0, f1, s)
			c := hd[2*s].Add(hd[2*s+1])
			sd = sim.FMA8F(f8(&f[k][0]), sim.I2F8(c.Mul(archsimd.BroadcastInt32x8(x.sc[s]))), sd)
			sm = sim.FMA8F(f8(&f[k][1]), archsimd.BroadcastInt32x8(x.sc[8+s]).ConvertToFloat32(), sm)
		}
		r := sim.FMA8F(dmx, sd, negRaw8(sim.Mul8F(dmy, sm)))
		sum = sim.Add8(sum, r)
	}
	return sum
}

// dot8DP4AQ6_K is dp4aDotQ6_K on each lane.
func dot8DP4AQ6_K(x *xTile, hd *[16]archsimd.Int32x8, f0, f1 *y8Scales, sum archsimd.Float32x8) archsimd.Float32x8 {
	d6 := archsimd.BroadcastFloat32x8(x.df[0])
	for p := 0; p < 4; p++ {
		sd := zeroF8
		for b := 2 * p; b < 2*p+2; b++ {
			f, k := y8Half(f0, f1, b)
			n := hd[2*b].Mul(archsimd.BroadcastInt32x8(x.sc[2*b])).Add(hd[2*b+1].Mul(archsimd.BroadcastInt32x8(x.sc[2*b+1])))
			sd = sim.FMA8F(f8(&f[k][0]), sim.I2F8(n), sd)
		}
		sum = sim.FMA8F(d6, sd, sum)
	}
	return sum
}

// dot8Q8_0_16 is dotQ8_0_16Q8_1 on each lane.
func dot8Q8_0_16(x *xTile, hd *[16]archsimd.Int32x8, f0, f1 *y8Scales, sum archsimd.Float32x8) archsimd.Float32x8 {
	for b := 0; b < 8; b++ {
		f, k := y8Half(f0, f1, b)
		in := sim.FMA8F(sim.I2F8(hd[2*b]), archsimd.BroadcastFloat32x8(x.df[2*b]), sim.Mul8F(sim.I2F8(hd[2*b+1]), archsimd.BroadcastFloat32x8(x.df[2*b+1])))
		sum = sim.FMA8F(f8(&f[k][0]), in, sum)
	}
	return sum
}

// dot8Q2_K is dotQ2_K on each lane. Its tmp - fused sum is Add8 of the negation: Sub's
// FTZ(RN(FTZ(a) - FTZ(b))) with NaN canonical is Add's of a and the flushed -b.
func dot8Q2_K(x *xTile, hd *[16]archsimd.Int32x8, f0, f1 *y8Scales, sum archsimd.Float32x8) archsimd.Float32x8 {
	for h, f := range [2]*y8Scales{f0, f1} {
		for q := 0; q < 4; q++ {
			s0 := 8*h + 2*q
			b := 4*h + q
			tmp := sim.FMA8F(sim.I2F8(hd[2*b]), archsimd.BroadcastFloat32x8(x.mA[s0][0]), sim.Mul8F(sim.I2F8(hd[2*b+1]), archsimd.BroadcastFloat32x8(x.mA[s0+1][0])))
			if q == 3 {
				m := sim.FMA8F(f8(&f[4][0]), archsimd.BroadcastFloat32x8(x.mA[s0][1]), sim.Mul8F(f8(&f[4][1]), archsimd.BroadcastFloat32x8(x.mA[s0+1][1])))
				tmp = sim.Add8(tmp, sim.Neg8(m))
			}
			sum = sim.FMA8F(tmp, f8(&f[0][q/2]), sum)
		}
		for q := 0; q < 3; q++ {
			s0 := 8*h + 2*q
			j := 2 + 2*q
			sum = sim.FMA8F(sim.Neg8(archsimd.BroadcastFloat32x8(x.mA[s0][1])), f8(&f[j/2][j%2]), sum)
			sum = sim.FMA8F(sim.Neg8(archsimd.BroadcastFloat32x8(x.mA[s0+1][1])), f8(&f[(j+1)/2][(j+1)%2]), sum)
		}
	}
	return sum
}

// dot8DP4AQ3_K is dp4aDotQ3_K on each lane.
func dot8DP4AQ3_K(x *xTile, hd *[16]archsimd.Int32x8, f0, f1 *y8Scales, sum archsimd.Float32x8) archsimd.Float32x8 {
	d3 := archsimd.BroadcastFloat32x8(x.df[0])
	for b := 0; b < 8; b++ {
		f, k := y8Half(f0, f1, b)
		n := hd[2*b].Mul(archsimd.BroadcastInt32x8(x.sc[2*b])).Add(hd[2*b+1].Mul(archsimd.BroadcastInt32x8(x.sc[2*b+1])))
		sum = sim.FMA8F(sim.Mul8F(d3, f8(&f[k][0])), sim.I2F8(n), sum)
	}
	return sum
}

// dot8DP4AQ4_0 is dp4aDotQ4_0 on each lane (-Mul(8, s8) is Go's minus: negRaw8).
func dot8DP4AQ4_0(x *xTile, hd *[16]archsimd.Int32x8, f0, f1 *y8Scales, sum archsimd.Float32x8) archsimd.Float32x8 {
	eight := archsimd.BroadcastFloat32x8(8)
	for b := 0; b < 8; b++ {
		f, k := y8Half(f0, f1, b)
		c := hd[2*b].Add(hd[2*b+1])
		inner := sim.FMA8F(sim.I2F8(c), f8(&f[k][0]), negRaw8(sim.Mul8F(eight, f8(&f[k][1]))))
		sum = sim.FMA8F(archsimd.BroadcastFloat32x8(x.df[b]), inner, sum)
	}
	return sum
}

// dot8DP4AQ8_1 is dp4aDotQ8_1 (Q4_1, Q5_1, IQ1_S) on each lane, its half2 product
// dm*ds by sim.HMul8.
func dot8DP4AQ8_1(x *xTile, hd *[16]archsimd.Int32x8, f0, f1 *y8Scales, sum archsimd.Float32x8) archsimd.Float32x8 {
	for b := 0; b < 8; b++ {
		f, k := y8Half(f0, f1, b)
		tx := sim.HMul8(archsimd.BroadcastFloat32x8(sim.H2F(x.dmh[b].Lo)), f8(&f[k][0]))
		ty := sim.HMul8(archsimd.BroadcastFloat32x8(sim.H2F(x.dmh[b].Hi)), f8(&f[k][1]))
		c := hd[2*b].Add(hd[2*b+1])
		sum = sim.Add8(sum, sim.FMA8F(sim.I2F8(c), tx, ty))
	}
	return sum
}

// dot8DP4AQ2_K is dp4aDotQ2_K on each lane (-x.mA is Go's minus, as there).
func dot8DP4AQ2_K(x *xTile, hd *[16]archsimd.Int32x8, f0, f1 *y8Scales, sum archsimd.Float32x8) archsimd.Float32x8 {
	for h, f := range [2]*y8Scales{f0, f1} {
		for p := 0; p < 2; p++ {
			sumf, sumfD8 := zeroF8, zeroF8
			for q := 0; q < 2; q++ {
				g := 8*h + (64*p+32*q)/16
				sumfD8 = sim.FMA8F(archsimd.BroadcastFloat32x8(x.mA[g][0]), sim.I2F8(hd[g]), sumfD8)
				sumfD8 = sim.FMA8F(archsimd.BroadcastFloat32x8(x.mA[g+1][0]), sim.I2F8(hd[g+1]), sumfD8)
				if q < 2-p {
					j := 2 + 4*p + 2*q
					sumf = sim.FMA8F(negRaw8(archsimd.BroadcastFloat32x8(x.mA[g][1])), f8(&f[j/2][j%2]), sumf)
					sumf = sim.FMA8F(negRaw8(archsimd.BroadcastFloat32x8(x.mA[g+1][1])), f8(&f[(j+1)/2][(j+1)%2]), sumf)
				} else { // values 96..127 of the y block: the sums pack took
					sumfD8 = sim.FMA8F(negRaw8(archsimd.BroadcastFloat32x8(x.mA[g][1])), f8(&f[4][0]), sumfD8)
					sumfD8 = sim.FMA8F(negRaw8(archsimd.BroadcastFloat32x8(x.mA[g+1][1])), f8(&f[4][1]), sumfD8)
				}
			}
			sum = sim.Add8(sum, sim.FMA8F(f8(&f[0][p]), sumfD8, sumf))
		}
	}
	return sum
}

// dot8DP4AQ8_0_16 is dp4aDotQ8_0_16 on each lane.
func dot8DP4AQ8_0_16(x *xTile, hd *[16]archsimd.Int32x8, f0, f1 *y8Scales, sum archsimd.Float32x8) archsimd.Float32x8 {
	zero := zeroF8
	for b := 0; b < 8; b++ {
		f, k := y8Half(f0, f1, b)
		sf := sim.FMA8F(archsimd.BroadcastFloat32x8(x.df[2*b]), sim.I2F8(hd[2*b]), zero)
		sf = sim.FMA8F(archsimd.BroadcastFloat32x8(x.df[2*b+1]), sim.I2F8(hd[2*b+1]), sf)
		sum = sim.FMA8F(f8(&f[k][0]), sf, sum)
	}
	return sum
}

// zeroF8 is +0 in every lane, read from memory: BroadcastFloat32x8(0) compiles to a
// legacy-SSE XORPS and a VBROADCASTSS in the loops.
var zeroF8 = archsimd.BroadcastFloat32x8(0)
