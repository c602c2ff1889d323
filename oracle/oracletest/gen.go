package oracletest

import (
	"math"
	"math/rand/v2"

	"pgregory.net/rapid"

	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
	"github.com/ggsim/ggsim/tiling"
)

// scaleKind is what a crafted weight-block scale holds.
type scaleKind int

const (
	scaleModerate  scaleKind = iota // a binary16 in [2^-12, 2^-5) (or the E8M0/UE4M3 equivalent)
	scaleMax                        // the largest finite scale: 65504 (E8M0 254, UE4M3 0x7e)
	scaleSubnormal                  // a binary16 subnormal (E8M0 0 or 1: float32 subnormals; UE4M3 exponent 0)
	scaleZero                       // 0 with random quants
	zeroBlock                       // every byte of the block 0
	scaleNaN                        // a binary16 NaN (E8M0 255; UE4M3 0x7f, which the GPU reads as 0)
	scaleInf                        // +Inf (E8M0 255)
	scaleNegInf                     // -Inf (E8M0 255)
)

var scaleKindNames = [...]string{"moderate", "max", "subnormal", "zero", "zero-block", "NaN", "+Inf", "-Inf"}

func (k scaleKind) String() string { return scaleKindNames[k] }

// finiteScaleKinds and allScaleKinds are the adversarial kinds drawn without and with
// non-finite inputs.
var (
	finiteScaleKinds = []scaleKind{scaleMax, scaleSubnormal, scaleZero, zeroBlock}
	allScaleKinds    = []scaleKind{scaleMax, scaleSubnormal, scaleZero, zeroBlock, scaleNaN, scaleInf, scaleNegInf}
)

// halfScaleOffsets returns the byte offsets, inside one block of t, of its binary16 scale
// fields: d first, then the min (Q4_1, Q5_1: m; K-quants: dmin). It returns nil for the
// types whose scale is not a plain binary16 field: IQ1_M (a binary16 spread over four
// nibbles), MXFP4 (E8M0) and NVFP4 (four UE4M3). TestScaleFields checks the table against
// quant.DequantizeRow.
func halfScaleOffsets(t quant.Type) []int {
	switch t {
	case quant.Q4_0, quant.Q5_0, quant.Q8_0, quant.IQ2_XXS, quant.IQ2_XS, quant.IQ2_S,
		quant.IQ3_XXS, quant.IQ3_S, quant.IQ1_S, quant.IQ4_NL, quant.IQ4_XS, quant.Q1_0, quant.Q2_0:
		return []int{0}
	case quant.Q4_1, quant.Q5_1, quant.Q4_K, quant.Q5_K:
		return []int{0, 2}
	case quant.Q2_K:
		return []int{80, 82}
	case quant.Q3_K:
		return []int{108}
	case quant.Q6_K:
		return []int{208}
	}
	return nil
}

func le16(b []byte) uint16     { return uint16(b[0]) | uint16(b[1])<<8 }
func put16(b []byte, v uint16) { b[0], b[1] = byte(v), byte(v>>8) }

// halfOf returns a binary16 of kind k (not zeroBlock).
func halfOf(k scaleKind, r *rand.Rand) uint16 {
	switch k {
	case scaleModerate:
		return uint16(3+r.IntN(8))<<10 | uint16(r.IntN(1024)) // 2^-12 .. 2^-5
	case scaleMax:
		return 0x7bff
	case scaleSubnormal:
		return uint16(1 + r.IntN(1023))
	case scaleNaN:
		return 0x7c00 | uint16(1+r.IntN(1023)) | uint16(r.IntN(2))<<15
	case scaleInf:
		return 0x7c00
	case scaleNegInf:
		return 0xfc00
	}
	return 0
}

// setIQ1MScale writes the binary16 h into the top nibbles of the four uint16 of an
// IQ1_M block's scales (bytes 48..55; see quant.BlockIQ1_M.D).
func setIQ1MScale(blk []byte, h uint16) {
	for i := 0; i < 4; i++ {
		o := 48 + 2*i
		v := le16(blk[o:])&0x0fff | (h>>(4*i)&0xf)<<12
		put16(blk[o:], v)
	}
}

