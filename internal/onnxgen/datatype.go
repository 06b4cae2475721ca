package onnxgen

import "fmt"

// DataType is an ONNX tensor element type (TensorProto.DataType).
type DataType int32

// The ONNX tensor element types. The values are the ones onnx.proto defines.
const (
	Undefined DataType = 0
	Float     DataType = 1
	Uint8     DataType = 2
	Int8      DataType = 3
	Uint16    DataType = 4
	Int16     DataType = 5
	Int32     DataType = 6
	Int64     DataType = 7
	String    DataType = 8
	Bool      DataType = 9
	Float16   DataType = 10
	Double    DataType = 11
	Uint32    DataType = 12
	Uint64    DataType = 13
	BFloat16  DataType = 16
)

var dataTypeNames = map[DataType]string{
	Undefined: "undefined",
	Float:     "float",
	Uint8:     "uint8",
	Int8:      "int8",
	Uint16:    "uint16",
	Int16:     "int16",
	Int32:     "int32",
	Int64:     "int64",
	String:    "string",
	Bool:      "bool",
	Float16:   "float16",
	Double:    "double",
	Uint32:    "uint32",
	Uint64:    "uint64",
	BFloat16:  "bfloat16",
}

// String returns the type's name as ONNX Runtime prints it, for example
// "float" or "int64".
func (d DataType) String() string {
	if s, ok := dataTypeNames[d]; ok {
		return s
	}
	return fmt.Sprintf("DataType(%d)", int32(d))
}

// Size returns the number of bytes one element takes in raw tensor data, or
// 0 for types without a fixed size (Undefined, String, unknown values).
func (d DataType) Size() int {
	switch d {
	case Uint8, Int8, Bool:
		return 1
	case Uint16, Int16, Float16, BFloat16:
		return 2
	case Float, Int32, Uint32:
		return 4
	case Int64, Double, Uint64:
		return 8
	}
	return 0
}

// valid reports whether d is a type this package can declare for a graph
// value.
func (d DataType) valid() bool {
	_, ok := dataTypeNames[d]
	return ok && d != Undefined
}
