package oracletest

import (
	"math"
	"slices"
	"testing"

	"github.com/ggsim/ggsim/gguf/golden"
	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/tiling"
)

// The GLU sweep kinds are pure functions of (kind, seed, index): the same triple gives
// the same case (shape, GLU parameters and input bytes), and every case is well formed.
func TestSweepGLUDeterministic(t *testing.T) {
	for _, kind := range []string{SweepGLU, SweepGLUID, SweepGLUID2} {
		seen := map[string]bool{}
		for i := 0; i < len(SweepMMVQTypes); i++ { // one case of each type
			c1, err := Sweep(kind, 20261202, i)
			if err != nil {
				t.Fatal(err)
			}
			if i < 4 { // a second generation of a few (TestSweepGLUFrozen pins others)
				c2, _ := Sweep(kind, 20261202, i)
				if c1.Shape() != c2.Shape() || c1.InputDigest() != c2.InputDigest() || c1.Profile != c2.Profile {
					t.Fatalf("%s/%d: two generations differ: %s %s vs %s %s", kind, i, c1.Shape(), c1.InputDigest(), c2.Shape(), c2.InputDigest())
				}
			}
			if seen[c1.InputDigest()] {
				t.Errorf("%s/%d: same inputs as an earlier case", kind, i)
			}
			seen[c1.InputDigest()] = true
			checkGLUCase(t, &c1)
		}
		a, _ := Sweep(kind, 1, 3)
		b, _ := Sweep(kind, 2, 3)
		if a.InputDigest() == b.InputDigest() {
			t.Errorf("%s: seeds 1 and 2 give the same case 3", kind)
		}
	}
}

func checkGLUCase(t *testing.T, c *SweepCase) {
	t.Helper()
	id := c.Kind + "/" + c.Shape()
	if !c.IsGLU() || !tiling.HasMMVQKernel(c.Type) {
		t.Fatalf("%s: op %s type %v", id, c.Op, c.Type)
	}
	rs, err := c.Type.RowSize(int64(c.K))
	if err != nil {
		t.Fatalf("%s: %v", id, err)
	}
	rows, nact := c.N, c.M
	if c.Op == string(golden.OpMulMatIDGLU) {
		rows, nact = c.N*c.E, c.B1*c.T
		if c.T != 1 || len(c.IDs) != c.U || c.U > c.E || (c.B1 != 1 && c.B1 != c.U) || (c.Kind == SweepGLUID2 && c.U > 1 && c.N%8 != 0) {
			t.Fatalf("%s: ids %v", id, c.IDs)
		}
		used := map[int32]bool{}
		for _, e := range c.IDs {
			if e < 0 || int(e) >= c.E || used[e] {
				t.Fatalf("%s: ids %v: out of range or repeated", id, c.IDs)
			}
			used[e] = true
		}
	} else if c.M != 1 {
		t.Fatalf("%s: M = %d, want one token", id, c.M)
	}
	if len(c.A) != int(rs)*rows || len(c.Up) != len(c.A) || len(c.B) != c.K*nact || c.OutLen() != c.N*max(c.M, c.U*c.T) {
		t.Fatalf("%s: sizes %d %d %d", id, len(c.A), len(c.Up), len(c.B))
	}
	for _, v := range c.B {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			t.Fatalf("%s: non-finite activation %v", id, v)
		}
	}
	switch c.GLU {
	case golden.GLUSwiGLU, golden.GLUGeGLU:
		if c.GLUAlpha != 0 || c.GLULimit != 0 {
			t.Fatalf("%s: alpha/limit on %s", id, c.GLU)
		}
	case golden.GLUSwiGLUOAI:
		if math.IsInf(float64(c.GLUAlpha), 0) || math.IsInf(float64(c.GLULimit), 0) || c.GLULimit < 0 {
			t.Fatalf("%s: alpha %v limit %v", id, c.GLUAlpha, c.GLULimit)
		}
	default:
		t.Fatalf("%s: glu %q", id, c.GLU)
	}
	if c.Fusion != golden.FusionAllowed && c.Fusion != golden.FusionDisabled {
		t.Fatalf("%s: fusion %q", id, c.Fusion)
	}
}

// SweepMMVQTypes is exactly the set of types with an MMVQ kernel.
func TestSweepMMVQTypes(t *testing.T) {
	var want []quant.Type
	for ty := quant.Type(0); ty < quant.TypeCount; ty++ {
		if tiling.HasMMVQKernel(ty) {
			want = append(want, ty)
		}
	}
	got := slices.Clone(SweepMMVQTypes)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("SweepMMVQTypes %v, want %v", got, want)
	}
}

// TestSweepGLUFrozen pins a few GLU cases of seed 20261202: a change of the generator
// breaks every recorded GLU sweep, and must be a new sweep kind instead.
func TestSweepGLUFrozen(t *testing.T) {
	for _, c := range []struct {
		kind   string
		index  int
		shape  string
		digest string
	}{
		{"glu", 0, "q4_0 K=864 N=13 M=1 swiglu allowed", "3b4b749bd0b07dacf97219de62a51487e184d086f781fffb3461522e79ebec50"},
		{"glu", 1, "q4_1 K=1408 N=223 M=1 swiglu_oai(1.702,7) allowed", "7b7343fd37ad60c00bc306c9e8f4e740d5cea66bf5a0f36cb606c194490d56bf"},
		{"glu", 22, "q2_0 K=896 N=256 M=1 swiglu disabled", "a1233e3a71ec218fb24d89c6291973ed00e3b0c00c3b0fa00995cfbb23c413a1"},
		{"glu", 26, "q5_1 K=1920 N=125 M=1 swiglu_oai(1.0860761,14.301189) allowed", "df9544fdf7a79f32d07e2c01f93687a550ad3d0257a8c6c9a5a66baaf938ef16"},
		{"gluid", 0, "q4_0 K=832 N=256 E=4 U=3 T=1 B1=3 swiglu_oai(1.702,7) allowed", "a25cedb222917458315e6b5e4d52b09437d331ea237010323f00153f9dffa903"},
		{"gluid", 999, "q5_K K=256 N=60 E=64 U=3 T=1 B1=3 swiglu allowed", "ac2a2713c6ae374cd2f75bf10c78efab621dd4da28810f40c828e9fcc2324c6a"},
		{"gluid2", 0, "q4_0 K=416 N=256 E=4 U=3 T=1 B1=3 swiglu_oai(1.702,7) allowed", "d4333601b6b1e5be6c26b51272e1dcdd866ea79568dce204f02f5051b9a8cfc4"},
		{"gluid2", 999, "q5_K K=256 N=24 E=64 U=3 T=1 B1=3 swiglu allowed", "26a45f339b3fac302674c52d894a6e9207695cd5c30172b95e508ea9c829a031"},
	} {
		sc, err := Sweep(c.kind, 20261202, c.index)
		if err != nil {
			t.Fatal(err)
		}
		if got := sc.Type.String() + " " + sc.Shape(); got != c.shape {
			t.Errorf("%s/%d: %s, want %s", c.kind, c.index, got, c.shape)
		}
		if d := sc.InputDigest(); d != c.digest {
			t.Errorf("%s/%d: inputs changed: digest %s, want %s", c.kind, c.index, d, c.digest)
		}
	}
}
