package onnxgen

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// Tensor is a constant tensor: a graph initializer or the value of a tensor
// attribute. Exactly one of Floats, Int64s, Int32s and Raw holds the data,
// in row-major order; it is encoded as the TensorProto's raw_data (little
// endian). Raw carries element types without a typed field here (Bool,
// Uint8, Float16, Double, ...): len(Raw) must be the element count times
// Type.Size().
//
// Dims empty means a scalar (one element).
type Tensor struct {
	Name   string
	Type   DataType
	Dims   []int64
	Floats []float32
	Int64s []int64
	Int32s []int32
	Raw    []byte
}

// FloatTensor returns a float tensor with the given name, shape and data.
func FloatTensor(name string, dims []int64, data []float32) Tensor {
	return Tensor{Name: name, Type: Float, Dims: dims, Floats: data}
}

// Int64Tensor returns an int64 tensor with the given name, shape and data.
func Int64Tensor(name string, dims []int64, data []int64) Tensor {
	return Tensor{Name: name, Type: Int64, Dims: dims, Int64s: data}
}

// Int32Tensor returns an int32 tensor with the given name, shape and data.
func Int32Tensor(name string, dims []int64, data []int32) Tensor {
	return Tensor{Name: name, Type: Int32, Dims: dims, Int32s: data}
}

// NumElements returns the number of elements the tensor's shape holds (1 for
// a scalar). It returns -1 when a dimension is negative or the count
// overflows int64.
func (t *Tensor) NumElements() int64 {
	return numElements(t.Dims)
}

func numElements(dims []int64) int64 {
	n := int64(1)
	for _, d := range dims {
		if d < 0 {
			return -1
		}
		if d != 0 && n > math.MaxInt64/d {
			return -1
		}
		n *= d
	}
	return n
}

// check reports whether the tensor's type, shape and data agree. Its
// errors do not repeat the tensor's name; callers add it.
func (t *Tensor) check() error {
	if !t.Type.valid() {
		return fmt.Errorf("no valid element type (Type is %v)", t.Type)
	}
	if t.Type == String {
		return errors.New("string tensors are not supported")
	}
	n := t.NumElements()
	if n < 0 {
		return fmt.Errorf("invalid shape %v (a negative dimension, or too many elements)", t.Dims)
	}
	set := 0
	for _, has := range []bool{t.Floats != nil, t.Int64s != nil, t.Int32s != nil, t.Raw != nil} {
		if has {
			set++
		}
	}
	switch {
	case set == 0 && n > 0:
		return fmt.Errorf("no data: shape %v needs %d elements in Floats, Int64s, Int32s or Raw", t.Dims, n)
	case set == 0:
		return nil
	case set > 1:
		return fmt.Errorf("the data must be in exactly one of Floats, Int64s, Int32s or Raw, but %d are set", set)
	}
	var have int64
	var field string
	switch {
	case t.Floats != nil:
		if t.Type != Float {
			return fmt.Errorf("type is %v but the data is in Floats, which is for float tensors", t.Type)
		}
		have, field = int64(len(t.Floats)), "Floats"
	case t.Int64s != nil:
		if t.Type != Int64 {
			return fmt.Errorf("type is %v but the data is in Int64s, which is for int64 tensors", t.Type)
		}
		have, field = int64(len(t.Int64s)), "Int64s"
	case t.Int32s != nil:
		if t.Type != Int32 {
			return fmt.Errorf("type is %v but the data is in Int32s, which is for int32 tensors", t.Type)
		}
		have, field = int64(len(t.Int32s)), "Int32s"
	case t.Raw != nil:
		size := int64(t.Type.Size())
		if int64(len(t.Raw))%size != 0 {
			return fmt.Errorf("the Raw field holds %d bytes, not a whole number of %d-byte %v elements", len(t.Raw), size, t.Type)
		}
		have, field = int64(len(t.Raw))/size, "Raw"
	}
	if have != n {
		return fmt.Errorf("shape %v needs %d elements but %s holds %d", t.Dims, n, field, have)
	}
	return nil
}

// rawSize returns the length of the tensor's raw_data in bytes.
func (t *Tensor) rawSize() int {
	switch {
	case t.Floats != nil:
		return 4 * len(t.Floats)
	case t.Int64s != nil:
		return 8 * len(t.Int64s)
	case t.Int32s != nil:
		return 4 * len(t.Int32s)
	}
	return len(t.Raw)
}

// appendRawData appends the tensor's data to b as little-endian bytes.
func (t *Tensor) appendRawData(b []byte) []byte {
	switch {
	case t.Floats != nil:
		for _, v := range t.Floats {
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(v))
		}
	case t.Int64s != nil:
		for _, v := range t.Int64s {
			b = binary.LittleEndian.AppendUint64(b, uint64(v))
		}
	case t.Int32s != nil:
		for _, v := range t.Int32s {
			b = binary.LittleEndian.AppendUint32(b, uint32(v))
		}
	default:
		b = append(b, t.Raw...)
	}
	return b
}
