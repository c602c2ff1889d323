package fp16path

import (
	"github.com/ggsim/ggsim/f16"
	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
)

// group is what one lane needs for its 16 consecutive weights of a row: the unsigned
// codes c_k (what the PRMT turns into the halves c_k·2^-24), the group's scale D and, for
// the types with a min, Mmin (0 otherwise). The weight is D·(c_k - off) for the offset
// types and D·c_k - Mmin for Q4_K/Q5_K.
type group struct {
	codes [16]uint8
	d, m  float32
}

// kernel describes one weight type of the path.
type kernel struct {
	qk int // values per block
	// off is the code offset removed in fp32 (32 for Q6_K, 4 for Q3_K, 128 for the
	// codebook and Q8_0 shift), 0 for the min types.
	off int
	// maxCode is the largest code the type produces (the overflow bound uses it).
	maxCode int
	min     bool // Q4_K / Q5_K: D·c - Mmin
	// load fills gr for 16-value group j (0..qk/16-1) of block blk.
	load func(blk []byte, j int, gr *group)
}

// kernels lists the types the path covers.
var kernels = map[quant.Type]kernel{
	quant.Q4_K:   {256, 0, 15, true, loadQ4_K},
	quant.Q5_K:   {256, 0, 31, true, loadQ5_K},
	quant.Q6_K:   {256, 32, 63, false, loadQ6_K},
	quant.Q3_K:   {256, 4, 7, false, loadQ3_K},
	quant.IQ4_XS: {256, 128, 241, false, loadIQ4_XS},
	quant.IQ4_NL: {32, 128, 241, false, loadIQ4_NL},
	quant.Q8_0:   {32, 128, 255, false, loadQ8_0},
}

// Supported reports whether the path has a kernel for t.
func Supported(t quant.Type) bool { _, ok := kernels[t]; return ok }

// Types returns the covered types in a fixed order.
func Types() []quant.Type {
	return []quant.Type{quant.Q4_K, quant.Q5_K, quant.Q6_K, quant.Q3_K, quant.IQ4_XS, quant.IQ4_NL, quant.Q8_0}
}

// MaxCode returns the largest unsigned code of type t (the c_k of the HFMA2 loop), 0 if
// the path does not cover t.
func MaxCode(t quant.Type) int { return kernels[t].maxCode }

func h2f(h f16.Half) float32 { return sim.H2F(h) }

// Every D and Mmin below is a binary16 (11 significant bits, at least 2^-24) times an
// integer of at most 6 bits: exact in float32 and never flushed.

func loadQ4_K(blk []byte, j int, gr *group) {
	b := quant.BlockQ4_K(blk)
	d, dmin := b.DM()
	sc, m := b.ScaleMin(j / 2)
	gr.d = sim.Mul(h2f(d), float32(sc))
	gr.m = sim.Mul(h2f(dmin), float32(m))
	for k := range gr.codes {
		gr.codes[k] = b.Q(16*j + k)
	}
}

func loadQ5_K(blk []byte, j int, gr *group) {
	b := quant.BlockQ5_K(blk)
	d, dmin := b.DM()
	sc, m := b.ScaleMin(j / 2)
	gr.d = sim.Mul(h2f(d), float32(sc))
	gr.m = sim.Mul(h2f(dmin), float32(m))
	for k := range gr.codes {
		gr.codes[k] = b.Q(16*j + k)
	}
}

func loadQ6_K(blk []byte, j int, gr *group) {
	b := quant.BlockQ6_K(blk)
	gr.d = sim.Mul(h2f(b.D()), float32(b.Scale(j)))
	gr.m = 0
	for k := range gr.codes {
		gr.codes[k] = uint8(b.Q(16*j+k) + 32)
	}
}

func loadQ3_K(blk []byte, j int, gr *group) {
	b := quant.BlockQ3_K(blk)
	gr.d = sim.Mul(h2f(b.D()), float32(b.Scale(j)))
	gr.m = 0
	for k := range gr.codes {
		gr.codes[k] = uint8(b.Q(16*j+k) + 4)
	}
}

func loadIQ4_XS(blk []byte, j int, gr *group) {
	b := quant.BlockIQ4_XS(blk)
	gr.d = sim.Mul(h2f(b.D()), float32(b.Ls(j/2)-32))
	gr.m = 0
	for k := range gr.codes {
		gr.codes[k] = uint8(int(quant.KValuesIQ4NL[b.Code(16*j+k)]) + 128)
	}
}

func loadIQ4_NL(blk []byte, j int, gr *group) {
	b := quant.BlockIQ4_NL(blk)
	gr.d = h2f(b.D())
	gr.m = 0
	qs := b.Qs()
	for k := range gr.codes {
		gr.codes[k] = uint8(int(quant.KValuesIQ4NL[(qs[k]>>(4*j))&0xF]) + 128)
	}
}

func loadQ8_0(blk []byte, j int, gr *group) {
	b := quant.BlockQ8_0(blk)
	gr.d = h2f(b.D())
	gr.m = 0
	qs := b.Qs()
	for k := range gr.codes {
		gr.codes[k] = qs[16*j+k] ^ 0x80 // (q + 128) mod 256: q in -128..127 gives 0..255
	}
}

// unpack turns the 16 codes into the 8 half2 weights of the HFMA2 loop, as the kernel does
// with PRMT: four codes packed in a 32-bit word c0|c1<<8|c2<<16|c3<<24 become the half2
// bit patterns __byte_perm(w, 0, 0x4140) = c0 | c1<<16 and __byte_perm(w, 0, 0x4342) =
// c2 | c3<<16. A half with bit pattern c < 2048 has the value c·2^-24 (a subnormal for
// c < 1024, 2^-14·(1 + (c-1024)/1024) = c·2^-24 above), so each weight is exactly c·2^-24.
//
// CUDA twin: fp16_partials, the two prmt per word; the loaders are load_q4_K ... load_q8_0 in gpu/cuda/kernels/fp16path.cu.
func unpack(codes *[16]uint8) (w [8]f16.Half2) {
	for i := 0; i < 4; i++ {
		word := int32(uint32(codes[4*i]) | uint32(codes[4*i+1])<<8 | uint32(codes[4*i+2])<<16 | uint32(codes[4*i+3])<<24)
		w[2*i] = f16.Half2FromBits(uint32(sim.BytePerm(word, 0, 0x4140)))
		w[2*i+1] = f16.Half2FromBits(uint32(sim.BytePerm(word, 0, 0x4342)))
	}
	return w
}
