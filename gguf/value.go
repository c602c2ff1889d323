package gguf

import (
	"fmt"
	"math"
	"strings"
)

// ValueType is a GGUF metadata value type (enum gguf_type in ggml's gguf.h). The numbering
// is what the file stores.
type ValueType uint32

// The thirteen GGUF metadata value types.
const (
	TypeUint8   ValueType = 0
	TypeInt8    ValueType = 1
	TypeUint16  ValueType = 2
	TypeInt16   ValueType = 3
	TypeUint32  ValueType = 4
	TypeInt32   ValueType = 5
	TypeFloat32 ValueType = 6
	TypeBool    ValueType = 7
	TypeString  ValueType = 8
	TypeArray   ValueType = 9
	TypeUint64  ValueType = 10
	TypeInt64   ValueType = 11
	TypeFloat64 ValueType = 12

	typeCount ValueType = 13
)

// typeNames are ggml's names (GGUF_TYPE_NAME in gguf.cpp).
var typeNames = [typeCount]string{"u8", "i8", "u16", "i16", "u32", "i32", "f32", "bool", "str", "arr", "u64", "i64", "f64"}

// String returns ggml's name of the type ("u32", "str", "arr"), or "gguf_type(N)".
func (t ValueType) String() string {
	if t < typeCount {
		return typeNames[t]
	}
	return fmt.Sprintf("gguf_type(%d)", uint32(t))
}

// Valid reports whether t is one of the thirteen GGUF value types.
func (t ValueType) Valid() bool { return t < typeCount }

// fixedSize is the encoded size of a scalar of type t; 0 for strings, arrays and invalid
// types.
func (t ValueType) fixedSize() int64 {
	switch t {
	case TypeUint8, TypeInt8, TypeBool:
		return 1
	case TypeUint16, TypeInt16:
		return 2
	case TypeUint32, TypeInt32, TypeFloat32:
		return 4
	case TypeUint64, TypeInt64, TypeFloat64:
		return 8
	}
	return 0
}

// minSize is the fewest bytes one encoded element of type t can take: a string is at least
// its 8-byte length, an array at least its 4-byte element type and 8-byte length.
func (t ValueType) minSize() int64 {
	switch t {
	case TypeString:
		return 8
	case TypeArray:
		return 12
	}
	return t.fixedSize()
}

// Scalar is the set of Go types that hold one GGUF scalar value (one per value type).
type Scalar interface {
	uint8 | int8 | uint16 | int16 | uint32 | int32 | float32 | bool | string | uint64 | int64 | float64
}

// Value is one GGUF metadata value: a scalar, or an array of scalars of one type, or an
// array of arrays (GGUF allows nesting; ggml's own reader does not, see Writer).
//
// Scalars hold the Go type of their value type (uint8 … float64, bool, string); arrays of
// scalars hold a slice of it ([]uint32, []string, …); arrays of arrays hold []Value whose
// elements are all arrays. The zero Value is invalid (IsValid reports false).
type Value struct {
	typ  ValueType // TypeArray for arrays
	elem ValueType // element type of an array
	x    any
}

func scalarType(x any) ValueType {
	switch x.(type) {
	case uint8, []uint8:
		return TypeUint8
	case int8, []int8:
		return TypeInt8
	case uint16, []uint16:
		return TypeUint16
	case int16, []int16:
		return TypeInt16
	case uint32, []uint32:
		return TypeUint32
	case int32, []int32:
		return TypeInt32
	case float32, []float32:
		return TypeFloat32
	case bool, []bool:
		return TypeBool
	case string, []string:
		return TypeString
	case uint64, []uint64:
		return TypeUint64
	case int64, []int64:
		return TypeInt64
	case float64, []float64:
		return TypeFloat64
	}
	panic(fmt.Sprintf("gguf: %T is not a GGUF scalar", x))
}

// ScalarOf returns the scalar value v (its value type follows from T: uint32 is u32, string
// is str, …).
func ScalarOf[T Scalar](v T) Value { return Value{typ: scalarType(v), x: v} }

// ArrayOf returns the array of the scalars s (element type from T). The slice is kept, not
// copied.
func ArrayOf[T Scalar](s []T) Value {
	if s == nil {
		s = []T{}
	}
	return Value{typ: TypeArray, elem: scalarType(s), x: s}
}

// ArrayOfArrays returns an array whose elements are the arrays vs (a nested array; the inner
// arrays may have different element types). It panics if an element is not a valid array.
// ggml's reader rejects nested arrays; other GGUF readers accept them.
func ArrayOfArrays(vs []Value) Value {
	for i, v := range vs {
		if v.typ != TypeArray || v.x == nil {
			panic(fmt.Sprintf("gguf: ArrayOfArrays: element %d is not an array", i))
		}
	}
	if vs == nil {
		vs = []Value{}
	}
	return Value{typ: TypeArray, elem: TypeArray, x: vs}
}

// IsValid reports whether v holds a value (the zero Value does not).
func (v Value) IsValid() bool { return v.x != nil }

// Type returns the value type of v (TypeArray for an array).
func (v Value) Type() ValueType { return v.typ }

// ElemType returns the element type of an array (TypeArray for an array of arrays); for a
// scalar it returns the scalar's type.
func (v Value) ElemType() ValueType {
	if v.typ == TypeArray {
		return v.elem
	}
	return v.typ
}

