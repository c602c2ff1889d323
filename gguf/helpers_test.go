package gguf

import (
	"bytes"
	"encoding/binary"
	"math"
	"testing"

	"github.com/ggsim/ggsim/quant"
)

// raw assembles GGUF bytes by hand, independently of Writer, so tests can state the
// encoding and build malformed files.
type raw struct{ bytes.Buffer }

func (r *raw) u8(x uint8) *raw   { r.WriteByte(x); return r }
func (r *raw) u32(x uint32) *raw { r.Write(binary.LittleEndian.AppendUint32(nil, x)); return r }
func (r *raw) u64(x uint64) *raw { r.Write(binary.LittleEndian.AppendUint64(nil, x)); return r }
func (r *raw) str(s string) *raw { r.u64(uint64(len(s))); r.WriteString(s); return r }
func (r *raw) header(version uint32, nt, nkv uint64) *raw {
	r.WriteString("GGUF")
	return r.u32(version).u64(nt).u64(nkv)
}
func (r *raw) pad(a int) *raw {
	for r.Len()%a != 0 {
		r.WriteByte(0)
	}
	return r
}
func (r *raw) kvU32(k string, v uint32) *raw { return r.str(k).u32(uint32(TypeUint32)).u32(v) }
func (r *raw) tensor(name string, typ quant.Type, off uint64, dims ...uint64) *raw {
	r.str(name).u32(uint32(len(dims)))
	for _, d := range dims {
		r.u64(d)
	}
	return r.u32(uint32(typ)).u64(off)
}

// sample is a small valid file with every scalar type, arrays, a nested array and three
// tensors, written by Writer.
func sample(t testing.TB) []byte {
	t.Helper()
	w := NewWriter()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(w.Add("general.architecture", ScalarOf("test")))
	must(w.Add("t.u8", ScalarOf(uint8(200))))
	must(w.Add("t.i8", ScalarOf(int8(-100))))
	must(w.Add("t.u16", ScalarOf(uint16(65000))))
	must(w.Add("t.i16", ScalarOf(int16(-32000))))
	must(w.Add("t.u32", ScalarOf(uint32(4000000000))))
	must(w.Add("t.i32", ScalarOf(int32(-2000000000))))
	must(w.Add("t.f32", ScalarOf(float32(1.5))))
	must(w.Add("t.bool", ScalarOf(true)))
	must(w.Add("t.str", ScalarOf("héllo")))
	must(w.Add("t.u64", ScalarOf(uint64(1)<<63)))
	must(w.Add("t.i64", ScalarOf(int64(-1)<<62)))
	must(w.Add("t.f64", ScalarOf(-2.25)))
	must(w.Add("t.arr.u8", ArrayOf([]uint8{1, 2, 3})))
	must(w.Add("t.arr.str", ArrayOf([]string{"a", "", "ccc"})))
	must(w.Add("t.arr.f32", ArrayOf([]float32{0.5, float32(math.Copysign(0, -1))})))
	must(w.Add("t.arr.bool", ArrayOf([]bool{true, false})))
	must(w.Add("t.arr.nested", ArrayOfArrays([]Value{ArrayOf([]int16{-1, 2}), ArrayOf([]string{"x"}), ArrayOfArrays(nil)})))
	must(w.AddTensor("w", quant.Q4_0, []int64{64, 3}, seq(2*18*3)))
	must(w.AddTensor("x", quant.F32, []int64{5}, seq(20)))
	must(w.AddTensor("ids", quant.I32, []int64{2, 1, 1}, seq(8)))
	var b bytes.Buffer
	if _, err := w.WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func seq(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + 1)
	}
	return b
}

func readBytes(b []byte) (*File, error) { return Read(bytes.NewReader(b), int64(len(b))) }
