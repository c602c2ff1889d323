package mmq

import (
	"math/rand"
	"testing"

	"github.com/ggsim/ggsim/quant"
)

func TestLoadNVFP4(t *testing.T) {
	checkLoadPow2(t, quant.NVFP4, func(r *rand.Rand, blk []byte) {
		for s := 0; s < 4; s++ {
			blk[s] = byte(r.Intn(0x7f)) // the codes the CPU and GPU decode alike
		}
	}, func(x *xTile, k int) float64 {
		return float64(x.qs[k]) * float64(x.df[k/16])
	})
}

// TestLoadNVFP4SignedScale: the GPU reads the scale byte as a signed __nv_fp8_e4m3, so a
// code with bit 7 set is negative (0xb8 = -1, halved: -0.5), and 0xff (NaN) is 0; the CPU
// decode would give +0.5 and 240.
func TestLoadNVFP4SignedScale(t *testing.T) {
	row := make([]byte, 4*quant.NVFP4.TypeSize())
	row[0], row[1] = 0xb8, 0xff
	var x xTile
	loadNVFP4(&matrix{data: row, bs: quant.NVFP4.TypeSize(), stride: 4}, 0, 0, &x)
	if x.df[0] != -0.5 || x.df[1] != 0 {
		t.Errorf("scales 0xb8, 0xff load as %g, %g; want -0.5, 0", x.df[0], x.df[1])
	}
}

func TestMulMatNVFP4(t *testing.T) { checkMulMat(t, quant.NVFP4) }
