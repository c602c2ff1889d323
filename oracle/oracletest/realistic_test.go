package oracletest

import (
	"bytes"
	"math"
	"testing"

	"github.com/ggsim/ggsim/quant"
)

// The generators are deterministic in their seed and have the heavy tails, row spread
// and outliers their doc promises.
func TestRealisticWeightsStatistics(t *testing.T) {
	const K, rows = 2048, 64
	w := RealisticFloats(K, rows, 1)
	if !slicesEqual(w, RealisticFloats(K, rows, 1)) || slicesEqual(w, RealisticFloats(K, rows, 2)) {
		t.Fatal("RealisticFloats is not a function of its seed alone")
	}
	// Heavy tails: the excess kurtosis of one row (no outlier channel spread within a
	// row changes it much) is well above a normal's 0.
	var m2, m4 float64
	for _, x := range w[:K] {
		m2 += float64(x) * float64(x)
		m4 += math.Pow(float64(x), 4)
	}
	m2, m4 = m2/K, m4/K
	if kurt := m4/(m2*m2) - 3; kurt < 1.5 {
		t.Errorf("excess kurtosis %.2f, want heavy tails (> 1.5)", kurt)
	}
	// Row scale spread: the largest row RMS is well above the smallest.
	lo, hi := math.Inf(1), 0.0
	for i := 0; i < rows; i++ {
		var s float64
		for _, x := range w[i*K : (i+1)*K] {
			s += float64(x) * float64(x)
		}
		r := math.Sqrt(s / K)
		lo, hi = min(lo, r), max(hi, r)
	}
	if hi/lo < 2 {
		t.Errorf("row RMS from %.3g to %.3g: want a spread of 2x or more", lo, hi)
	}
}

func TestRealisticActivationsStatistics(t *testing.T) {
	const K, M = 4096, 3
	x := RealisticActivations(K, M, 1)
	if !slicesEqual(x, RealisticActivations(K, M, 1)) {
		t.Fatal("RealisticActivations is not a function of its seed alone")
	}
	// The outlier dimensions (K/512 = 8 of them) are the same for every token and at least
	// 20 times the others' gain.
	for j := 0; j < M; j++ {
		big := 0
		for _, v := range x[j*K : (j+1)*K] {
			if math.Abs(float64(v)) > 15 {
				big++
			}
		}
		if big == 0 || big > 8 {
			t.Errorf("token %d: %d values above 15, want 1..8 outlier dimensions", j, big)
		}
	}
}

// A type without a reference quantizer gets valid blocks with finite, moderate values; a
// type with one gets its bytes.
func TestRealisticWeightsTypes(t *testing.T) {
	for _, typ := range []quant.Type{quant.Q4_0, quant.Q4_K, quant.Q6_K, quant.IQ2_XXS, quant.IQ1_M, quant.MXFP4, quant.NVFP4, quant.IQ4_XS} {
		a, err := RealisticWeights(typ, 512, 3, 1)
		if err != nil {
			t.Fatalf("%v: %v", typ, err)
		}
		b, _ := RealisticWeights(typ, 512, 3, 1)
		if !bytes.Equal(a, b) {
			t.Errorf("%v: not deterministic", typ)
		}
		rs, _ := typ.RowSize(512)
		dst := make([]float32, 512)
		for i := 0; i < 3; i++ {
			if err := quant.DequantizeRow(typ, a[i*int(rs):(i+1)*int(rs)], dst); err != nil {
				t.Fatalf("%v: %v", typ, err)
			}
			for k, v := range dst {
				if math.IsNaN(float64(v)) || math.Abs(float64(v)) > 100 {
					t.Fatalf("%v row %d value %d: %v", typ, i, k, v)
				}
			}
		}
	}
	if _, err := RealisticWeights(quant.Q4_K, 100, 1, 1); err == nil {
		t.Error("K=100 of q4_K: no error")
	}
}

func slicesEqual(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return false
		}
	}
	return true
}
