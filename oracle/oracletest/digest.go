package oracletest

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/ggsim/ggsim/oracle"
	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
	"github.com/ggsim/ggsim/sim/q8"
)

// Digest sweeps are checks too large to record case by case: every float32 through the
// activation quantizer, millions of random weight blocks through MUL_MAT. A digest sweep
// is a list of chunks, each a pure function of the sweep and its index; a run hashes the
// outputs of each chunk (ChunkDigest) and the chunk digests in index order into one
// digest of the whole sweep (CombineDigests). A GPU run must reproduce the digest; any
// set of machines can compute any subset of the chunks (a shard: the chunks whose index
// is i modulo n) and the parts are joined afterwards, so the result does not depend on
// how the sweep was split.
//
// Like Sweep, the generators are frozen: TestDigestSweepFrozen pins a few chunk digests.

// Digest sweep kinds.
const (
	// DigestQ8_1: every float32 bit pattern through quantize_q8_1 (sim/q8), as if the
	// 2^32 patterns in bit order were activation rows of 512: chunk c holds the 2^20
	// consecutive patterns r<<20 .. r<<20 + 2^20-1, r = the 12-bit reversal of c,
	// quantized as 32768 blocks of 32 consecutive patterns. The 4096 chunks cover all
	// 2^32 patterns; the reversal makes a prefix of the sweep (fewer chunks) sample the
	// whole range (chunk 0: +0 and subnormals, 1: -0.., 2: 2.0.., 3: -2.0.., ...).
	DigestQ8_1 = "q8_1"
	// DigestBlocks: random valid blocks of one weight type through MUL_MAT: chunk c is
	// BlockChunkRows rows of one block each (K = the type's block size) by M columns of
	// model-like activations, M = 1 + c%24 (mul_mat_vec_q for 1..8, mul_mat_q above on
	// the devices that dispatch so), from PCG(seed, c).
	DigestBlocks = "blocks"
)

// Q8_1Chunks is the number of chunks of the whole q8_1 sweep; Q8_1ChunkLen the float32
// patterns of one chunk.
const (
	Q8_1Chunks   = 1 << 12
	Q8_1ChunkLen = 1 << 20
)

// BlockChunkRows is the number of random blocks in one chunk of a blocks sweep.
const BlockChunkRows = 1024

// DigestSweep names a digest sweep: its kind, and for DigestBlocks the type and seed;
// Chunks is how many chunks it has (a q8_1 sweep of fewer than Q8_1Chunks chunks is a
// prefix of the exhaustive one).
type DigestSweep struct {
	Kind   string
	Type   quant.Type
	Seed   uint64
	Chunks int
}

// String is the sweep's canonical spelling, which ParseDigestSweep reads and the
// combined digest covers: "q8_1 chunks=4096", "blocks type=q4_K seed=1 chunks=1024".
func (s DigestSweep) String() string {
	if s.Kind == DigestBlocks {
		return fmt.Sprintf("%s type=%v seed=%d chunks=%d", s.Kind, s.Type, s.Seed, s.Chunks)
	}
	return fmt.Sprintf("%s chunks=%d", s.Kind, s.Chunks)
}

// Check says what is wrong with s, or nil.
func (s DigestSweep) Check() error {
	switch s.Kind {
	case DigestQ8_1:
		if s.Chunks < 1 || s.Chunks > Q8_1Chunks {
			return fmt.Errorf("oracletest: q8_1 sweep of %d chunks: want 1..%d", s.Chunks, Q8_1Chunks)
		}
	case DigestBlocks:
		if s.Chunks < 1 || s.Chunks > 1<<20 {
			return fmt.Errorf("oracletest: blocks sweep of %d chunks: want 1..%d", s.Chunks, 1<<20)
		}
		if !s.Type.Valid() || s.Type.BlockSize() <= 1 {
			return fmt.Errorf("oracletest: blocks sweep of type %v: want a quantized type", s.Type)
		}
		if halfScaleOffsets(s.Type) == nil && s.Type != quant.IQ1_M && s.Type != quant.MXFP4 && s.Type != quant.NVFP4 {
			return fmt.Errorf("oracletest: no known scale layout for %v to make random valid blocks: %w", s.Type, quant.ErrUnsupported)
		}
	default:
		return fmt.Errorf("oracletest: unknown digest sweep kind %q (want %q or %q)", s.Kind, DigestQ8_1, DigestBlocks)
	}
	return nil
}

// ParseDigestSweep reads String's spelling back (the keys in any order).
func ParseDigestSweep(str string) (DigestSweep, error) {
	f := strings.Fields(str)
	if len(f) == 0 {
		return DigestSweep{}, fmt.Errorf("oracletest: empty digest sweep")
	}
	s := DigestSweep{Kind: f[0]}
	seen := map[string]bool{}
	for _, kv := range f[1:] {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || seen[k] {
			return DigestSweep{}, fmt.Errorf("oracletest: digest sweep %q: %q is not a new key=value", str, kv)
		}
		seen[k] = true
		var err error
		switch k {
		case "type":
			s.Type, err = quant.ParseType(v)
		case "seed":
			s.Seed, err = strconv.ParseUint(v, 10, 64)
		case "chunks":
			s.Chunks, err = strconv.Atoi(v)
		default:
			err = fmt.Errorf("unknown key")
		}
		if err != nil {
			return DigestSweep{}, fmt.Errorf("oracletest: digest sweep %q: %s: %v", str, kv, err)
		}
	}
	if s.Kind == DigestBlocks && (!seen["type"] || !seen["seed"]) || s.Kind == DigestQ8_1 && (seen["type"] || seen["seed"]) {
		return DigestSweep{}, fmt.Errorf("oracletest: digest sweep %q: blocks takes type, seed and chunks; q8_1 takes chunks", str)
	}
	if !seen["chunks"] {
		return DigestSweep{}, fmt.Errorf("oracletest: digest sweep %q: no chunks=N", str)
	}
	if err := s.Check(); err != nil {
		return DigestSweep{}, err
	}
	return s, nil
}

