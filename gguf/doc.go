// Package gguf reads and writes GGUF files (versions 2 and 3, little-endian), the container
// ggml and llama.cpp use for models and ggsim uses for golden files.
//
// The format (docs/gguf.md and src/gguf.cpp of ggml at commit d99724f2b141, which this
// package follows where the two differ):
//
//	"GGUF" u32 version  u64 n_tensors  u64 n_kv
//	n_kv ×      { str key, u32 value_type, value }
//	n_tensors × { str name, u32 n_dims, u64 ne[n_dims], u32 ggml_type, u64 offset }
//	zero padding to the alignment (general.alignment, u32, default 32)
//	data section: each tensor at data_start + offset
//
// where str is a u64 length and that many bytes, and an array value is u32 element type,
// u64 count and the elements (arrays may nest; ggml itself does not read nested arrays).
//
// Read accepts exactly the files ggml's reader (gguf_init_from_file, reading the tensor
// data) accepts, nested arrays aside, and reports the first problem as a *FormatError with
// its byte offset and the key or tensor concerned: truncation anywhere; bad magic; version
// 0, 1, big-endian or newer than 3; counts and lengths larger than the rest of the file
// could hold (checked before anything of that size is allocated, so memory stays
// proportional to the file size) or than ggml's limits (MaxStringLen, MaxArrayLen); empty or
// duplicate keys; unknown value types; arrays nested deeper than MaxArrayDepth; a
// general.alignment that is not a u32 power of two; tensor names longer than MaxNameLen or
// duplicated; and the shape rules of shape.go, one home for Read and Writer: n_dims >
// MaxDims; negative ne; too many elements by ggml's test (INT64_MAX/ne[k] <= ne[0]·…·ne[k-1],
// skipped for a tensor with a zero dimension); unknown or removed ggml types; ne[0] not a
// multiple of the type's block size; more than 2^63-1 bytes. The data section must have
// ggml's layout: tensor i starts where tensor i-1 ends padded to the alignment (the first at
// 0), and the padded data section lies in the file. A File from Read therefore satisfies:
// keys and names are unique, and every tensor's bytes [DataOffset+Offset, +Size) lie in the
// file, aligned, in file order and disjoint from every other tensor's. Tensor data is read on
// demand through an io.ReaderAt (TensorReader, TensorData), never the whole file at once.
// shape_test.go has one row per rule with its line in ggml's gguf.cpp, and the two places
// where ggsim refuses what ggml accepts: shapes whose element count or padded byte size
// overflows in ggml's own arithmetic.
//
// ggml keeps tensor names as C strings: a stored name with a NUL byte is named by its
// bytes up to the NUL, by ggml and by Read; Writer refuses such a name.
//
// Writer writes ggml's layout, with the padding after the last tensor too, exactly as
// gguf_write_to_file does, and refuses every tensor Read would refuse, so ggml reads what
// Writer writes (nested arrays excepted: File.CheckGGMLLayout tells).
//
// Bool values: ggml reads any non-zero byte as true, and so does Read; Writer writes 0 or 1.
package gguf
