package quant

import "math/bits"

// Read-only access to ggml's i-quant lookup tables (data in grids_data.go, transcribed
// from ggml/src/ggml-common.h at d99724f2b141). The tables are unexported so that no
// caller can change them; the accessors inline to a bounds-checked load. An index out of
// range is a programming error and panics (Go's index check).
//
// Byte j of a 64-bit grid entry (j = 0 is the least significant byte) is value j of the
// group of 8 it encodes; byte j of a 32-bit entry is value j of a group of 4. This is the
// little-endian memory order the C code reads through (const uint8_t *) casts, and the
// order the CUDA kernels load as 32-bit ints (low int = values 0..3).

// Constants of the i-quant formats (ggml-common.h).
const (
	ngridIQ1S  = 2048           // entries of iq1s_grid and iq1s_grid_gpu
	iq3sNScale = 256 / 64       // scale bytes of a block_iq3_s (QK_K/64)
	iq1sDelta  = float32(0.125) // IQ1S_DELTA: the shift of the IQ1_S grid values
	iq1mDelta  = float32(0.125) // IQ1M_DELTA: the shift of the IQ1_M grid values
)

// IQ2XXSGrid returns iq2xxs_grid[i]: 8 unsigned magnitudes, each 8, 25 or 43.
func IQ2XXSGrid(i uint8) uint64 { return iq2xxsGrid[i] }

// IQ2XSGrid returns iq2xs_grid[i], i < 512: 8 unsigned magnitudes, each 8, 25 or 43.
func IQ2XSGrid(i int) uint64 { return iq2xsGrid[i] }

// IQ2SGrid returns iq2s_grid[i], i < 1024: 8 unsigned magnitudes, each 8, 25 or 43.
func IQ2SGrid(i int) uint64 { return iq2sGrid[i] }

// IQ3XXSGrid returns iq3xxs_grid[i]: 4 unsigned magnitudes, each one of 4, 12, 20, 28,
// 36, 44, 52, 62.
func IQ3XXSGrid(i uint8) uint32 { return iq3xxsGrid[i] }

// IQ3SGrid returns iq3s_grid[i], i < 512: 4 unsigned odd magnitudes 1..15.
func IQ3SGrid(i int) uint32 { return iq3sGrid[i] }

// iq1sGridAt returns iq1s_grid[i], i < ngridIQ1S, the table the CPU dequantizers of IQ1_S
// and IQ1_M read (GGML_COMMON_IMPL_C): 8 int8 values in {-1, 0, +1}, byte j = value j.
func iq1sGridAt(i int) uint64 { return iq1sGrid[i] }

// IQ1SGridGPU returns iq1s_grid_gpu[i], i < ngridIQ1S, the table the CUDA kernels of
// IQ1_S and IQ1_M read: the same 8 values as iq1sGridAt(i), each plus 1 (so in {0, 1, 2}),
// packed as nibbles: value j (0..3) in the low nibble of byte j, value j+4 in its high
// nibble. A kernel takes (g>>0)&0x0F0F0F0F and (g>>4)&0x0F0F0F0F as two int8x4 words.
func IQ1SGridGPU(i int) uint32 { return iq1sGridGPU[i] }

// ksignsIQ2XSAt returns ksigns_iq2xs[i], i < 128: the 7 sign bits i plus an 8th bit that
// makes the number of set bits even (bit j set = value j negative).
func ksignsIQ2XSAt(i int) uint8 { return ksignsIQ2XS[i] }

// kmaskIQ2XSAt returns kmask_iq2xs[j] = 1<<j, j < 8.
func kmaskIQ2XSAt(j int) uint8 { return kmaskIQ2XS[j] }

// ksigns64At returns ksigns64[i], i < 128: ksignsIQ2XSAt(i) expanded to bytes, byte j = 0xff
// where bit j is set and 0 elsewhere (used by ggml's SYCL and CPU SIMD code).
func ksigns64At(i int) uint64 { return ksigns64[i] }

// UnpackKsigns is the CUDA kernels' unpack_ksigns (ggml-cuda/vecdotq.cuh): from v, whose
// low 7 bits are a sign group (bit 7 may hold anything, e.g. the next group's first bit),
// it returns ksignsIQ2XSAt(v&127) replicated into all four bytes:
// s = v ^ (popc(v)&1)<<7, s * 0x01010101.
func UnpackKsigns(v uint8) uint32 {
	p := uint32(bits.OnesCount8(v) & 1)
	s := uint32(v) ^ p<<7
	return s * 0x01010101
}
