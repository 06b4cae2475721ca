package onnxgen

import (
	"bytes"
	"strings"
	"testing"
)

func TestTensorRawData(t *testing.T) {
	tests := []struct {
		name   string
		tensor Tensor
		want   []byte
	}{
		{"float", FloatTensor("f", []int64{2}, []float32{1, -2}), []byte{0, 0, 0x80, 0x3f, 0, 0, 0, 0xc0}},
		{"int64", Int64Tensor("i", nil, []int64{-2}), []byte{0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}},
		{"int32", Int32Tensor("j", []int64{1, 1}, []int32{258}), []byte{2, 1, 0, 0}},
		{"raw bool", Tensor{Name: "b", Type: Bool, Dims: []int64{3}, Raw: []byte{1, 0, 1}}, []byte{1, 0, 1}},
		{"empty", FloatTensor("e", []int64{0, 4}, nil), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.tensor.check(); err != nil {
				t.Fatalf("check: %v", err)
			}
			got := tt.tensor.appendRawData(nil)
			if !bytes.Equal(got, tt.want) {
				t.Errorf("raw data = %x, want %x", got, tt.want)
			}
			if tt.tensor.rawSize() != len(tt.want) {
				t.Errorf("rawSize = %d, want %d", tt.tensor.rawSize(), len(tt.want))
			}
		})
	}
}

func TestTensorNumElements(t *testing.T) {
	tests := []struct {
		dims []int64
		want int64
	}{
		{nil, 1}, {[]int64{3, 4}, 12}, {[]int64{2, 0, 5}, 0}, {[]int64{-1}, -1},
		{[]int64{1 << 40, 1 << 40}, -1},
	}
	for _, tt := range tests {
		tensor := Tensor{Dims: tt.dims}
		if got := tensor.NumElements(); got != tt.want {
			t.Errorf("NumElements(%v) = %d, want %d", tt.dims, got, tt.want)
		}
	}
}

func TestTensorCheckRejects(t *testing.T) {
	tests := []struct {
		name   string
		tensor Tensor
		want   string
	}{
		{"no type", Tensor{Name: "x", Floats: []float32{1}}, "no valid element type (Type is undefined)"},
		{"string", Tensor{Name: "x", Type: String, Raw: []byte{}}, "string tensors are not supported"},
		{"negative dim", FloatTensor("x", []int64{-2}, nil), "invalid shape [-2]"},
		{"int32 data for int64", Tensor{Name: "x", Type: Int64, Int32s: []int32{1}}, "type is int64 but the data is in Int32s"},
		{"too much data", Int64Tensor("x", []int64{1}, []int64{1, 2}), "shape [1] needs 1 elements but Int64s holds 2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.tensor.check()
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("check() = %v, want an error containing %q", err, tt.want)
			}
		})
	}
}
