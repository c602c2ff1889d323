package oracle_test

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/ggsim/ggsim"
	"github.com/ggsim/ggsim/gguf/golden"
	"github.com/ggsim/ggsim/oracle"
	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
	"github.com/ggsim/ggsim/sim/mmq"
	"github.com/ggsim/ggsim/streamk"
)

// mmqGolden builds a golden file with one MUL_MAT case dispatched to MMQ on the H200
// whose expected output is the simulator's, with element flip's lowest mantissa bit
// flipped (a GPU that differs in one element).
func mmqGolden(t *testing.T, typ quant.Type, K, N, M, flip int) *golden.File {
	t.Helper()
	r := rand.New(rand.NewPCG(5, 6))
	a := oracle.QuantizeRows(t, typ, oracle.GoldenLike(r, K*N, 0.05), K, N)
	b := oracle.GoldenLike(r, K*M, 1)
	h200, _ := sim.Lookup("H200")
	res, err := ggsim.MulMat(h200, ggsim.Weights{Type: typ, K: K, N: N, Data: a}, b, M)
	if err != nil {
		t.Fatal(err)
	}
	dst := res.Out
	dst[flip] = math.Float32frombits(math.Float32bits(dst[flip]) ^ 1)
	w := golden.NewWriter(h200Meta)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(w.AddTensor("a", typ, []int64{int64(K), int64(N)}, a))
	must(w.AddF32("b", []int64{int64(K), int64(M)}, b))
	must(w.AddF32("dst", []int64{int64(N), int64(M)}, dst))
	_, err = w.AddCase(golden.Case{Op: golden.OpMulMat, Src: []string{"a", "b"}, Dst: "dst"})
	must(err)
	var buf bytes.Buffer
	_, err = w.WriteTo(&buf)
	must(err)
	f, err := golden.New(bytes.NewReader(buf.Bytes()), int64(buf.Len()), "mmq-mutated.gguf")
	must(err)
	return f
}

// TestLocateMMQ: the mismatch report of a mutated MMQ golden case names the output tile,
// the stream-K blocks and K ranges that computed the element, and the fixup and its
// order where the value came from the fixup (checked against sim/mmq's plan).
func TestLocateMMQ(t *testing.T) {
	h200, _ := sim.Lookup("H200")
	for _, tc := range []struct {
		name       string
		typ        quant.Type
		K, N, M    int
		row, col   int
		wantFixup  bool
		wantStream bool
	}{
		// 2 tiles of 128 K blocks on 132 SMs: stream-K, each tile split over ~66 blocks.
		{"stream-K with fixup", quant.Q4_0, 4096, 256, 16, 200, 13, true, true},
		// 8 x blocks per row = one iteration: every block starts at a tile start.
		{"stream-K without fixup", quant.Q4_0, 256, 200, 40, 150, 39, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			idx := tc.col*tc.N + tc.row
			r := verifyOne(t, mmqGolden(t, tc.typ, tc.K, tc.N, tc.M, idx))
			if r.OK() || r.Status != oracle.StatusMismatch || r.Bits.First != idx || r.Kernel != "mmq" {
				t.Fatalf("one flipped bit: %s", r.Line())
			}
			p, err := mmq.MakePlan(h200, tc.typ, tc.K, tc.N, tc.M)
			if err != nil {
				t.Fatal(err)
			}
			it, jt := tc.row/p.I, tc.col/p.J
			tw := p.Tiles[p.Part.Params.TileIndex(streamk.TileCoord{It: it, Jt: jt})]
			want := []string{
				fmt.Sprintf("output tile (it %d, jt %d)", it, jt),
				fmt.Sprintf("row %d column %d of the tile", tc.row%p.I, tc.col%p.J),
			}
			if tc.wantStream != p.Part.StreamK {
				t.Fatalf("plan: stream-K %v, want %v", p.Part.StreamK, tc.wantStream)
			}
			for _, rg := range tw.Ranges {
				want = append(want, fmt.Sprintf("[%d, %d) by block %d", rg.Start, rg.Stop, rg.Block))
			}
			if tc.wantFixup {
				if len(tw.Adds) == 0 || len(tw.Ranges) < 2 {
					t.Fatalf("plan: tile has no fixup: %+v", tw)
				}
				order := fmt.Sprintf("dst = P%d + %s0", tw.End, strings.Repeat("(", len(tw.Adds)))
				for _, b := range tw.Adds {
					order += fmt.Sprintf(" + P%d)", b)
				}
				want = append(want, "the value came from the fixup", order)
			} else {
				if tw.Adds != nil {
					t.Fatalf("plan: tile has a fixup: %+v", tw)
				}
				want = append(want, fmt.Sprintf("stored by block %d, no fixup", tw.End))
			}
			for _, w := range want {
				if !strings.Contains(r.Detail, w) {
					t.Errorf("report lacks %q:\n%s", w, r.Detail)
				}
			}
			t.Logf("%s", r.Line())
		})
	}
}
