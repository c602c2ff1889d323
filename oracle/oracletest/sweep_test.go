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
