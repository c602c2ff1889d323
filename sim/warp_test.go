package sim

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ggsim/ggsim/f16"
)

var widths = []int{1, 2, 4, 8, 16, 32}

// refXorSrc is the CUDA Programming Guide's description of __shfl_xor_sync with a width:
// lane l reads lane l^m unless that lane is in a later group of width lanes, in which
// case it keeps its own value.
func refXorSrc(l, m, width int) int {
	src := l ^ m
	if src >= (l/width+1)*width {
		return l
	}
	return src
}

func iotaWarp() Warp {
	var w Warp
	for l := range w {
		w[l] = float32(l)
	}
	return w
}

func TestShfl(t *testing.T) {
	w := iotaWarp()
	for _, width := range widths {
		for m := 0; m < 32; m++ {
			got := w.ShflXor(m, width, nil)
			for l := range got {
				if want := refXorSrc(l, m, width); got[l] != float32(want) {
					t.Fatalf("ShflXor(%d, width %d): lane %d got lane %v, want %d", m, width, l, got[l], want)
				}
			}
		}
		for d := 0; d < 32; d++ {
			dn, up := w.ShflDown(d, width, nil), w.ShflUp(d, width, nil)
			for l := 0; l < 32; l++ {
				seg := l / width * width
				wantDn, wantUp := l, l
				if l+d < seg+width {
					wantDn = l + d
				}
				if l-d >= seg {
					wantUp = l - d
				}
				if dn[l] != float32(wantDn) || up[l] != float32(wantUp) {
					t.Fatalf("ShflDown/Up(%d, width %d) lane %d: %v/%v, want %d/%d", d, width, l, dn[l], up[l], wantDn, wantUp)
				}
			}
		}
		var src [WarpSize]int
		for l := range src {
			src[l] = (l*7 + 3) % 64
		}
		idx := w.ShflIdx(&src, width, nil)
		for l := range idx {
			if want := l/width*width + src[l]%width; idx[l] != float32(want) {
				t.Fatalf("ShflIdx width %d lane %d: %v, want %d", width, l, idx[l], want)
			}
		}
	}
}

func TestShflBadWidth(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("ShflXor with width 3 did not panic")
		}
	}()
	w := iotaWarp()
	w.ShflXor(1, 3, nil)
}

// genLane draws lane values that make reductions order-sensitive: mixed magnitudes,
// cancellation, subnormals, an occasional Inf or NaN.
func genLane(r *rand.Rand) float32 {
	switch r.IntN(20) {
	case 0:
		return math.Float32frombits(r.Uint32() & 0x807fffff) // subnormal
	case 1:
		return float32(math.Inf(1 - 2*r.IntN(2)))
	case 2:
		return float32(math.NaN())
	case 3, 4, 5:
		return float32(r.NormFloat64() * 1e8)
	}
	return float32(r.NormFloat64() * math.Pow(2, float64(r.IntN(40)-20)))
}

// TestReduceLaneByLaneEqualsTree: for every width, the lane-by-lane butterfly leaves every
// lane of a segment with the same bits, equal to ReduceSumTree / ReduceMaxTree of that
// segment's inputs.
func TestReduceLaneByLaneEqualsTree(t *testing.T) {
	r := rand.New(rand.NewPCG(51, 52))
	for it := 0; it < 20000; it++ {
		var in Warp
		noSpecial := it%2 == 0
		for l := range in {
			in[l] = genLane(r)
			for noSpecial && (math.IsInf(float64(in[l]), 0) || in[l] != in[l]) {
				in[l] = genLane(r)
			}
		}
		width := widths[it%len(widths)]
		sum, mx := in, in
		sum.ReduceSum(width, nil)
		mx.ReduceMax(width, nil)
		for seg := 0; seg < WarpSize; seg += width {
			x := make([]float32, width)
			copy(x, in[seg:seg+width])
			ts := ReduceSumTree(x)
			copy(x, in[seg:seg+width])
			tm := ReduceMaxTree(x)
			for l := seg; l < seg+width; l++ {
				if !same(sum[l], ts) {
					t.Fatalf("width %d lane %d: lane-by-lane sum %#08x, tree %#08x (inputs %v)", width, l, math.Float32bits(sum[l]), math.Float32bits(ts), in)
				}
				if !same(mx[l], tm) {
					t.Fatalf("width %d lane %d: lane-by-lane max %#08x, tree %#08x", width, l, math.Float32bits(mx[l]), math.Float32bits(tm))
				}
			}
		}
		if width == WarpSize {
			if r32 := ReduceSum32((*[WarpSize]float32)(&in)); !same(r32, sum[0]) {
				t.Fatalf("ReduceSum32 = %g, lane-by-lane %g", r32, sum[0])
			}
		}
	}
}

