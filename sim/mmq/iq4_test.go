package mmq

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ggsim/ggsim/quant"
)

// fixE8M0 sets the MXFP4 exponent byte to 2^(e-127) with e in 100..150, where
// ggml_cuda_e8m0_to_fp32(e)*0.5 and the CPU's ggml_e8m0_to_fp32_half are both exact.
func fixE8M0(blk []byte, r *rand.Rand) { blk[0] = byte(100 + r.IntN(51)) }

var iq4Cases = []typeCase{
	{t: quant.IQ4_NL, fix: fixD(false), value: valueDF},
	{t: quant.MXFP4, fix: fixE8M0, value: valueDF},
	{t: quant.IQ4_XS, fix: fixD(false), value: valueDF},
}

func TestLoadIQ4(t *testing.T) {
	for _, c := range iq4Cases {
		t.Run(c.t.String(), func(t *testing.T) { checkLoad(t, c) })
	}
}

func TestMulMatBoundIQ4(t *testing.T) {
	for _, c := range iq4Cases {
		t.Run(c.t.String(), func(t *testing.T) { checkMulMatBound(t, c) })
	}
}

// TestLoadMXFP4Scale pins x_df at the ends of the E8M0 range, where the GPU differs from
// the CPU's ggml_e8m0_to_fp32_half: FTZ flushes e = 0 and 1 to zero, and
// __nv_cvt_e8m0_to_bf16raw makes e = 255 a NaN (the FMUL by 0.5 returns the canonical
// NaN 0x7fffffff).
func TestLoadMXFP4Scale(t *testing.T) {
	for _, tc := range []struct {
		e    uint8
		want uint32 // float32 bits
	}{
		{0, 0}, {1, 0}, {2, 0x00800000}, {127, 0x3f000000}, {128, 0x3f800000}, {254, 0x7e800000}, {255, 0x7fffffff},
	} {
		w := make([]byte, 8*quant.MXFP4.TypeSize())
		for b := 0; b < 8; b++ {
			w[b*quant.MXFP4.TypeSize()] = tc.e
		}
		var x xTile
		loadMXFP4(&matrix{data: w, bs: quant.MXFP4.TypeSize(), stride: 8}, 0, 0, &x)
		for b := 0; b < 8; b++ {
			if got := math.Float32bits(x.df[b]); got != tc.want {
				t.Errorf("e = %d: x_df[%d] bits %#08x, want %#08x", tc.e, b, got, tc.want)
			}
		}
	}
}
