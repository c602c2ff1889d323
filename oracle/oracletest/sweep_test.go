package oracletest

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ggsim/ggsim/gguf/golden"
)

func TestSweepHeader(t *testing.T) {
	d := golden.Device{Name: "NVIDIA H200", CC: 900, SMCount: 132, Driver: "580.159.04"}
	h := SweepHeader("ggml 0.21.0", d, time.Date(2026, 12, 2, 1, 6, 58, 0, time.UTC))
	if h != "# ggml 0.21.0 on NVIDIA H200 (cc 900, 132 SMs, driver 580.159.04), 2026-12-02T01:06:58Z" {
		t.Errorf("header %q", h)
	}
	p, got, ok := ParseSweepHeader(h)
	if !ok || p != "ggml 0.21.0" || got != d {
		t.Errorf("parsed %q %+v %v", p, got, ok)
	}
	for _, bad := range []string{"", "mmq\t1", "# ggml on H200", "# x on H200 (cc nine, 1 SMs, driver y)"} {
		if _, _, ok := ParseSweepHeader(bad); ok {
			t.Errorf("%q parsed as a header", bad)
		}
	}
}

// VerifySweepParallel reports in the record's order whatever order the workers finish
// in, and counts an unsupported case as not matched.
func TestVerifySweepParallel(t *testing.T) {
	var rec strings.Builder
	rec.WriteString("# test\n")
	const n = 12
	for i := 0; i < n; i++ {
		c, err := Sweep(SweepMMQ, 7, i)
		if err != nil {
			t.Fatal(err)
		}
		d := Digest([]float32{float32(i)})
		if i == 5 {
			d = Digest([]float32{-1})
		}
		fmt.Fprintln(&rec, SweepResult{Kind: SweepMMQ, Seed: 7, Index: i, Type: c.Type, Shape: c.Shape(), Profile: c.Profile, Digest: d})
	}
	run := func(c *SweepCase) ([]float32, error) {
		time.Sleep(time.Duration(n-c.Index) * time.Millisecond) // later cases finish first
		if c.Index == 9 {
			return nil, fmt.Errorf("%w: case 9", errors.ErrUnsupported)
		}
		return []float32{float32(c.Index)}, nil
	}
	rep, err := VerifySweepParallel(strings.NewReader(rec.String()), nil, run, 4)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Cases != n || rep.Match != n-2 || len(rep.Mismatch) != 1 || rep.Mismatch[0].Index != 5 || len(rep.Errors) != 1 || len(rep.Verdicts) != n {
		t.Fatalf("report %+v", rep)
	}
	for k, v := range rep.Verdicts {
		if v.Want.Index != k || v.Line != k+2 || v.Match != (k != 5 && k != 9) || (k == 9) != errors.Is(v.Err, errors.ErrUnsupported) {
			t.Errorf("verdict %d: %+v", k, v)
		}
	}
}

// TestSweepFrozen pins the inputs of a few cases of the sweep that the real H200 record
// (gpu/testdata/h200-cuda13-sweep) was made with: a change of the generator breaks every
// recorded sweep, and must be a new sweep kind instead.
func TestSweepFrozen(t *testing.T) {
	for _, c := range []struct {
		kind   string
		index  int
		shape  string
		digest string
	}{
		{"mmq", 0, "q4_0 K=192 N=256 M=127", "07da68cd9e1264896a1ee502ca755555ded66616a21a2ef9da493468b53f3fa6"},
		{"mmq", 1, "q4_1 K=160 N=255 M=169", "2714db30309f6ba3716866145d48d5ba454ac7ae59d167e85c301185c0650580"},
		{"mmq", 21, "q2_0 K=960 N=640 M=13", "7b7cda38e617ff664a65ebca639bd564685bcf1809e886e7174e90e833eb6075"},
		{"mmq", 1999, "iq4_xs K=2048 N=256 M=11", "c092950ed9628e88110886cebaaf66ff5ae26e638c399f15c555211de5bddf23"},
		{"mmqid", 0, "q4_0 K=64 N=366 E=4 U=3 T=127 B1=1", "8f01e2d4e7177c6e294cb6e2e18ffbc6ce2af2f33eef9ef62240b036cee1ef99"},
		{"mmqid", 499, "iq3_xxs K=512 N=93 E=32 U=4 T=14 B1=1", "28b78b8075f06b5d4746c995c8c4e3c92b69699ef6b95bf7b624b8ba3f630e8d"},
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
