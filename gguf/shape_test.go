package gguf

import (
	"bufio"
	"bytes"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/ggsim/ggsim/quant"
)

// tdef is one tensor info record of a shape-rule row, written as given.
type tdef struct {
	name string
	typ  quant.Type
	dims []uint64 // as stored: a value above MaxInt64 is a negative ne
	off  uint64
}

// ruleFile writes a GGUF v3 file: an alignment key if align != 0, the tensor infos of ts,
// padding to the alignment, then data bytes of tensor data (zeros).
func ruleFile(align uint32, ts []tdef, data int) []byte {
	var r raw
	nkv := uint64(0)
	if align != 0 {
		nkv = 1
	}
	r.header(3, uint64(len(ts)), nkv)
	a := 32
	if align != 0 {
		r.kvU32(KeyAlignment, align)
		a = int(align)
	}
	for _, t := range ts {
		r.tensor(t.name, t.typ, t.off, t.dims...)
	}
	if len(ts) > 0 {
		r.pad(a)
	}
	r.Write(make([]byte, data))
	return r.Bytes()
}

// TestShapeRules: for every rule ggml's reader (src/gguf.cpp, gguf_init_from_file_impl, at
// the modelled commit d99724f2b141) applies to a tensor's name, shape, type and place, one
// row with the line it is at: whether ggml accepts the file, and that Read gives the same
// verdict (refusing with a message that names the rule) and Writer.AddTensor the same one
// for the same tensor. A row with a deviation says where and why ggsim refuses what ggml
// accepts; there are only such rows where ggml's own arithmetic overflows.
func TestShapeRules(t *testing.T) {
	const max = math.MaxInt64
	one := func(name string, typ quant.Type, data int, dims ...uint64) []byte {
		return ruleFile(0, []tdef{{name, typ, dims, 0}}, data)
	}
	huge := uint64(3472328296227680304) // the dims of issue 13's FuzzRead finding ("00000000")
	rows := []struct {
		name      string
		src       string // gguf.cpp:NNN, the line of the rule
		file      []byte
		ggml      bool   // ggml accepts the file
		msg       string // Read's error names the rule (refused rows)
		deviation string // why ggsim refuses what ggml accepts
		// writer: feed the file's tensors (dims as int64, data of the size Read computes)
		// to Writer.AddTensor, which must accept them iff Read does, refusing with msg.
		writer bool
	}{
		// name (gguf.cpp:646: name.length() >= GGML_MAX_NAME; :654: strcmp of C strings)
		{"name 63 bytes", "gguf.cpp:646", one(strings.Repeat("n", 63), quant.F32, 32, 1), true, "", "", true},
		{"name 64 bytes", "gguf.cpp:646", one(strings.Repeat("n", 64), quant.F32, 32, 1), false, "longer than ggml's limit of 63", "", true},
		{"duplicate name", "gguf.cpp:655", ruleFile(0, []tdef{{"t", quant.F32, []uint64{1}, 0}, {"t", quant.F32, []uint64{1}, 32}}, 64), false, "duplicate tensor name", "", true},
		{"names equal up to a NUL", "gguf.cpp:655", ruleFile(0, []tdef{{"a\x00x", quant.F32, []uint64{1}, 0}, {"a\x00y", quant.F32, []uint64{1}, 32}}, 64), false, `tensor "a" (#1)`, "", false},
		{"name with a NUL", "gguf.cpp:651", one("a\x00x", quant.F32, 32, 1), true, "", "", false},
		// n_dims (gguf.cpp:670: n_dims > GGML_MAX_DIMS)
		{"n_dims 0", "gguf.cpp:670", one("t", quant.F32, 32), true, "", "", true},
		{"n_dims 4", "gguf.cpp:670", one("t", quant.F32, 32, 1, 1, 1, 1), true, "", "", true},
		{"n_dims 5", "gguf.cpp:670", one("t", quant.F32, 32, 1, 1, 1, 1, 1), false, "n_dims 5 is more than 4", "", true},
		// negative ne (gguf.cpp:683: ne[j] < 0)
		{"ne[0] negative", "gguf.cpp:683", one("t", quant.F32, 32, math.MaxUint64), false, "ne[0] = -1 is negative", "", true},
		{"ne[3] negative", "gguf.cpp:683", one("t", quant.F32, 32, 1, 1, 1, 1<<63), false, "ne[3] = -9223372036854775808 is negative", "", true},
		{"negative beside a zero", "gguf.cpp:683", one("t", quant.F32, 32, 0, math.MaxUint64), false, "ne[1] = -1 is negative", "", true},
		// zero dims (gguf.cpp:693: the element test only where ggml_nelements > 0)
		{"zero dim", "gguf.cpp:693", one("t", quant.F32, 0, 0), true, "", "", true},
		{"zero dim, huge others (issue 13)", "gguf.cpp:693", one("t", quant.F32, 0, huge, huge, huge, 0), true, "", "", true},
		{"zero dim first, max second", "gguf.cpp:693", one("t", quant.Q4_K, 0, 0, max), true, "", "", true},
		{"zero dim, ne[0] not a block multiple", "gguf.cpp:724", one("t", quant.Q4_K, 0, 255, 0), false, "ne[0] = 255 is not a multiple", "", true},
		// element count (gguf.cpp:694-696: INT64_MAX/ne[k] <= ne[0]·…·ne[k-1], stricter
		// than overflow)
		{"INT64_MAX elements", "gguf.cpp:694", one("t", quant.I8, 32, max), false, "INT64_MAX/ne[1] <= ne[0]", "", true},
		{"2^63-2 elements (no overflow)", "gguf.cpp:694", one("t", quant.I8, 32, 1<<62-1, 2), false, "INT64_MAX/ne[1] <= ne[0]", "", true},
		{"2^63-2 elements by ne[2]", "gguf.cpp:695", one("t", quant.I8, 32, 1<<62-1, 1, 2), false, "INT64_MAX/ne[2] <= ne[0]·ne[1]", "", true},
		{"2^63 elements by ne[3]", "gguf.cpp:696", one("t", quant.I8, 32, 1<<20, 1<<20, 1<<20, 8), false, "INT64_MAX/ne[3] <= ne[0]·ne[1]·ne[2]", "", true},
		{"product wraps to 0", "gguf.cpp:693", one("t", quant.F32, 32, 1<<32, 1<<32), true, "INT64_MAX/ne[1] <= ne[0]",
			"ggml_nelements wraps to 0 (signed overflow), so ggml skips the test, and ggml_nbytes wraps to 0 too", true},
		// type (gguf.cpp:714: type < 0 || type >= GGML_TYPE_COUNT)
		{"type GGML_TYPE_COUNT", "gguf.cpp:714", one("t", quant.TypeCount, 32, 1), false, "unknown ggml type 43 (ggml defines 0..42)", "", true},
		{"type -1", "gguf.cpp:714", one("t", quant.Type(math.MaxUint32), 32, 1), false, "unknown ggml type 4294967295", "", true},
		// removed types have block size 0 (ggml.c type_traits), refused by gguf.cpp:724
		{"removed q4_2", "gguf.cpp:724", one("t", quant.Q4_2, 32, 32), false, "was removed", "", true},
		{"removed q4_0_4_4", "gguf.cpp:724", one("t", quant.Type(31), 32, 32), false, "was removed", "", true},
		{"removed iq4_nl_8_8", "gguf.cpp:724", one("t", quant.Type(38), 32, 32), false, "was removed", "", true},
		// block size (gguf.cpp:724: ne[0] % blck_size != 0; ne[0] = 1 when n_dims = 0)
		{"ne[0] a block", "gguf.cpp:724", one("t", quant.Q4_K, 160, 256), true, "", "", true},
		{"ne[0] not a block multiple", "gguf.cpp:724", one("t", quant.Q4_K, 160, 255), false, "ne[0] = 255 is not a multiple of the q4_K block size 256", "", true},
		{"n_dims 0, quantized", "gguf.cpp:724", one("t", quant.Q8_0, 64), false, "ne[0] = 1 is not a multiple", "", true},
		// byte size (gguf.cpp:733: nelements/blck > SIZE_MAX/type_size)
		{"2^64 bytes", "gguf.cpp:733", one("t", quant.F64, 32, 1<<61), false, "more than 2^63-1 bytes", "", true},
		{"2^63 bytes (ggml: its blob cannot be allocated or read)", "gguf.cpp:860", one("t", quant.F64, 32, 1<<60), false, "more than 2^63-1 bytes", "", true},
		{"2^64-8 bytes", "gguf.cpp:786", one("t", quant.F64, 32, 1<<61-1), true, "more than 2^63-1 bytes",
			"ggml passes :733 (2^61-1 <= SIZE_MAX/8), then GGML_PAD(2^64-8, 32) wraps to 0, so the tensor takes no room and ggml reads on", true},
		// data section (gguf.cpp:765: seek to the padded start; :779 offsets; :860 the padded
		// blob read in one piece)
		{"no room for the data section", "gguf.cpp:765", (&raw{}).header(3, 1, 0).tensor("t", quant.F32, 0, 1).Bytes(), false, "data section would start", "", false},
		{"no tensors, no padding", "gguf.cpp:765", (&raw{}).header(3, 0, 1).kvU32("k", 1).Bytes(), true, "", "", false},
		{"first offset 0", "gguf.cpp:779", one("t", quant.F32, 32, 2), true, "", "", false},
		{"misaligned", "gguf.cpp:779", ruleFile(0, []tdef{{"t", quant.F32, []uint64{2}, 8}}, 64), false, "data offset 8, ggml expects 0 (not a multiple of the alignment 32)", "", false},
		{"aligned gap", "gguf.cpp:779", ruleFile(0, []tdef{{"a", quant.F32, []uint64{2}, 0}, {"b", quant.F32, []uint64{2}, 64}}, 96), false, "data offset 64, ggml expects 32", "", false},
		{"overlap", "gguf.cpp:779", ruleFile(0, []tdef{{"a", quant.F32, []uint64{16}, 0}, {"b", quant.F32, []uint64{2}, 32}}, 96), false, "data offset 32, ggml expects 64", "", false},
		{"out of order", "gguf.cpp:779", ruleFile(0, []tdef{{"a", quant.F32, []uint64{2}, 32}, {"b", quant.F32, []uint64{2}, 0}}, 64), false, "data offset 32, ggml expects 0", "", false},
		{"zero-size tensors share an offset", "gguf.cpp:779", ruleFile(0, []tdef{{"z", quant.F32, []uint64{0}, 0}, {"a", quant.F32, []uint64{2}, 0}, {"y", quant.F32, []uint64{5, 0}, 32}}, 32), true, "", "", false},
		{"alignment 1", "gguf.cpp:779", ruleFile(1, []tdef{{"a", quant.I8, []uint64{3}, 0}, {"b", quant.I8, []uint64{5}, 3}}, 8), true, "", "", false},
		{"offset past the end", "gguf.cpp:860", ruleFile(0, []tdef{{"t", quant.F32, []uint64{9}, 0}}, 32), false, "runs past the end of the file", "", false},
		{"last padding missing", "gguf.cpp:860", ruleFile(0, []tdef{{"t", quant.F32, []uint64{2}, 0}}, 8), false, "padded to 32", "", false},
		// alignment (gguf.cpp:614: general.alignment must be u32; :623: a power of 2)
		{"alignment u64", "gguf.cpp:614", (&raw{}).header(3, 0, 1).str(KeyAlignment).u32(uint32(TypeUint64)).u64(32).Bytes(), false, "must be u32", "", false},
		{"alignment 48", "gguf.cpp:623", ruleFile(48, nil, 0), false, "alignment 48 is not a power of 2", "", false},
		{"alignment 0 (key)", "gguf.cpp:623", (&raw{}).header(3, 0, 1).kvU32(KeyAlignment, 0).Bytes(), false, "alignment 0 is not a power of 2", "", false},
		// metadata lengths (gguf.cpp:345 GGUF_MAX_STRING_LENGTH, :277 GGUF_MAX_ARRAY_ELEMENTS),
		// refused before the bytes are looked for
		{"string over 1 GiB", "gguf.cpp:345", (&raw{}).header(3, 0, 1).str("k").u32(uint32(TypeString)).u64(1<<30 + 1).Bytes(), false, "longer than ggml's limit of 1073741824", "", false},
		{"array over 2^30 elements", "gguf.cpp:277", (&raw{}).header(3, 0, 1).str("k").u32(uint32(TypeArray)).u32(uint32(TypeUint8)).u64(1<<30 + 1).Bytes(), false, "more elements than ggml's limit of 1073741824", "", false},
	}
	// ggml names the tensor "a\x00x" "a" (ggml_set_name, gguf.cpp:651); so does Read.
	if f, err := readBytes(one("a\x00x", quant.F32, 32, 1)); err != nil || f.Tensors[0].Name != "a" {
		t.Errorf("name with a NUL: %v", err)
	} else if _, ok := f.Tensor("a"); !ok {
		t.Error(`no tensor "a"`)
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			wantRead := r.ggml && r.deviation == ""
			_, err := readBytes(r.file)
			if (err == nil) != wantRead {
				t.Fatalf("%s: ggml accepts: %v (deviation: %q); Read: %v", r.src, r.ggml, r.deviation, err)
			}
			if err != nil && !strings.Contains(err.Error(), r.msg) {
				t.Errorf("%s: Read's error %q does not say %q", r.src, err, r.msg)
			}
			if !r.writer {
				return
			}
			// The same tensors through Writer: the dims as int64, data of Read's size.
			g, err := readHeaderOnly(r.file)
			if err != nil {
				t.Fatal(err)
			}
			w := NewWriter()
			var werr error
			for _, td := range g {
				dims := make([]int64, len(td.dims))
				for j, d := range td.dims {
					dims[j] = int64(d)
				}
				size := int64(0) // the size where the shape is valid (else the shape error comes first)
				if nel, err := numElements(dims); err == nil && !slices.ContainsFunc(dims, func(d int64) bool { return d < 0 }) && typeError(td.typ) == nil {
					size, _ = tensorBytes(nel, ggmlNE0(dims), td.typ)
				}
				if werr = w.AddTensor(td.name, td.typ, dims, make([]byte, size)); werr != nil {
					break
				}
			}
			if (werr == nil) != wantRead {
				t.Fatalf("%s: Read accepts: %v; Writer: %v", r.src, wantRead, werr)
			}
			if werr != nil && !strings.Contains(werr.Error(), r.msg) {
				t.Errorf("%s: Writer's error %q does not say %q", r.src, werr, r.msg)
			}
		})
	}
}

