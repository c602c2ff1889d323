package mmq

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/ggsim/ggsim/f16"
	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
)

// Tests of iq.go that need no golden file. The bit-exact check against the H200 is
// `simrun verify ggml-h200-dev-extra.gguf` (its batch-40 cases).

// iqTypes are the i-quants of iq.go.
var iqTypes = []quant.Type{quant.IQ2_XXS, quant.IQ2_XS, quant.IQ2_S, quant.IQ3_XXS, quant.IQ3_S, quant.IQ1_S}

// randIQRow fills a row of nb random blocks of t: random bytes (every byte pattern is a
// valid block of these types) with the half scale d at bytes 0..1 replaced by a random
// positive normal half of at most sigBits significant bits and exponent in [-8, 0).
func randIQRow(r *rand.Rand, t quant.Type, nb, sigBits int) []byte {
	row := make([]byte, nb*t.TypeSize())
	for i := range row {
		row[i] = byte(r.Uint32())
	}
	for b := 0; b < nb; b++ {
		m := 1 + float64(r.IntN(1<<(sigBits-1)))/float64(int(1)<<(sigBits-1)) // 1.xxx, sigBits bits
		d := f16.FromFloat32(float32(math.Ldexp(m, -1-r.IntN(8))))
		o := b * t.TypeSize()
		row[o], row[o+1] = byte(d), byte(d>>8)
	}
	return row
}

func seeded(t *testing.T) *rand.Rand {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	return rand.New(rand.NewPCG(seed, 0))
}

// loadedValue is the value the vec_dot sees for element k of the loaded tile: for the
// q8_0 families float(qs)*x_df of its 32- or 16-value block; for IQ1_S (q8_1 family)
// float(qs)*dm.x + dm.y.
func loadedValue(t quant.Type, x *xTile, k int) float64 {
	q := float64(x.qs[k])
	switch t {
	case quant.IQ2_XS, quant.IQ2_S:
		return q * float64(x.df[k/16])
	case quant.IQ1_S:
		return q*float64(x.dm[k/32][0]) + float64(x.dm[k/32][1])
	default:
		return q * float64(x.df[k/32])
	}
}

// TestIQLoadMatchesDequantize checks every type's load_tiles port against quant's
// dequantization (the CPU's dequantize_row_*), value by value, on random blocks whose
// scale arithmetic is exact on both sides: float(qs)*scale (IQ1_S: qs*d1q + d1q*delta,
// qs = grid+1) must equal the dequantized value exactly. IQ1_S's d has at most 3
// significant bits so that d1q and d1q*delta fit a half.
func TestIQLoadMatchesDequantize(t *testing.T) {
	r := seeded(t)
	const nb = 64
	for _, typ := range iqTypes {
		sig := 11
		if typ == quant.IQ1_S {
			sig = 3
		}
		row := randIQRow(r, typ, nb, sig)
		want := make([]float32, nb*256)
		if err := quant.DequantizeRow(typ, row, want); err != nil {
			t.Fatal(err)
		}
		m := &matrix{data: row, bs: typ.TypeSize(), stride: nb}
		var x xTile
		for kb := 0; kb < nb; kb++ {
			kernels[typ].load(m, 0, kb, &x)
			for k := 0; k < 256; k++ {
				got := loadedValue(typ, &x, k)
				if w := float64(want[256*kb+k]); got != w {
					t.Fatalf("%v block %d value %d: loaded %g (qs %d), dequantized %g", typ, kb, k, got, x.qs[k], w)
				}
			}
		}
	}
}

