package oracletest_test

import (
	"strings"
	"testing"

	"github.com/ggsim/ggsim"
	"github.com/ggsim/ggsim/oracle/oracletest"
	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
)

// TestDigestSweepFrozen pins chunk digests of the digest sweeps: a change to what a
// chunk is (its inputs) or to the bits the simulator gives for it breaks every recorded
// GPU digest, so it must be deliberate. The q8_1 chunks are the first (+0 and the
// positive subnormals, all flushed to zero), the second (-0 and the negative
// subnormals) and the last (NaNs with the sign bit); the blocks chunks run
// mul_mat_vec_q (chunk 0: M = 1) and mul_mat_q (chunk 23: M = 24) on the H200.
func TestDigestSweepFrozen(t *testing.T) {
	h200, err := sim.Lookup("H200")
	if err != nil {
		t.Fatal(err)
	}
	impl := ggsim.NewSimulator()
	q := oracletest.DigestSweep{Kind: oracletest.DigestQ8_1, Chunks: oracletest.Q8_1Chunks}
	b := oracletest.DigestSweep{Kind: oracletest.DigestBlocks, Type: quant.Q4_K, Seed: 1, Chunks: 24}
	for _, c := range []struct {
		s     oracletest.DigestSweep
		chunk int
		want  string
	}{
		{q, 0, "a76c77fe203db862b48214c88fbdc1d5560655ccba2f7a2c7166baf6f846e856"},
		{q, 4095, "472d7225db67906f181601aa0db4cd2fd5ab2124617dbacd676dd24fdec819da"},
		{b, 0, "6efb1241a78ba89ec45edaf39b3fdf3d11cc3d5c5e042f06d4c407aebcd558cb"},
		{b, 23, "40c5cee1eed068ba0f4d11bc0129ea6dc30e504f77ae1fbf77848a200329e069"},
	} {
		got, err := c.s.RunChunk(c.chunk, impl, h200)
		if err != nil {
			t.Fatal(err)
		}
		if got != c.want {
			t.Errorf("%v chunk %d: %s, pinned %s", c.s, c.chunk, got, c.want)
		}
	}
}

func TestDigestSweepSpec(t *testing.T) {
	for _, s := range []string{"q8_1 chunks=4096", "blocks type=q4_K seed=1 chunks=1024", "blocks type=iq2_xxs seed=0 chunks=1"} {
		d, err := oracletest.ParseDigestSweep(s)
		if err != nil || d.String() != s {
			t.Errorf("%q: %v, %v", s, d, err)
		}
	}
	for _, s := range []string{"", "q8_1", "q8_1 chunks=4097", "q8_1 chunks=0", "q8_1 type=q4_0 chunks=1", "blocks type=q4_K chunks=2",
		"blocks type=f32 seed=1 chunks=2", "blocks type=q4_K seed=1 chunks=2 chunks=3", "mmq chunks=1", "q8_1 chunks=x"} {
		if _, err := oracletest.ParseDigestSweep(s); err == nil {
			t.Errorf("%q parses", s)
		}
	}
	s := oracletest.DigestSweep{Kind: oracletest.DigestQ8_1, Chunks: 2}
	if _, err := oracletest.CombineDigests(s, []string{strings.Repeat("0", 64)}); err == nil {
		t.Error("one digest for two chunks combined")
	}
	d1, err1 := oracletest.CombineDigests(s, []string{strings.Repeat("0", 64), strings.Repeat("1", 64)})
	d2, err2 := oracletest.CombineDigests(s, []string{strings.Repeat("1", 64), strings.Repeat("0", 64)})
	if err1 != nil || err2 != nil || d1 == d2 {
		t.Errorf("the chunk order does not change the digest: %s %s %v %v", d1, d2, err1, err2)
	}
}
