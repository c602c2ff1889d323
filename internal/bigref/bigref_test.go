package bigref

import (
	"math"
	"math/big"
	"testing"
)

func TestExact(t *testing.T) {
	// 1 + 2^-60 is not a float64: the result must keep it.
	z := Exact('+', 1, 0x1p-60, 0)
	if z.Cmp(Float(1)) <= 0 {
		t.Fatal("sum rounded")
	}
	// fma of the float32 extremes: 2^-298 must survive beside 2^127.
	if z := Exact('f', 0x1p-149, 0x1p-149, 0x1p127); z.Cmp(Float(0x1p127)) <= 0 {
		t.Fatal("fma rounded")
	}
	if f, _ := Exact('*', 3, 7, 0).Float64(); f != 21 {
		t.Fatalf("3*7 = %v", f)
	}
	if f, _ := Exact('-', 3, 7, 0).Float64(); f != -4 {
		t.Fatalf("3-7 = %v", f)
	}
	if r := NonFinite('f', math.Inf(1), 0, 1); !math.IsNaN(r) {
		t.Fatalf("Inf*0+1 = %v", r)
	}
}

func TestRoundInt(t *testing.T) {
	for _, c := range []struct {
		x    float64
		away bool
		want int64
	}{
		{2.5, false, 2}, {3.5, false, 4}, {2.5, true, 3}, {2.4999, true, 2}, {0.5, false, 0}, {0.5, true, 1}, {7, false, 7},
	} {
		if got := RoundInt(big.NewFloat(c.x), c.away); got.Int64() != c.want {
			t.Errorf("RoundInt(%v, away=%v) = %v, want %d", c.x, c.away, got, c.want)
		}
	}
}