// Q8_1Input returns chunk c of the q8_1 sweep: the float32 patterns r<<20 + i, r the
// 12-bit reversal of c.
func Q8_1Input(c int) []float32 {
	x := make([]float32, Q8_1ChunkLen)
	base := uint32(bits.Reverse16(uint16(c))>>4) << 20
	for i := range x {
		x[i] = math.Float32frombits(base + uint32(i))
	}
	return x
}

// Q8_1Bytes serializes q8_1 blocks as block_q8_1 is stored: d and s (binary16, little
// endian), then the 32 int8 values.
func Q8_1Bytes(blocks []q8.Block) []byte {
	out := make([]byte, 0, len(blocks)*36)
	for i := range blocks {
		b := &blocks[i]
		out = binary.LittleEndian.AppendUint16(out, uint16(b.D))
		out = binary.LittleEndian.AppendUint16(out, uint16(b.S))
		for _, q := range b.Qs {
			out = append(out, byte(q))
		}
	}
	return out
}

// BlocksCase returns chunk c of a blocks sweep: weights (BlockChunkRows rows of K, one
// block each), activations (M columns of K), K and M.
func (s DigestSweep) BlocksCase(c int) (a []byte, K int, b []float32, M int, err error) {
	if err := s.Check(); err != nil || s.Kind != DigestBlocks {
		return nil, 0, nil, 0, fmt.Errorf("oracletest: BlocksCase of %v: %v", s, err)
	}
	if c < 0 || c >= s.Chunks {
		return nil, 0, nil, 0, fmt.Errorf("oracletest: chunk %d of %v", c, s)
	}
	r := rand.New(rand.NewPCG(s.Seed, uint64(c)))
	K = s.Type.BlockSize()
	M = 1 + c%24
	a = make([]byte, BlockChunkRows*s.Type.TypeSize())
	randomValidBlocks(s.Type, a, r)
	b = RealisticActivations(K, M, r.Uint64())
	return a, K, b, M, nil
}

// randomValidBlocks fills a with random blocks of t: random bytes, then every scale
// field set to a moderate random value (setScale), so that no block is non-finite.
func randomValidBlocks(t quant.Type, a []byte, r *rand.Rand) {
	for i := range a {
		a[i] = byte(r.Uint32())
	}
	bs := t.TypeSize()
	nf := max(1, len(halfScaleOffsets(t)))
	for blk := 0; blk < len(a)/bs; blk++ {
		b := a[blk*bs : (blk+1)*bs]
		for f := 0; f < nf; f++ {
			setScale(t, b, scaleModerate, f == 1, r)
		}
	}
}

// ChunkDigest is the hex SHA-256 of one chunk's output bytes.
func ChunkDigest(out []byte) string {
	h := sha256.Sum256(out)
	return hex.EncodeToString(h[:])
}

// F32Bytes is out's float32 bits, little endian (what a blocks chunk hashes).
func F32Bytes(out []float32) []byte {
	b := make([]byte, 4*len(out))
	for i, v := range out {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
	}
	return b
}

// RunChunk computes chunk c of s and returns its digest: for q8_1 with the simulator's
// quantize_q8_1 (sim/q8), for blocks with impl's MulMat on dev.
func (s DigestSweep) RunChunk(c int, impl oracle.Impl, dev sim.Device) (string, error) {
	if err := s.Check(); err != nil {
		return "", err
	}
	if c < 0 || c >= s.Chunks {
		return "", fmt.Errorf("oracletest: chunk %d of %v (0..%d)", c, s, s.Chunks-1)
	}
	if s.Kind == DigestQ8_1 {
		// Rows of q8.RowPadding values: no padding blocks, each block 32 patterns.
		blocks, err := q8.QuantizeQ8_1(Q8_1Input(c), q8.RowPadding, Q8_1ChunkLen/q8.RowPadding)
		if err != nil {
			return "", err
		}
		return ChunkDigest(Q8_1Bytes(blocks)), nil
	}
	a, K, b, M, err := s.BlocksCase(c)
	if err != nil {
		return "", err
	}
	out, err := impl.MulMat(dev, s.Type, a, K, BlockChunkRows, b, M)
	if err != nil {
		return "", fmt.Errorf("chunk %d of %v (K=%d N=%d M=%d): %w", c, s, K, BlockChunkRows, M, err)
	}
	return ChunkDigest(F32Bytes(out)), nil
}

// CombineDigests is the digest of the whole sweep s from its chunk digests in index
// order: the hex SHA-256 of "ggsim digest v1\n", s.String(), "\n", then each chunk
// digest and "\n". It is an error unless there are exactly s.Chunks digests.
func CombineDigests(s DigestSweep, chunks []string) (string, error) {
	if len(chunks) != s.Chunks {
		return "", fmt.Errorf("oracletest: %d chunk digests for %v", len(chunks), s)
	}
	h := sha256.New()
	fmt.Fprintf(h, "ggsim digest v1\n%s\n", s)
	for i, d := range chunks {
		if len(d) != 64 {
			return "", fmt.Errorf("oracletest: chunk %d digest %q is not a hex SHA-256", i, d)
		}
		fmt.Fprintf(h, "%s\n", d)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