// setScale writes a scale of kind k into one block of t. With min set it writes the
// second binary16 field (m, dmin) instead of d, where t has one (else nothing).
func setScale(t quant.Type, blk []byte, k scaleKind, min bool, r *rand.Rand) {
	if k == zeroBlock {
		clear(blk)
		return
	}
	if offs := halfScaleOffsets(t); offs != nil {
		i := 0
		if min {
			if len(offs) < 2 {
				return
			}
			i = 1
		}
		put16(blk[offs[i]:], halfOf(k, r))
		return
	}
	if min {
		return
	}
	switch t {
	case quant.IQ1_M:
		setIQ1MScale(blk, halfOf(k, r))
	case quant.MXFP4:
		var e byte
		switch k {
		case scaleModerate:
			e = byte(119 + r.IntN(6)) // 2^-8 .. 2^-3 (halved by the kernel)
		case scaleMax:
			e = 254
		case scaleSubnormal, scaleZero:
			e = byte(r.IntN(2)) // 2^-127, 2^-126 halved: float32 subnormals, flushed
		default:
			e = 255
		}
		blk[0] = e
	case quant.NVFP4:
		for s := 0; s < 4; s++ {
			var x byte
			switch k {
			case scaleModerate:
				x = byte(4+r.IntN(4))<<3 | byte(r.IntN(8)) // exponent 4..7: 2^-3 .. 2^0.9
			case scaleMax:
				x = 0x7e
			case scaleSubnormal:
				x = byte(1 + r.IntN(7))
			case scaleZero:
				x = 0
			default:
				x = 0x7f
			}
			blk[s] = x
		}
	default:
		panic("oracletest: no scale layout for " + t.String())
	}
}

// weightSpec describes how the weights of a case are made (drawn by drawWeights; the
// bytes are made by makeWeights from the data seed).
type weightSpec struct {
	// Quantized: goldenLike floats times Scale, through quant.QuantizeRowRef. Otherwise
	// random bytes with every scale field set to a moderate value.
	Quantized bool
	Scale     float32
	Specials  []weightSpecial
}

// weightSpecial is an adversarial block: row Row (over all experts), block Block.
type weightSpecial struct {
	Row, Block int
	Kind       scaleKind
	Min        bool // the min field (m, dmin) rather than d
}

// actKind is the base distribution of the activations.
type actKind int

const (
	actNormal actKind = iota // uniform [-1,1) times Scale, one in 64 times 8 (as the golden files)
	actTiny                  // normal times 1e-5 .. 3e-39: half-subnormal (or zero) q8_1 scales
	actEqual                 // every value of a row the same
	actBigSum                // blocks of one sign with |values| in [2100, 2600): |block sum| > 65504
	actHuge                  // |values| near the float32 maximum
)

var actKindNames = [...]string{"normal", "tiny", "all-equal", "|sum|>65504", "huge"}

func (k actKind) String() string { return actKindNames[k] }

// actSpecialKind is one adversarial activation value or block.
type actSpecialKind int

const (
	actZeroBlock actSpecialKind = iota // the 32-value block holding Index set to 0
	actMaxFloat                        // the value set to ±MaxFloat32
	actNaN
	actPosInf
	actNegInf
)

var actSpecialNames = [...]string{"zero-block", "max-float", "NaN", "+Inf", "-Inf"}

func (k actSpecialKind) String() string { return actSpecialNames[k] }

type actSpec struct {
	Kind     actKind
	Scale    float32
	Specials []actSpecial
}

type actSpecial struct {
	Row, Index int // activation row (column of b) and value index in it
	Kind       actSpecialKind
}

// drawShapeK draws K: a multiple of t's block size, from one of ten classes (rapid favours
// the small ones): at most 2048 for classes 0-6 (about 3/4 of the cases), in (2048, 4096]
// for 7-8 (about 1/7), in (4096, maxK] for 9 (about 1/10), where each thread of the
// kernel makes several vec_dot calls for every type.
func drawShapeK(rt *rapid.T, t quant.Type, maxK int) int {
	qk := t.BlockSize()
	class := rapid.IntRange(0, 9).Draw(rt, "K class (0-6: K<=2048, 7-8: <=4096, 9: >4096)")
	lo, hi := 1, max(1, 2048/qk)
	switch {
	case class == 9 && maxK > 4096:
		lo, hi = 4096/qk+1, maxK/qk
	case class >= 7:
		lo, hi = 2048/qk+1, 4096/qk
	}
	return qk * rapid.IntRange(lo, hi).Draw(rt, "K blocks")
}

// mmvqBatches returns the column counts 1..8 for which ggml dispatches MUL_MAT of t on dev
// to MMVQ (ids false), or the token counts for MUL_MAT_ID (ids true).
func mmvqBatches(dev sim.Device, t quant.Type, ids bool) []int {
	var ms []int
	for m := 1; m <= tiling.MMVQMaxBatchSize; m++ {
		var d tiling.Decision
		if ids {
			// The MMVQ decision depends on neither E nor the matrix size.
			d = tiling.MulMatID(dev, t, tiling.Shape{K: int64(t.BlockSize()), N: 1, M: int64(m), Experts: 8})
		} else {
			d = tiling.MulMat(dev, t, tiling.Shape{K: int64(t.BlockSize()), N: 1, M: int64(m)})
		}
		if d.Kernel.IsMMVQ() {
			ms = append(ms, m)
		}
	}
	return ms
}

