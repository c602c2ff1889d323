package ggsim_test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"runtime"
	"strings"
	"testing"

	"github.com/ggsim/ggsim"
	"github.com/ggsim/ggsim/quant"
	"github.com/ggsim/ggsim/sim"
	"github.com/ggsim/ggsim/tiling"
)

// The fuzz targets of the front door: arbitrary block bytes (NaN, Inf and subnormal
// scales, every byte pattern) and arbitrary activations on the small shapes where ggml
// dispatches MMVQ and MMQ on the H200. Their seeds run in every go test; .ci/fuzz runs
// the campaign (docs/testing.md).

// fuzzTypes are the valid ggml types: the quantized ones reach MMVQ/MMQ, the others must
// be refused with errors.ErrUnsupported.
var fuzzTypes = func() []quant.Type {
	var ts []quant.Type
	for t := quant.Type(0); t < quant.TypeCount; t++ {
		if t.Valid() {
			ts = append(ts, t)
		}
	}
	return ts
}()

// fill returns n bytes repeating pat (zeros if pat is empty).
func fill(pat []byte, n int) []byte {
	out := make([]byte, n)
	if len(pat) == 0 {
		return out
	}
	for i := 0; i < n; i += copy(out[i:], pat) {
	}
	return out
}

// floats returns n float32 values whose bits repeat pat (4 little-endian bytes each);
// an empty pat gives a small fixed ramp.
func floats(pat []byte, n int) []float32 {
	out := make([]float32, n)
	if len(pat) < 4 {
		for i := range out {
			out[i] = float32(i%7-3) / 4
		}
		return out
	}
	raw := fill(pat[:len(pat)/4*4], 4*n)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
	}
	return out
}

func fuzzDevice(t testing.TB) sim.Device {
	d, err := sim.Lookup("H200")
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// sameFuzzBits fails unless a and b are the same float32 bits.
func sameFuzzBits(t *testing.T, what string, a, b []float32) {
	t.Helper()
	if len(a) != len(b) {
		t.Fatalf("%s: %d values, then %d", what, len(a), len(b))
	}
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			t.Fatalf("%s: element %d: %#08x, then %#08x", what, i, math.Float32bits(a[i]), math.Float32bits(b[i]))
		}
	}
}

// repeatable runs call again with GOMAXPROCS 1 and 2 and with 3 workers, and fails
// unless every run gives first's bits and error.
func repeatable(t *testing.T, first []float32, firstErr error, call func(opts ...ggsim.Option) (ggsim.Result, error)) {
	t.Helper()
	check := func(what string, opts ...ggsim.Option) {
		t.Helper()
		r, err := call(opts...)
		if (err == nil) != (firstErr == nil) {
			t.Fatalf("%s: error %v, first run %v", what, err, firstErr)
		}
		if err == nil {
			sameFuzzBits(t, what, first, r.Out)
		}
	}
	check("second run")
	check("3 workers", ggsim.Workers(3))
	prev := runtime.GOMAXPROCS(1)
	defer runtime.GOMAXPROCS(prev)
	check("GOMAXPROCS 1")
	runtime.GOMAXPROCS(2)
	check("GOMAXPROCS 2")
}

// mustBeUnsupported fails unless err (of a call with valid arguments) is nil or matches
// errors.ErrUnsupported.
func mustBeUnsupported(t *testing.T, err error) {
	t.Helper()
	if err != nil && !errors.Is(err, errors.ErrUnsupported) {
		t.Fatalf("valid arguments: error that is not errors.ErrUnsupported: %v", err)
	}
}

func FuzzMulMat(f *testing.F) {
	nan, inf, sub := []byte{0x00, 0x7e}, []byte{0x00, 0x7c}, []byte{0x01, 0x00} // f16 bits
	f.Add(uint8(quant.Q4_0), uint8(1), uint8(1), uint8(1), []byte{0x00, 0x3c, 0x12, 0x34}, []byte(nil))
	f.Add(uint8(quant.Q8_0), uint8(2), uint8(3), uint8(9), nan, []byte{0, 0, 0xc0, 0x7f})
	f.Add(uint8(quant.Q4_K), uint8(1), uint8(40), uint8(20), inf, []byte{0, 0, 0x80, 0x7f, 1, 0, 0, 0})
	f.Add(uint8(quant.Q6_K), uint8(4), uint8(7), uint8(8), sub, []byte{1, 0, 0, 0})
	f.Add(uint8(quant.IQ2_XXS), uint8(1), uint8(2), uint8(16), []byte{0xff}, []byte(nil))
	f.Add(uint8(quant.MXFP4), uint8(3), uint8(5), uint8(2), []byte{0xff, 0x00}, []byte{0xff, 0xff, 0xff, 0xff})
	f.Add(uint8(quant.NVFP4), uint8(2), uint8(1), uint8(12), []byte{0x7f, 0x80}, []byte(nil))
	f.Add(uint8(quant.F16), uint8(1), uint8(1), uint8(1), []byte(nil), []byte(nil))
	dev := fuzzDevice(f)
	f.Fuzz(func(t *testing.T, typ, kb, n, m uint8, data, act []byte) {
		w := ggsim.Weights{Type: fuzzTypes[int(typ)%len(fuzzTypes)], N: 1 + int(n)%40}
		w.K = (1 + int(kb)%4) * w.Type.BlockSize()
		M := 1 + int(m)%20
		rs, err := w.Type.RowSize(int64(w.K))
		if err != nil {
			t.Fatalf("row size of %d %v values: %v", w.K, w.Type, err)
		}
		w.Data = fill(data, int(rs)*w.N)
		b := floats(act, w.K*M)
		res, err := ggsim.MulMat(dev, w, b, M)
		mustBeUnsupported(t, err)
		if err == nil && len(res.Out) != w.N*M {
			t.Fatalf("%d outputs for %d×%d", len(res.Out), w.N, M)
		}
		repeatable(t, res.Out, err, func(opts ...ggsim.Option) (ggsim.Result, error) {
			return ggsim.MulMat(dev, w, b, M, opts...)
		})
		if err == nil && res.Decision.Kernel != tiling.KernelMMQ && w.N*M <= 64 {
			r, err := ggsim.MulMat(dev, w, b, M, ggsim.LaneByLane())
			if err != nil {
				t.Fatalf("lane by lane: %v", err)
			}
			sameFuzzBits(t, "lane by lane", res.Out, r.Out)
		}
	})
}

