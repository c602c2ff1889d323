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
// Read checks everything ggml's reader checks and a little more, and reports the first
// problem as a *FormatError with its byte offset and the key or tensor concerned:
// truncation anywhere; bad magic; version 0, 1, big-endian or newer than 3; counts and
// lengths larger than the rest of the file could hold (checked before anything of that size
// is allocated, so memory stays proportional to the file size); empty or duplicate keys;
// unknown value types; arrays nested deeper than MaxArrayDepth; a general.alignment that is
// not a u32 power of two; tensor names longer than MaxNameLen or duplicated; n_dims >
// MaxDims; negative ne or ne whose product or byte size overflows int64; unknown or removed
// ggml types; ne[0] not a multiple of the type's block size; data offsets not a multiple of
// the alignment, past the end of the file, or overlapping another tensor. A File from Read
// therefore satisfies: keys and names are unique, and every tensor's bytes
// [DataOffset+Offset, +Size) lie in the file, aligned and disjoint from every other
// tensor's. Tensor data is read on demand through an io.ReaderAt (TensorReader,
// TensorData), never the whole file at once.
//
// ggml's reader is stricter about layout than the spec: it requires each tensor to start
// where the previous one ends, padded to the alignment (File.CheckGGMLLayout tells whether a
// file meets that). Writer always writes that layout, with the padding after the last tensor
// too, exactly as gguf_write_to_file does, so ggml reads what Writer writes (nested arrays
// excepted).
//
// Bool values: ggml reads any non-zero byte as true, and so does Read; Writer writes 0 or 1.
package gguf