// drawWeights draws how the rows×K weights are made. Types with a reference quantizer
// are quantized from floats in the plain profile; raw blocks otherwise.
func drawWeights(rt *rapid.T, t quant.Type, rows, nblocks int, adversarial, nonFinite bool) weightSpec {
	_, hasQ := quantizer(t)
	var w weightSpec
	if hasQ {
		w.Quantized = !adversarial || rapid.Bool().Draw(rt, "weights quantized from floats")
	}
	if w.Quantized {
		w.Scale = 0.05
		if adversarial {
			w.Scale = rapid.SampledFrom([]float32{0.05, 1, 1e-4, 3e4}).Draw(rt, "weight float scale")
		}
	}
	if !adversarial {
		return w
	}
	kinds := finiteScaleKinds
	if nonFinite {
		kinds = allScaleKinds
	}
	n := rapid.IntRange(0, 4).Draw(rt, "adversarial weight blocks")
	for i := 0; i < n; i++ {
		s := weightSpecial{
			Row:   rapid.IntRange(0, rows-1).Draw(rt, "special weight row"),
			Block: rapid.IntRange(0, nblocks-1).Draw(rt, "special weight block"),
			Kind:  rapid.SampledFrom(kinds).Draw(rt, "special weight kind"),
		}
		if len(halfScaleOffsets(t)) == 2 && s.Kind != zeroBlock {
			s.Min = rapid.IntRange(0, 3).Draw(rt, "special block: 0-2 its d, 3 its min field") == 3
		}
		w.Specials = append(w.Specials, s)
	}
	return w
}

func quantizer(t quant.Type) (quant.Codec, bool) {
	c, err := quant.CodecOf(t)
	return c, err == nil && c.QuantizeRef != nil
}

// makeWeights makes the bytes of rows rows of K values of t, and reports which rows hold
// a block whose scale poisons the arithmetic (see scalePoisons).
func makeWeights(t quant.Type, K, rows int, w weightSpec, r *rand.Rand) (a []byte, poisoned []bool) {
	rs, err := t.RowSize(int64(K))
	if err != nil {
		panic("oracletest: " + err.Error())
	}
	a = make([]byte, int(rs)*rows)
	bs := t.TypeSize()
	nb := K / t.BlockSize()
	if w.Quantized {
		x := goldenLike(r, K*rows, w.Scale)
		for i := 0; i < rows; i++ {
			if err := quant.QuantizeRowRef(t, x[i*K:(i+1)*K], a[i*int(rs):(i+1)*int(rs)]); err != nil {
				panic("oracletest: " + err.Error())
			}
		}
	} else {
		for i := range a {
			a[i] = byte(r.Uint32())
		}
		nf := max(1, len(halfScaleOffsets(t)))
		for blk := 0; blk < rows*nb; blk++ {
			b := a[blk*bs : (blk+1)*bs]
			for f := 0; f < nf; f++ {
				setScale(t, b, scaleModerate, f == 1, r)
			}
		}
	}
	for _, s := range w.Specials {
		o := s.Row*int(rs) + s.Block*bs
		setScale(t, a[o:o+bs], s.Kind, s.Min, r)
	}
	poisoned = make([]bool, rows)
	for i := range poisoned {
		for blk := 0; blk < nb && !poisoned[i]; blk++ {
			o := i*int(rs) + blk*bs
			poisoned[i] = dPoisons(t, a[o:o+bs])
		}
	}
	return a, poisoned
}

// dPoisons reports whether the block's d is non-finite in the kernel's arithmetic: a
// binary16 NaN or ±Inf (IQ1_M's packed one included), or MXFP4's E8M0 255 (+Inf as CUDA
// >= 12.8 converts it, and as the bit pattern 0xff<<23 before). NVFP4 has none: the GPU
// reads its UE4M3 NaN codes as 0. Every product of the block is then ±Inf or NaN.
func dPoisons(t quant.Type, b []byte) bool {
	switch {
	case halfScaleOffsets(t) != nil:
		return le16(b[halfScaleOffsets(t)[0]:])&0x7c00 == 0x7c00
	case t == quant.IQ1_M:
		return quant.BlockIQ1_M(b).D()&0x7c00 == 0x7c00
	case t == quant.MXFP4:
		return b[0] == 255
	}
	return false
}