// FuzzMulMatID feeds arbitrary expert ids (out of range, negative, duplicated within a
// token) with arbitrary block bytes: an id outside [0, E) is an error naming its token
// and slot; a token naming one expert twice on MMQ is errors.ErrUnsupported (moe.Route);
// nothing panics and nothing reads out of bounds.
func FuzzMulMatID(f *testing.F) {
	f.Add(uint8(quant.Q4_0), uint8(1), uint8(4), uint8(4), uint8(2), uint8(2), uint8(1), []byte{0, 1, 2, 3}, []byte{0x00, 0x3c}, []byte(nil))
	f.Add(uint8(quant.Q8_0), uint8(2), uint8(3), uint8(4), uint8(1), uint8(2), uint8(1), []byte{1, 1}, []byte{0x00, 0x7e}, []byte(nil))               // duplicate, MMVQ
	f.Add(uint8(quant.Q4_K), uint8(1), uint8(5), uint8(4), uint8(12), uint8(2), uint8(1), []byte{0, 1, 2, 2}, []byte{0x00, 0x7c}, []byte{1, 0, 0, 0}) // duplicate, MMQ
	f.Add(uint8(quant.Q6_K), uint8(1), uint8(2), uint8(3), uint8(3), uint8(2), uint8(2), []byte{0, 1, 2, 0, 0xff, 1}, []byte{0xff}, []byte(nil))      // negative id
	f.Add(uint8(quant.Q5_K), uint8(1), uint8(2), uint8(3), uint8(16), uint8(3), uint8(0), []byte{0, 1, 2, 7}, []byte{0x12}, []byte(nil))              // id E and beyond
	f.Add(uint8(quant.IQ4_XS), uint8(2), uint8(9), uint8(8), uint8(20), uint8(4), uint8(1), []byte{5, 3, 1, 7, 0, 2}, []byte(nil), []byte(nil))
	dev := fuzzDevice(f)
	f.Fuzz(func(t *testing.T, typ, kb, n, e, tok, u, b1sel uint8, idb, data, act []byte) {
		w := ggsim.Weights{Type: fuzzTypes[int(typ)%len(fuzzTypes)], N: 1 + int(n)%40, E: 1 + int(e)%8}
		w.K = (1 + int(kb)%4) * w.Type.BlockSize()
		T, U := 1+int(tok)%20, 1+int(u)%6
		B1 := 1
		if b1sel%2 == 1 {
			B1 = U
		}
		rs, err := w.Type.RowSize(int64(w.K))
		if err != nil {
			t.Fatalf("row size of %d %v values: %v", w.K, w.Type, err)
		}
		w.Data = fill(data, int(rs)*w.N*w.E)
		b := floats(act, w.K*B1*T)
		ids := make([]int32, T*U)
		if len(idb) == 0 {
			idb = []byte{0}
		}
		for i := range ids {
			// Small ids mostly in range; bytes above 0x7f are negative.
			ids[i] = int32(int8(idb[i%len(idb)] + byte(i/len(idb))))
		}
		outside, dup := -1, false
		for i, id := range ids {
			if (id < 0 || int(id) >= w.E) && outside < 0 {
				outside = i
			}
			for v := i - i%U; v < i; v++ {
				dup = dup || ids[v] == id
			}
		}
		res, err := ggsim.MulMatID(dev, w, b, B1, T, ids, U)
		switch {
		case outside >= 0:
			want := fmt.Sprintf("expert id %d of token %d, slot %d is outside [0, %d)", ids[outside], outside/U, outside%U, w.E)
			if err == nil || errors.Is(err, errors.ErrUnsupported) || !strings.Contains(err.Error(), want) {
				t.Fatalf("ids %v (E = %d): error %v, want one saying %q", ids, w.E, err, want)
			}
			return
		case dup && res.Decision.Kernel == tiling.KernelMMQ:
			if !errors.Is(err, errors.ErrUnsupported) {
				t.Fatalf("ids %v with a duplicate within a token on MMQ: error %v, want errors.ErrUnsupported", ids, err)
			}
		default:
			mustBeUnsupported(t, err)
		}
		if err == nil && len(res.Out) != T*U*w.N {
			t.Fatalf("%d outputs for %d tokens of %d slots of %d rows", len(res.Out), T, U, w.N)
		}
		repeatable(t, res.Out, err, func(opts ...ggsim.Option) (ggsim.Result, error) {
			return ggsim.MulMatID(dev, w, b, B1, T, ids, U, opts...)
		})
	})
}