// TestReduceSumTreeShape pins the tree: width 4 computes (x0+x2) + (x1+x3); width 32
// pairs lanes at distance 16 first. The values are chosen so that a sequential sum or a
// different pairing gives other bits.
func TestReduceSumTreeShape(t *testing.T) {
	x := []float32{1, 0x1p-24, -1, 0x1p-24}
	// (1 + -1) + (2^-24 + 2^-24) = 2^-23; sequential ((1 + 2^-24) + -1) + 2^-24 = 2^-24
	if got := ReduceSumTree(append([]float32(nil), x...)); got != 0x1p-23 {
		t.Fatalf("tree sum = %g, want 2^-23", got)
	}
	var w Warp
	w[0], w[16], w[1], w[17] = 1<<24, 1, 1, -(1 << 24)
	// step 16: lane0 = 2^24+1 -> 2^24 (tie, even); lane1 = 1-2^24 = -(2^24-1) exact
	// step 1 (after 8,4,2 with zeros): 2^24 + -(2^24-1) = 1
	want := Add(Add(1<<24, 1), Add(1, -(1<<24)))
	if want != 1 {
		t.Fatalf("hand value %g", want)
	}
	c := &Counters{}
	w.ReduceSum(32, c)
	for l := range w {
		if w[l] != 1 {
			t.Fatalf("lane %d: %g, want 1", l, w[l])
		}
	}
	if c.Get(OpSHFL) != 5 || c.Get(OpFADD) != 5*32 {
		t.Fatalf("counters %v, want SHFL=5 FADD=160", c)
	}
}

// TestReduceHalf2Tree: the half2 tree equals a lane-by-lane half2 butterfly.
func TestReduceHalf2Tree(t *testing.T) {
	r := rand.New(rand.NewPCG(53, 54))
	for it := 0; it < 2000; it++ {
		width := widths[it%len(widths)]
		var lanes [WarpSize]f16.Half2
		for l := range lanes {
			lanes[l] = f16.MakeHalf2(float32(r.NormFloat64()*100), float32(r.NormFloat64()*1e-4))
		}
		in := lanes
		for off := width / 2; off > 0; off >>= 1 {
			var nxt [WarpSize]f16.Half2
			for l := range lanes {
				nxt[l] = f16.Add2(lanes[l], lanes[shflSource(l, off, width)])
			}
			lanes = nxt
		}
		for seg := 0; seg < WarpSize; seg += width {
			x := append([]f16.Half2(nil), in[seg:seg+width]...)
			tv := ReduceSumHalf2Tree(x)
			for l := seg; l < seg+width; l++ {
				if lanes[l] != tv {
					t.Fatalf("width %d lane %d: %#08x, tree %#08x", width, l, lanes[l].Bits(), tv.Bits())
				}
			}
		}
	}
}

func TestReduceSumInt(t *testing.T) {
	x := []int32{math.MaxInt32, 1, -5, 7}
	if got := ReduceSumInt(x); got != math.MinInt32+2 { // wraps
		t.Fatalf("ReduceSumInt = %d", got)
	}
}

func BenchmarkReduceSum32(b *testing.B) {
	var in [WarpSize]float32
	for l := range in {
		in[l] = float32(l) * 0.37
	}
	b.Run("mode=tree", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			_ = ReduceSum32(&in)
		}
	})
	b.Run("mode=lanes", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			w := Warp(in)
			w.ReduceSum(32, nil)
		}
	})
}