// drawActs draws how nrows activation rows of K values are made.
func drawActs(rt *rapid.T, nrows, K int, adversarial, nonFinite bool) actSpec {
	a := actSpec{Kind: actNormal}
	scales := []float32{1, 1e-3, 100}
	if !adversarial {
		a.Scale = rapid.SampledFrom(scales).Draw(rt, "activation scale")
		return a
	}
	a.Kind = rapid.SampledFrom([]actKind{actNormal, actTiny, actEqual, actBigSum, actHuge}).Draw(rt, "activation kind")
	switch a.Kind {
	case actNormal:
		a.Scale = rapid.SampledFrom(scales).Draw(rt, "activation scale")
	case actTiny:
		a.Scale = rapid.SampledFrom([]float32{1e-5, 1e-7, 1e-9, 3e-39}).Draw(rt, "activation scale")
	}
	kinds := []actSpecialKind{actZeroBlock, actMaxFloat}
	if nonFinite {
		kinds = append(kinds, actNaN, actPosInf, actNegInf)
	}
	n := rapid.IntRange(0, 4).Draw(rt, "adversarial activations")
	for i := 0; i < n; i++ {
		a.Specials = append(a.Specials, actSpecial{
			Row:   rapid.IntRange(0, nrows-1).Draw(rt, "special activation row"),
			Index: rapid.IntRange(0, K-1).Draw(rt, "special activation index"),
			Kind:  rapid.SampledFrom(kinds).Draw(rt, "special activation kind"),
		})
	}
	return a
}

// makeActs makes nrows rows of K float32 (row j is b[j*K:(j+1)*K]).
func makeActs(nrows, K int, s actSpec, r *rand.Rand) []float32 {
	b := make([]float32, nrows*K)
	switch s.Kind {
	case actNormal, actTiny:
		copy(b, goldenLike(r, len(b), s.Scale))
	case actEqual:
		vals := []float32{1, -1, 0.37, -3.5e-3, 1e-6, 0, 1000, 65504}
		for j := 0; j < nrows; j++ {
			v := vals[r.IntN(len(vals))]
			for k := range K {
				b[j*K+k] = v
			}
		}
	case actBigSum:
		for i := 0; i < len(b); i += 32 {
			sign := float32(1)
			if r.IntN(2) == 0 {
				sign = -1
			}
			for k := i; k < min(i+32, len(b)); k++ {
				b[k] = sign * (2100 + float32(500*r.Float32())) // no fused multiply-add: the generated bytes must not depend on GOARCH/GOAMD64
			}
		}
	case actHuge:
		for i := range b {
			b[i] = (2*r.Float32() - 1) * math.MaxFloat32 // exact whether fused or not: 2x-1 of x = k/2^24
		}
	}
	for _, sp := range s.Specials {
		i := sp.Row*K + sp.Index
		switch sp.Kind {
		case actZeroBlock:
			lo := sp.Row*K + sp.Index/32*32
			clear(b[lo:min(lo+32, (sp.Row+1)*K)])
		case actMaxFloat:
			b[i] = math.MaxFloat32
			if r.IntN(2) == 0 {
				b[i] = -math.MaxFloat32
			}
		case actNaN:
			b[i] = float32(math.NaN())
		case actPosInf:
			b[i] = float32(math.Inf(1))
		case actNegInf:
			b[i] = float32(math.Inf(-1))
		}
	}
	return b
}

// poisonThreshold: a 32-value block whose largest finite |value| reaches it has a q8_1
// scale amax/127 above 65520, which binary16 rounds to +Inf.
const poisonThreshold = 1e7

// poisonedRows reports, for each of the nrows activation rows, whether quantize_q8_1
// gives one of its 32-value blocks a non-finite scale d: a ±Inf in the block (amax =
// Inf), or a largest finite |value| >= poisonThreshold. Every product with that d is then
// ±Inf or NaN (Inf·0), whatever the order of the kernel's operations.
func poisonedRows(b []float32, K, nrows int) []bool {
	p := make([]bool, nrows)
	for j := 0; j < nrows; j++ {
		for lo := 0; lo < K && !p[j]; lo += 32 {
			for _, v := range b[j*K+lo : j*K+min(lo+32, K)] {
				if a := math.Abs(float64(v)); a >= poisonThreshold { // NaN compares false
					p[j] = true
					break
				}
			}
		}
	}
	return p
}

// goldenLike draws n values as the golden files do: uniform [-1,1) times scale, one in
// 64 times 8.
func goldenLike(r *rand.Rand, n int, scale float32) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = (2*r.Float32() - 1) * scale // 2x-1 is exact for x = k/2^24: fused or not, the same bits
		if r.IntN(64) == 0 {
			v[i] *= 8
		}
	}
	return v
}
