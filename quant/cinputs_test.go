package quant

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// TestWriteCInputs writes, when GGSIM_QUANT_C_INPUTS names a directory, the inputs of the
// tests whose digests come from ggml's C code, so that testdata/gen/ggmlrows.c can
// recompute those digests (commands in testdata/gen/README.md):
//
//	sweep-<type>.f32   TestKQuantSweep's 1000 rows of 512 values (its "inputs" digest is
//	                   checked here; ggmlrows ggqv of it hashes to the "file" digest)
//	cspot-<type>.f32   TestQuantizeRefCSpot's row (ggmlrows quantize: its digest)
//	dspot-<type>.raw   TestDequantizeCSpot's blocks (ggmlrows dequantize: its digest)
//
// Without the variable there is nothing to write and the test skips, saying so.
func TestWriteCInputs(t *testing.T) {
	dir := os.Getenv("GGSIM_QUANT_C_INPUTS")
	if dir == "" {
		t.Skip("GGSIM_QUANT_C_INPUTS is not set: no inputs for testdata/gen/ggmlrows.c requested")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	f32 := func(v []float32) []byte {
		b := make([]byte, 4*len(v))
		for i, f := range v {
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(f))
		}
		return b
	}
	write := func(name string, b []byte) {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, typ := range kqTypes {
		s := kqSplitMix(0x4b515357 + uint64(typ))
		x := make([]float32, kqSweepCols)
		var all []byte
		for r := 0; r < kqSweepRows; r++ {
			special := r%4 == 3
			kqSweepBlock(&s, x[:QK_K], special)
			kqSweepBlock(&s, x[QK_K:], special)
			all = append(all, f32(x)...)
		}
		sum := sha256.Sum256(all)
		if got := hex.EncodeToString(sum[:]); got != kqSweepDigests[typ].inputs {
			t.Fatalf("%v: sweep inputs hash to %s, want %s (TestKQuantSweep builds them differently)", typ, got, kqSweepDigests[typ].inputs)
		}
		write("sweep-"+typ.String()+".f32", all)
	}
	for _, typ := range ixQuantTypes {
		write("cspot-"+typ.String()+".f32", f32(ixQuantPattern(typ)))
	}
	for _, typ := range ixTypes {
		write("dspot-"+typ.String()+".raw", ixPatternRow(typ))
	}
}
