package onnxgen

import "testing"

func TestDataType(t *testing.T) {
	tests := []struct {
		typ  DataType
		name string
		size int
	}{
		{Float, "float", 4}, {Uint8, "uint8", 1}, {Int8, "int8", 1}, {Int32, "int32", 4},
		{Int64, "int64", 8}, {Bool, "bool", 1}, {Float16, "float16", 2}, {Double, "double", 8},
		{BFloat16, "bfloat16", 2}, {String, "string", 0}, {Undefined, "undefined", 0},
		{DataType(99), "DataType(99)", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.typ.String(); got != tt.name {
				t.Errorf("String() = %q, want %q", got, tt.name)
			}
			if got := tt.typ.Size(); got != tt.size {
				t.Errorf("Size() = %d, want %d", got, tt.size)
			}
		})
	}
	// The values are onnx.proto's TensorProto.DataType numbers.
	for typ, want := range map[DataType]int32{Float: 1, Uint8: 2, Int8: 3, Int32: 6, Int64: 7, Bool: 9, Float16: 10, Double: 11} {
		if int32(typ) != want {
			t.Errorf("%v = %d, want %d", typ, int32(typ), want)
		}
	}
}