func ggmlNE0(dims []int64) int64 {
	if len(dims) == 0 {
		return 1
	}
	return dims[0]
}

// readHeaderOnly returns the tensor records of a file made by ruleFile (no metadata),
// without checking them.
func readHeaderOnly(b []byte) ([]tdef, error) {
	d := &decoder{br: bufio.NewReader(bytes.NewReader(b)), size: int64(len(b))}
	var magic [4]byte
	if err := d.read(magic[:], "magic"); err != nil {
		return nil, err
	}
	if _, err := d.u32("version"); err != nil {
		return nil, err
	}
	nt, err := d.u64("n_tensors")
	if err != nil {
		return nil, err
	}
	if _, err := d.u64("n_kv"); err != nil {
		return nil, err
	}
	var out []tdef
	for range nt {
		var td tdef
		if td.name, err = d.str("name"); err != nil {
			return nil, err
		}
		nd, err := d.u32("n_dims")
		if err != nil {
			return nil, err
		}
		for range nd {
			x, err := d.u64("ne")
			if err != nil {
				return nil, err
			}
			td.dims = append(td.dims, x)
		}
		ty, err := d.u32("type")
		if err != nil {
			return nil, err
		}
		td.typ = quant.Type(ty)
		if td.off, err = d.u64("offset"); err != nil {
			return nil, err
		}
		out = append(out, td)
	}
	return out, nil
}

