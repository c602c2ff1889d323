package cuda

import (
	"os"
	"strings"
	"testing"
)

// The documented layout is a bijection onto each matrix.
func TestMmaLayoutBijective(t *testing.T) {
	var a [16][32]int
	var b [32][8]int
	var c [16][8]int
	for lane := 0; lane < 32; lane++ {
		for i := 0; i < 16; i++ {
			r, k := MmaA(lane, i)
			a[r][k]++
		}
		for i := 0; i < 8; i++ {
			k, col := MmaB(lane, i)
			b[k][col]++
		}
		for i := 0; i < 4; i++ {
			r, col := MmaC(lane, i)
			c[r][col]++
		}
	}
	for r := range a {
		for k := range a[r] {
			if a[r][k] != 1 {
				t.Fatalf("A[%d][%d] held %d times", r, k, a[r][k])
			}
		}
	}
	for k := range b {
		for col := range b[k] {
			if b[k][col] != 1 {
				t.Fatalf("B[%d][%d] held %d times", k, col, b[k][col])
			}
		}
	}
	for r := range c {
		for col := range c[r] {
			if c[r][col] != 1 {
				t.Fatalf("C[%d][%d] held %d times", r, col, c[r][col])
			}
		}
	}
}

// A simulated device that computes with the documented layout passes the check; one
// whose B fragment has two k swapped in one lane fails it, and so does one whose D
// rows are swapped.
func TestCheckMmaLayout(t *testing.T) {
	ws := MmaLayoutExperiments(8, 3)
	outs := make([]MmaOut, len(ws))
	for i := range ws {
		outs[i] = MmaReference(&ws[i])
	}
	rep, err := CheckMmaLayout(ws, outs, 8)
	if err != nil || !rep.OK() || rep.OneHotChecked != 512 || rep.RandomChecked != 8 {
		t.Fatalf("documented device: %+v, %v", rep, err)
	}

	// A device that reads B element 0 and 1 of lane 5 the other way round.
	swapped := make([]MmaOut, len(ws))
	for i := range ws {
		w := ws[i]
		b0, b1 := w.getB(5, 0), w.getB(5, 1)
		w.setB(5, 0, b1)
		w.setB(5, 1, b0)
		swapped[i] = MmaReference(&w)
	}
	if rep, _ := CheckMmaLayout(ws, swapped, 8); rep.OK() {
		t.Fatal("a B layout with two k swapped passed")
	}

	// A device whose lane 0 and lane 4 D registers are exchanged (rows 0 and 1).
	rows := make([]MmaOut, len(ws))
	for i := range outs {
		rows[i] = outs[i]
		rows[i][0], rows[i][4] = outs[i][4], outs[i][0]
	}
	if rep, _ := CheckMmaLayout(ws, rows, 8); rep.OK() {
		t.Fatal("a D layout with two rows swapped passed")
	}
	if _, err := CheckMmaLayout(ws[:10], outs[:10], 8); err == nil {
		t.Fatal("wrong experiment count accepted")
	}
	if len(MmaLayoutTable()) == 0 {
		t.Fatal("empty table")
	}
}

// The layout table verified on the H200 (gpu/testdata) is the one MmaA/MmaB/MmaC give.
func TestMmaLayoutMatchesDeviceRecord(t *testing.T) {
	b, err := os.ReadFile("../testdata/h200-cuda13/mma_m16n8k32_s8_layout.txt")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	first, rest, _ := strings.Cut(s, "\n")
	if !strings.HasPrefix(first, "# verified on NVIDIA H200") {
		t.Fatalf("record's first line %q", first)
	}
	if rest != MmaLayoutTable() {
		t.Fatal("the recorded layout differs from MmaLayoutTable()")
	}
}
