package sim

import (
	"bufio"
	"bytes"
	"compress/flate"
	_ "embed"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"sync"
)

// tanhRaw is MUFU.TANH measured on an NVIDIA H200 (sm_90, driver 580.159.04, CUDA 13.0)
// with inline PTX tanh.approx.f32 by gpu/measure/mufu_probe.cu, converted by
// gpu/measure/mufutab (gpu/testdata/h200-mufu/README.md): "TANH1", then for the input
// exponents 119..129 (|x| in [2^-8, 8)) one byte each, the number s_e of low mantissa bits
// the hardware ignores there, then a DEFLATE stream of signed varints: the output bits of
// each group of 2^s_e inputs, in increasing input order, each as the difference from the
// previous group's (the first from 0).
//
//go:embed mufu_tanh_sm90.bin
var tanhRaw string

const (
	tanhExpLo = 119 // |x| >= 2^-8: below it tanh.approx(x) = x
	tanhExpHi = 129 // |x| < 8; from 8 on the output is 1.0
)

var tanhTab struct {
	once  sync.Once
	err   error
	shift [tanhExpHi - tanhExpLo + 1]uint8
	off   [tanhExpHi - tanhExpLo + 1]uint32
	// Entry i is base[i/tanhChunk] + lo[i]: 2 bytes an entry instead of 4 (13 MB, not
	// 27 MB, for the 6.7 million entries), the outputs of a chunk lying within 2^16 of
	// its least (checked when decoding).
	base []uint32
	lo   []uint16
}

const tanhChunk = 64

func loadTanh() error {
	t := &tanhTab
	t.once.Do(func() { t.err = decodeTanh([]byte(tanhRaw)) })
	return t.err
}

func decodeTanh(raw []byte) error {
	t := &tanhTab
	n := len(t.shift)
	if len(raw) < 5+n || string(raw[:5]) != "TANH1" {
		return fmt.Errorf("sim: mufu_tanh_sm90.bin: bad header")
	}
	total := 0
	for i := 0; i < n; i++ {
		s := raw[5+i]
		if s > 23 {
			return fmt.Errorf("sim: mufu_tanh_sm90.bin: shift %d of exponent %d", s, tanhExpLo+i)
		}
		t.shift[i] = s
		t.off[i] = uint32(total)
		total += 1 << (23 - s)
	}
	// The varints are read from the DEFLATE stream as it inflates: the 7 MB body is
	// never held whole (simrun verify's peak memory), only the table itself.
	body := bufio.NewReaderSize(flate.NewReader(bytes.NewReader(raw[5+n:])), 1<<16)
	if total%tanhChunk != 0 {
		return fmt.Errorf("sim: mufu_tanh_sm90.bin: %d values, not whole chunks of %d", total, tanhChunk)
	}
	t.base = make([]uint32, total/tanhChunk)
	t.lo = make([]uint16, total)
	var v int64
	var chunk [tanhChunk]uint32
	for c := range t.base {
		least := uint32(math.MaxUint32)
		for k := range chunk {
			d, err := binary.ReadVarint(body)
			if err != nil {
				return fmt.Errorf("sim: mufu_tanh_sm90.bin: value %d of %d: %w", c*tanhChunk+k, total, err)
			}
			v += d
			chunk[k] = uint32(v)
			least = min(least, chunk[k])
		}
		t.base[c] = least
		for k, x := range chunk {
			if x-least > math.MaxUint16 {
				return fmt.Errorf("sim: mufu_tanh_sm90.bin: chunk %d spans %#x..%#x, more than 2^16", c, least, x)
			}
			t.lo[c*tanhChunk+k] = uint16(x - least)
		}
	}
	if _, err := body.ReadByte(); err != io.EOF {
		return fmt.Errorf("sim: mufu_tanh_sm90.bin: bytes after the last value (%v)", err)
	}
	return nil
}

// Tanh returns MUFU.TANH(x) as sm_90 computes tanh.approx.f32 — what tanhf compiles to
// under -use_fast_math with CUDA 13.0 (the two gave the same bits for all 2^32 inputs on
// an H200). The model, measured on an H200 for every input (gpu/testdata/h200-mufu):
//
//   - NaN gives CanonicalNaN32; the function is odd: Tanh(-x) = -Tanh(x) bit for bit;
//   - |x| < 2^-8 gives x itself (subnormals included: no FTZ);
//   - |x| >= 8 (and ±Inf) gives ±1;
//   - in between the hardware ignores the low s_e bits of the mantissa (s_e from 2 to 6
//     by exponent) and returns the measured value of the group, within 2^-16.5 relative
//     of tanh(x); the function is not monotone there (near 2..8 a few neighbouring groups
//     decrease by 1-3 ulp).
func Tanh(x float32) float32 {
	b := math.Float32bits(x)
	a := b & 0x7fffffff
	sign := b & 0x80000000
	switch {
	case a > 0x7f800000:
		return canonNaN
	case a < tanhExpLo<<23:
		return x
	case a >= 0x41000000:
		return math.Float32frombits(sign | 0x3f800000)
	}
	if err := loadTanh(); err != nil {
		panic(err) // the embedded table is part of the binary: only a build error gets here
	}
	i := a>>23 - tanhExpLo
	j := tanhTab.off[i] + (a&0x7fffff)>>tanhTab.shift[i]
	v := tanhTab.base[j/tanhChunk] + uint32(tanhTab.lo[j])
	return math.Float32frombits(sign | v)
}
