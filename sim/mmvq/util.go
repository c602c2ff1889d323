package mmvq

import (
	"math"

	"github.com/ggsim/ggsim/f16"
)

func f32bits(f float32) uint32 { return math.Float32bits(f) }

// le32 returns the little-endian 32-bit word at b[0:4] (get_int_b1/b2/b4: the same value
// whatever the alignment the source assumes).
func le32(b []byte) int32 {
	_ = b[3]
	return int32(uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24)
}

// f16Mul is __hmul (HMUL2 lane): the exact product rounded to binary16, no FTZ.
func f16Mul(a, b f16.Half) f16.Half { return f16.Mul(a, b) }