// Len returns the number of elements of an array, 1 for a scalar and 0 for the zero Value.
func (v Value) Len() int {
	if v.x == nil {
		return 0
	}
	if v.typ != TypeArray {
		return 1
	}
	switch s := v.x.(type) {
	case []uint8:
		return len(s)
	case []int8:
		return len(s)
	case []uint16:
		return len(s)
	case []int16:
		return len(s)
	case []uint32:
		return len(s)
	case []int32:
		return len(s)
	case []float32:
		return len(s)
	case []bool:
		return len(s)
	case []string:
		return len(s)
	case []uint64:
		return len(s)
	case []int64:
		return len(s)
	case []float64:
		return len(s)
	case []Value:
		return len(s)
	}
	panic("gguf: corrupt Value")
}

// Interface returns the Go value held: a scalar, a slice of scalars or []Value.
func (v Value) Interface() any { return v.x }

// As returns the scalar held by v if it is of type T.
func As[T Scalar](v Value) (T, bool) {
	x, ok := v.x.(T)
	return x, ok && v.typ != TypeArray
}

// AsSlice returns the elements of v if it is an array of T. The slice is v's own.
func AsSlice[T Scalar](v Value) ([]T, bool) {
	x, ok := v.x.([]T)
	return x, ok
}

// Arrays returns the elements of an array of arrays. The slice is v's own.
func (v Value) Arrays() ([]Value, bool) {
	x, ok := v.x.([]Value)
	return x, ok
}

// Equal reports whether v and w have the same type and the same values; floats are equal
// when their bits are (so NaNs with the same payload are equal and -0 ≠ +0).
func (v Value) Equal(w Value) bool {
	if v.typ != w.typ || v.elem != w.elem || (v.x == nil) != (w.x == nil) {
		return false
	}
	switch a := v.x.(type) {
	case nil:
		return true
	case float32:
		return math.Float32bits(a) == math.Float32bits(w.x.(float32))
	case float64:
		return math.Float64bits(a) == math.Float64bits(w.x.(float64))
	case []uint8:
		return sliceEq(a, w.x.([]uint8))
	case []int8:
		return sliceEq(a, w.x.([]int8))
	case []uint16:
		return sliceEq(a, w.x.([]uint16))
	case []int16:
		return sliceEq(a, w.x.([]int16))
	case []uint32:
		return sliceEq(a, w.x.([]uint32))
	case []int32:
		return sliceEq(a, w.x.([]int32))
	case []bool:
		return sliceEq(a, w.x.([]bool))
	case []string:
		return sliceEq(a, w.x.([]string))
	case []uint64:
		return sliceEq(a, w.x.([]uint64))
	case []int64:
		return sliceEq(a, w.x.([]int64))
	case []float32:
		b := w.x.([]float32)
		if len(a) != len(b) {
			return false
		}
		for i := range a {
			if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
				return false
			}
		}
		return true
	case []float64:
		b := w.x.([]float64)
		if len(a) != len(b) {
			return false
		}
		for i := range a {
			if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
				return false
			}
		}
		return true
	case []Value:
		b := w.x.([]Value)
		if len(a) != len(b) {
			return false
		}
		for i := range a {
			if !a[i].Equal(b[i]) {
				return false
			}
		}
		return true
	default:
		return v.x == w.x
	}
}

func sliceEq[T comparable](a, b []T) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// String formats v for people: scalars with %v (strings quoted), arrays as
// "[u32 x3: 1 2 3]" with at most 8 elements shown.
func (v Value) String() string {
	switch x := v.x.(type) {
	case nil:
		return "<invalid>"
	case string:
		return fmt.Sprintf("%q", x)
	case []Value:
		var b strings.Builder
		fmt.Fprintf(&b, "[arr x%d:", len(x))
		for i, e := range x {
			if i == 8 {
				b.WriteString(" …")
				break
			}
			b.WriteString(" ")
			b.WriteString(e.String())
		}
		b.WriteString("]")
		return b.String()
	}
	if v.typ != TypeArray {
		return fmt.Sprint(v.x)
	}
	n := v.Len()
	var b strings.Builder
	fmt.Fprintf(&b, "[%v x%d:", v.elem, n)
	for i := 0; i < n && i < 8; i++ {
		b.WriteString(" ")
		if s, ok := v.x.([]string); ok {
			fmt.Fprintf(&b, "%q", s[i])
		} else {
			fmt.Fprint(&b, elemAt(v.x, i))
		}
	}
	if n > 8 {
		b.WriteString(" …")
	}
	b.WriteString("]")
	return b.String()
}

func elemAt(s any, i int) any {
	switch s := s.(type) {
	case []uint8:
		return s[i]
	case []int8:
		return s[i]
	case []uint16:
		return s[i]
	case []int16:
		return s[i]
	case []uint32:
		return s[i]
	case []int32:
		return s[i]
	case []float32:
		return s[i]
	case []bool:
		return s[i]
	case []uint64:
		return s[i]
	case []int64:
		return s[i]
	case []float64:
		return s[i]
	}
	panic("gguf: corrupt Value")
}

// KV is one metadata key/value pair.
type KV struct {
	Key   string
	Value Value
}
