package quant

import "fmt"

// Type is a ggml tensor type id (enum ggml_type in ggml.h, ggml commit d99724f2b141).
// The numbering is ggml's and is what GGUF files store.
type Type uint32

// The complete ggml_type enum. Ids 4, 5, 31..33 and 36..38 were removed from ggml
// and are recognised (by name) but never supported.
const (
	F32        Type = 0
	F16        Type = 1
	Q4_0       Type = 2
	Q4_1       Type = 3
	Q4_2       Type = 4 // removed from ggml
	Q4_3       Type = 5 // removed from ggml
	Q5_0       Type = 6
	Q5_1       Type = 7
	Q8_0       Type = 8
	Q8_1       Type = 9
	Q2_K       Type = 10
	Q3_K       Type = 11
	Q4_K       Type = 12
	Q5_K       Type = 13
	Q6_K       Type = 14
	Q8_K       Type = 15
	IQ2_XXS    Type = 16
	IQ2_XS     Type = 17
	IQ3_XXS    Type = 18
	IQ1_S      Type = 19
	IQ4_NL     Type = 20
	IQ3_S      Type = 21
	IQ2_S      Type = 22
	IQ4_XS     Type = 23
	I8         Type = 24
	I16        Type = 25
	I32        Type = 26
	I64        Type = 27
	F64        Type = 28
	IQ1_M      Type = 29
	BF16       Type = 30
	Q4_0_4_4   Type = 31 // removed from ggml
	Q4_0_4_8   Type = 32 // removed from ggml
	Q4_0_8_8   Type = 33 // removed from ggml
	TQ1_0      Type = 34
	TQ2_0      Type = 35
	IQ4_NL_4_4 Type = 36 // removed from ggml
	IQ4_NL_4_8 Type = 37 // removed from ggml
	IQ4_NL_8_8 Type = 38 // removed from ggml
	MXFP4      Type = 39
	NVFP4      Type = 40
	Q1_0       Type = 41
	Q2_0       Type = 42

	// TypeCount is GGML_TYPE_COUNT: every valid id is below it.
	TypeCount Type = 43
)

// Traits are ggml's type_traits for one type: name, values per block and bytes per block,
// and the format's CUDA kernel constants QR and QI.
type Traits struct {
	Name      string
	BlockSize int  // values per block (ggml blck_size); 0 for a removed type
	TypeSize  int  // bytes per block (ggml type_size); 0 for a removed type
	Quantized bool // ggml is_quantized
	Removed   bool // the id was removed from ggml: never valid in a tensor
	// QR and QI are the CUDA kernels' constants of the format (ggml-common.h, and
	// ggml_cuda_type_traits<type>::qr/qi in ggml-cuda/common.cuh): QR values per quant
	// position, QI the 32-bit ints of quant data per block as the dot products count
	// them: BlockSize/(4*QR), except Q1_0 and Q2_0 whose QI is BlockSize/32. Both are 0
	// for a type without them (the float and integer types, Q8_K, TQ1_0, TQ2_0).
	QR, QI int
}