// TestIQLoadScalesExactForAnyD checks the claim of iq.go's comment that the load-time
// float arithmetic is exact for every finite d: with d of full 11-bit precision, the
// scale the load writes equals the exact fp64 value of the source's formula.
func TestIQLoadScalesExactForAnyD(t *testing.T) {
	r := seeded(t)
	for _, typ := range iqTypes {
		row := randIQRow(r, typ, 16, 11)
		m := &matrix{data: row, bs: typ.TypeSize(), stride: 16}
		var x xTile
		for kb := 0; kb < 16; kb++ {
			kernels[typ].load(m, 0, kb, &x)
			blk := row[kb*typ.TypeSize():]
			d := float64(sim.H2F(h16(blk)))
			for g := 0; g < 8; g++ {
				var want []float64
				var got []float32
				switch typ {
				case quant.IQ2_XXS:
					ls := float64(u32(blk[2+8*g+4:])>>27 | 1)
					want, got = []float64{d * ls / 8}, x.df[g:g+1]
				case quant.IQ2_XS, quant.IQ2_S:
					sc := blk[66:]
					if typ == quant.IQ2_S {
						sc = blk[74:]
					}
					want = []float64{(float64(sc[g]&15)*d + d/2) / 4, (float64(sc[g]>>4)*d + d/2) / 4}
					got = x.df[2*g : 2*g+2]
				case quant.IQ3_XXS:
					ls := float64(u32(blk[2+64+4*g:]) >> 28)
					want, got = []float64{(ls*d + d/2) / 2}, x.df[g:g+1]
				case quant.IQ3_S:
					ls := float64(1 + 2*int((blk[106+g/2]>>(4*(g%2)))&15))
					want, got = []float64{ls * d}, x.df[g:g+1]
				case quant.IQ1_S:
					qh := int(blk[34+2*g]) | int(blk[35+2*g])<<8
					d1q := d * float64(((qh>>11)&0x0E)+1)
					delta := -0.875
					if qh&0x8000 != 0 {
						delta = -1.125
					}
					// The only rounding: the two conversions to half.
					want = []float64{
						float64(f16.FromFloat32(float32(d1q)).ToFloat32()),
						float64(f16.FromFloat32(float32(d1q * delta)).ToFloat32()),
					}
					got = x.dm[g][:]
				}
				for h := range want {
					if float64(got[h]) != want[h] {
						t.Fatalf("%v block %d group %d scale %d: got %g, want %g (d=%g)", typ, kb, g, h, got[h], want[h], d)
					}
				}
			}
		}
	}
}

// TestIQMulMatNearFP64 runs the whole kernel (plan, activation quantization, tiles,
// stream-K) for every type on a shape with a partial row tile and compares each output
// with the fp64 product of the dequantized weights and the float activations. The bound
// is the q8_1 rounding of the activations (half a step of amax/127 per value) plus
// 2^-8 of Σ|w·b| for the float and half roundings of the scales.
func TestIQMulMatNearFP64(t *testing.T) {
	r := seeded(t)
	dev, err := sim.Lookup("H200")
	if err != nil {
		t.Fatal(err)
	}
	const K, N, M = 1024, 130, 40
	for _, typ := range iqTypes {
		a := randIQRow(r, typ, K/256*N, 11)
		b := make([]float32, K*M)
		for i := range b {
			b[i] = float32(r.Float64()*2 - 1)
		}
		p, err := MakePlan(dev, typ, K, N, M)
		if err != nil {
			t.Fatal(err)
		}
		got, err := MulMat(dev, typ, a, K, N, b, M, p)
		if err != nil {
			t.Fatal(err)
		}
		w := make([]float32, K*N)
		if err := quant.DequantizeRow(typ, a, w); err != nil {
			t.Fatal(err)
		}
		for j := 0; j < M; j++ {
			col := b[j*K : (j+1)*K]
			for i := 0; i < N; i++ {
				var ref, abs, qerr float64
				for k0 := 0; k0 < K; k0 += 32 {
					var amax float64
					for k := k0; k < k0+32; k++ {
						amax = math.Max(amax, math.Abs(float64(col[k])))
					}
					for k := k0; k < k0+32; k++ {
						wk := float64(w[i*K+k])
						ref += wk * float64(col[k])
						abs += math.Abs(wk * float64(col[k]))
						qerr += math.Abs(wk) * amax / 254
					}
				}
				v := float64(got[j*N+i])
				if e := math.Abs(v - ref); !(e <= qerr+abs/256) {
					t.Fatalf("%v dst[%d,%d] = %g, fp64 %g: error %g over the bound %g", typ, i, j, v, ref, e, qerr+abs/256)
				}
			}
		}
	}
}