// TestRemovedTypes: quant.Type.Valid is false exactly for the ids whose block size is 0
// in ggml.c's type_traits (the types ggml removed), which gguf.cpp:724 refuses.
func TestRemovedTypes(t *testing.T) {
	removed := map[quant.Type]bool{4: true, 5: true, 31: true, 32: true, 33: true, 36: true, 37: true, 38: true}
	for ty := quant.Type(0); ty < quant.TypeCount; ty++ {
		if ty.Valid() == removed[ty] {
			t.Errorf("type %d (%v): Valid %v, removed in ggml %v", ty, ty, ty.Valid(), removed[ty])
		}
		bs := uint64(1)
		if ty.Valid() {
			bs = uint64(ty.BlockSize())
		}
		_, err := readBytes(ruleFile(0, []tdef{{"t", ty, []uint64{bs}, 0}}, 1024))
		if (err == nil) != ty.Valid() {
			t.Errorf("type %d (%v): Read %v", ty, ty, err)
		}
	}
}

// TestWriterLayout: Writer places tensor i where tensor i-1 ends padded to the alignment
// (gguf.cpp:1394, gguf_add_tensor), the layout gguf.cpp:779 requires, and pads the last one
// (gguf.cpp:860 reads the padded blob).
func TestWriterLayout(t *testing.T) {
	w := NewWriter()
	for _, a := range []struct {
		name string
		dims []int64
	}{{"z", []int64{0}}, {"a", []int64{3}}, {"y", []int64{7, 0}}, {"b", []int64{9}}} {
		nel, _ := numElements(a.dims)
		if err := w.AddTensor(a.name, quant.F32, a.dims, make([]byte, 4*nel)); err != nil {
			t.Fatal(err)
		}
	}
	var b bytes.Buffer
	if _, err := w.WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	f, err := readBytes(b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	want := []uint64{0, 0, 32, 32}
	for i, ti := range f.Tensors {
		if ti.Offset != want[i] {
			t.Errorf("tensor %q at %d, want %d", ti.Name, ti.Offset, want[i])
		}
	}
	if got := f.DataOffset + 96; got != f.Size {
		t.Errorf("file of %d bytes, want the padded data section to end it at %d", f.Size, got)
	}
}