// traits mirrors type_traits[] in ggml/src/ggml.c at d99724f2b141, with QR and QI from
// ggml-common.h (the constants named in legacy.go, kquants.go, iquants.go, extra.go).
var traits = [TypeCount]Traits{
	F32:        {"f32", 1, 4, false, false, 0, 0},
	F16:        {"f16", 1, 2, false, false, 0, 0},
	Q4_0:       {"q4_0", 32, 18, true, false, QR4_0, QI4_0},
	Q4_1:       {"q4_1", 32, 20, true, false, QR4_1, QI4_1},
	Q4_2:       {"q4_2", 0, 0, false, true, 0, 0},
	Q4_3:       {"q4_3", 0, 0, false, true, 0, 0},
	Q5_0:       {"q5_0", 32, 22, true, false, QR5_0, QI5_0},
	Q5_1:       {"q5_1", 32, 24, true, false, QR5_1, QI5_1},
	Q8_0:       {"q8_0", 32, 34, true, false, QR8_0, QI8_0},
	Q8_1:       {"q8_1", 32, 36, true, false, QR8_1, QI8_1},
	Q2_K:       {"q2_K", 256, 84, true, false, QR2_K, QI2_K},
	Q3_K:       {"q3_K", 256, 110, true, false, QR3_K, QI3_K},
	Q4_K:       {"q4_K", 256, 144, true, false, QR4_K, QI4_K},
	Q5_K:       {"q5_K", 256, 176, true, false, QR5_K, QI5_K},
	Q6_K:       {"q6_K", 256, 210, true, false, QR6_K, QI6_K},
	Q8_K:       {"q8_K", 256, 292, true, false, 0, 0},
	IQ2_XXS:    {"iq2_xxs", 256, 66, true, false, QR2_XXS, QI2_XXS},
	IQ2_XS:     {"iq2_xs", 256, 74, true, false, QR2_XS, QI2_XS},
	IQ3_XXS:    {"iq3_xxs", 256, 98, true, false, QR3_XXS, QI3_XXS},
	IQ1_S:      {"iq1_s", 256, 50, true, false, QR1_S, QI1_S},
	IQ4_NL:     {"iq4_nl", 32, 18, true, false, QR4_NL, QI4_NL},
	IQ3_S:      {"iq3_s", 256, 110, true, false, QR3_S, QI3_S},
	IQ2_S:      {"iq2_s", 256, 82, true, false, QR2_S, QI2_S},
	IQ4_XS:     {"iq4_xs", 256, 136, true, false, QR4_XS, QI4_XS},
	I8:         {"i8", 1, 1, false, false, 0, 0},
	I16:        {"i16", 1, 2, false, false, 0, 0},
	I32:        {"i32", 1, 4, false, false, 0, 0},
	I64:        {"i64", 1, 8, false, false, 0, 0},
	F64:        {"f64", 1, 8, false, false, 0, 0},
	IQ1_M:      {"iq1_m", 256, 56, true, false, QR1_M, QI1_M},
	BF16:       {"bf16", 1, 2, false, false, 0, 0},
	Q4_0_4_4:   {"q4_0_4_4", 0, 0, false, true, 0, 0},
	Q4_0_4_8:   {"q4_0_4_8", 0, 0, false, true, 0, 0},
	Q4_0_8_8:   {"q4_0_8_8", 0, 0, false, true, 0, 0},
	TQ1_0:      {"tq1_0", 256, 54, true, false, 0, 0},
	TQ2_0:      {"tq2_0", 256, 66, true, false, 0, 0},
	IQ4_NL_4_4: {"iq4_nl_4_4", 0, 0, false, true, 0, 0},
	IQ4_NL_4_8: {"iq4_nl_4_8", 0, 0, false, true, 0, 0},
	IQ4_NL_8_8: {"iq4_nl_8_8", 0, 0, false, true, 0, 0},
	MXFP4:      {"mxfp4", 32, 17, true, false, QR_MXFP4, QI_MXFP4},
	NVFP4:      {"nvfp4", 64, 36, true, false, QR_NVFP4, QI_NVFP4},
	Q1_0:       {"q1_0", 128, 18, true, false, QR1_0, QI1_0},
	Q2_0:       {"q2_0", 64, 18, true, false, QR2_0, QI2_0},
}

// Valid reports whether t is an id ggml defines and still supports as a tensor type.
func (t Type) Valid() bool { return t < TypeCount && !traits[t].Removed }

// Traits returns ggml's traits of t. ok is false for an id outside ggml's enum.
func (t Type) Traits() (tr Traits, ok bool) {
	if t >= TypeCount {
		return Traits{}, false
	}
	return traits[t], true
}

// String returns ggml's name of the type ("q4_K"), or "type(N)" for an unknown id.
func (t Type) String() string {
	if t < TypeCount {
		return traits[t].Name
	}
	return fmt.Sprintf("type(%d)", uint32(t))
}

// BlockSize returns the number of values per block; 0 for an invalid type.
func (t Type) BlockSize() int {
	if !t.Valid() {
		return 0
	}
	return traits[t].BlockSize
}

// TypeSize returns the number of bytes per block; 0 for an invalid type.
func (t Type) TypeSize() int {
	if !t.Valid() {
		return 0
	}
	return traits[t].TypeSize
}

// RowSize returns the bytes of a row of n values (ggml_row_size), or an error if t is
// invalid or n is not a multiple of the block size.
func (t Type) RowSize(n int64) (int64, error) {
	if !t.Valid() {
		return 0, fmt.Errorf("quant: %v is not a supported ggml type", t)
	}
	bs := int64(traits[t].BlockSize)
	if n < 0 || n%bs != 0 {
		return 0, fmt.Errorf("quant: %d values is not a whole number of %v blocks of %d", n, t, bs)
	}
	return n / bs * int64(traits[t].TypeSize), nil
}

// ParseType returns the type with ggml's name s (case-sensitive as ggml writes it,
// e.g. "q4_K"; an all-lower-case spelling is accepted too).
func ParseType(s string) (Type, error) {
	for i := range traits {
		if traits[i].Name == s {
			return Type(i), nil
		}
	}
	for i := range traits {
		if equalFold(traits[i].Name, s) {
			return Type(i), nil
		}
	}
	return 0, fmt.Errorf("quant: unknown ggml type %q", s)
}

func equalFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}
