package bench

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"

	ort "github.com/yalue/onnxruntime_go"
)

// InputSpec is one model input as the bench feeds it.
type InputSpec struct {
	Name     string  `json:"name"`
	Type     string  `json:"type"`
	Declared []int64 `json:"declared_shape"` // -1 for dynamic dimensions
	Shape    []int64 `json:"shape"`          // what was fed
	Value    *string `json:"value,omitempty"`

	elem ort.TensorElementDataType
}

// Inputs are synthesized tensors matching a model's inputs.
type Inputs struct {
	Specs  []InputSpec
	Names  []string
	Values []ort.Value
}

// Destroy frees the tensors.
func (in *Inputs) Destroy() {
	for _, v := range in.Values {
		if v != nil {
			v.Destroy()
		}
	}
	in.Values = nil
}

// ParseShapes reads whole input shapes: NAME=D1,D2,... (or D1xD2x...).
func ParseShapes(flags []string) (map[string][]int64, error) {
	out := make(map[string][]int64, len(flags))
	for _, f := range flags {
		name, dims, ok := strings.Cut(f, "=")
		name = strings.TrimSpace(name)
		if !ok || name == "" || strings.TrimSpace(dims) == "" {
			return nil, invalid("{Shapes} %q: want NAME=D1,D2,... (for example x=1,3,640,640)", f)
		}
		parts := strings.FieldsFunc(dims, func(r rune) bool { return r == ',' || r == 'x' || r == 'X' })
		shape := make([]int64, 0, len(parts))
		for _, p := range parts {
			n, err := strconv.ParseInt(strings.TrimSpace(p), 10, 64)
			if err != nil || n < 0 {
				return nil, invalid("{Shapes} %q: dimension %q is not a whole number, 0 or more", f, p)
			}
			shape = append(shape, n)
		}
		if _, dup := out[name]; dup {
			return nil, invalid("{Shapes} %q: input %q is given twice", f, name)
		}
		out[name] = shape
	}
	return out, nil
}

// ParseValues reads constant input values: NAME=NUMBER (every element is
// NUMBER).
func ParseValues(flags []string) (map[string]string, error) {
	out := make(map[string]string, len(flags))
	for _, f := range flags {
		name, v, ok := strings.Cut(f, "=")
		name = strings.TrimSpace(name)
		if !ok || name == "" {
			return nil, invalid("{Values} %q: want NAME=NUMBER (for example sr=16000)", f)
		}
		if _, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err != nil {
			return nil, invalid("{Values} %q: %q is not a number", f, v)
		}
		out[name] = strings.TrimSpace(v)
	}
	return out, nil
}

// Synthesize builds one tensor per declared input. Dynamic dimensions come
// from shapes (whole shapes by input name), else from defaults (a model's
// usual shapes; a dynamic first dimension there takes batch); a dynamic first
// dimension left open takes batch. Data is uniform random in [0, 1) for floating types
// (seeded, so runs repeat), zero for integers and booleans, or the constant in
// values.
func Synthesize(info []ort.InputOutputInfo, shapes, defaults map[string][]int64, values map[string]string, batch int64, seed uint64) (*Inputs, error) {
	known := make(map[string]bool, len(info))
	for _, i := range info {
		known[i.Name] = true
	}
	if err := unknownNames(keys(shapes), known, "Shapes"); err != nil {
		return nil, err
	}
	if err := unknownNames(keys(values), known, "Values"); err != nil {
		return nil, err
	}
	// Every shape first: the inputs the bench cannot fill on its own are
	// listed together, before any tensor is made.
	shapesOf := make([][]int64, len(info))
	var open []UnresolvedInput
	for k, i := range info {
		if i.OrtValueType != ort.ONNXTypeTensor {
			return nil, fmt.Errorf("input %q is a %v, not a tensor: the bench can only synthesize tensors", i.Name, i.OrtValueType)
		}
		given := shapes[i.Name]
		if given == nil && defaults[i.Name] != nil {
			given = append([]int64{}, defaults[i.Name]...)
			if len(given) > 0 && len(i.Dimensions) > 0 && i.Dimensions[0] < 0 {
				given[0] = batch
			}
		}
		shape, err := resolveShape(i, given, batch)
		var dyn *dynamicError
		switch {
		case errors.As(err, &dyn):
			open = append(open, UnresolvedInput{Name: i.Name, Type: typeName(i.DataType), Declared: append([]int64{}, i.Dimensions...), Shape: suggestShape(i.Dimensions, batch)})
		case err != nil:
			return nil, err
		case len(shape) == 0 && isInteger(i.DataType) && values[i.Name] == "":
			// An integer scalar is a sample rate, a length or a flag: zero
			// is rarely a value the model accepts.
			open = append(open, UnresolvedInput{Name: i.Name, Type: typeName(i.DataType), Declared: []int64{}, Value: suggestValue(i.Name)})
		}
		shapesOf[k] = shape
	}
	if len(open) > 0 {
		return nil, unresolvedError(open)
	}
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	in := &Inputs{}
	for k, i := range info {
		spec := InputSpec{Name: i.Name, Type: typeName(i.DataType), Declared: append([]int64{}, i.Dimensions...), Shape: shapesOf[k], elem: i.DataType}
		var val *float64
		if s, ok := values[i.Name]; ok {
			f, _ := strconv.ParseFloat(s, 64)
			val = &f
			spec.Value = &s
		}
		v, err := newTensor(spec, val, rng)
		if err != nil {
			in.Destroy()
			return nil, fmt.Errorf("input %q: %w", i.Name, err)
		}
		in.Specs = append(in.Specs, spec)
		in.Names = append(in.Names, i.Name)
		in.Values = append(in.Values, v)
	}
	return in, nil
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

func unknownNames(given []string, known map[string]bool, field string) error {
	var bad []string
	for _, k := range given {
		if !known[k] {
			bad = append(bad, k)
		}
	}
	if len(bad) == 0 {
		return nil
	}
	sort.Strings(bad)
	all := keys(known)
	sort.Strings(all)
	return invalid("{"+field+"} names input %q, but the model's inputs are: %s", bad[0], strings.Join(all, ", "))
}

func resolveShape(i ort.InputOutputInfo, given []int64, batch int64) ([]int64, error) {
	decl := i.Dimensions
	if given != nil {
		if len(given) != len(decl) {
			return nil, invalid("{Shapes} for input %q has %d dimensions, but the model declares %d: %v", i.Name, len(given), len(decl), []int64(decl))
		}
		for d := range decl {
			if decl[d] >= 0 && given[d] != decl[d] {
				return nil, invalid("{Shapes} for input %q sets dimension %d to %d, but the model fixes it at %d (declared %v)", i.Name, d, given[d], decl[d], []int64(decl))
			}
		}
		return append([]int64{}, given...), nil
	}
	shape := append([]int64{}, decl...)
	for d, n := range shape {
		if n >= 0 {
			continue
		}
		if d == 0 {
			shape[d] = batch
			continue
		}
		return nil, &dynamicError{}
	}
	return shape, nil
}

// dynamicError is resolveShape's answer for an input with a dynamic
// dimension after the first and no shape given: Synthesize lists them.
type dynamicError struct{}

func (*dynamicError) Error() string { return "dynamic dimensions" }

// UnresolvedInput is a model input the bench cannot fill without being
// told its shape or its value, with a suggestion that fits its
// declaration.
type UnresolvedInput struct {
	Name, Type string
	// Declared is the model's shape, -1 for a dynamic dimension; empty for
	// a scalar.
	Declared []int64
	// Shape is the suggested whole shape (nil when a value is wanted);
	// Value the suggested value of a scalar ("" when a shape is).
	Shape []int64
	Value string
}

// ShapeText is the suggested shape as --shape takes it: "1,512".
func (u UnresolvedInput) ShapeText() string { return joinDims(u.Shape) }

// UnresolvedInputsError lists every input Synthesize could not fill, at
// once: a user fixes them in one go. Its message names Config fields
// ({Shapes}, {Values}); Inputs holds the suggestions for a caller that
// writes a whole command.
type UnresolvedInputsError struct {
	Inputs []UnresolvedInput
	err    error
}

func (e *UnresolvedInputsError) Error() string { return e.err.Error() }
func (e *UnresolvedInputsError) Unwrap() error { return e.err }

func unresolvedError(open []UnresolvedInput) *UnresolvedInputsError {
	lines := make([]error, 0, len(open)+1)
	lines = append(lines, fmt.Errorf("the model has %d inputs the bench cannot fill on its own (give each a shape or a value)", len(open)))
	for _, u := range open {
		if u.Shape != nil {
			lines = append(lines, invalid("  input %q %s%s has dynamic dimensions: for example {Shapes} %s=%s", u.Name, u.Type, declText(u.Declared), u.Name, u.ShapeText()))
		} else {
			lines = append(lines, invalid("  input %q %s scalar needs its value (a sample rate, a length, a flag): for example {Values} %s=%s", u.Name, u.Type, u.Name, u.Value))
		}
	}
	return &UnresolvedInputsError{Inputs: open, err: errors.Join(lines...)}
}

// declText writes a declared shape with "?" for its dynamic dimensions:
// [?,3,?,?].
func declText(decl []int64) string {
	parts := make([]string, len(decl))
	for d, n := range decl {
		parts[d] = "?"
		if n >= 0 {
			parts[d] = strconv.FormatInt(n, 10)
		}
	}
	return "[" + strings.Join(parts, ",") + "]"
}

// suggestShape fills a declaration's dynamic dimensions with sizes that fit
// what the dimension likely is: the first is the batch; one between two
// fixed dimensions (a recurrent state's batch, [2,?,128]) is 1; the rest
// are lengths by the input's rank: 512 samples or tokens of a [batch,
// length] input, 128 steps of a [batch, sequence, features] one, 224 pixels
// of an image.
func suggestShape(decl []int64, batch int64) []int64 {
	out := append([]int64{}, decl...)
	for d, n := range decl {
		switch {
		case n >= 0:
		case d == 0:
			out[d] = batch
		case d < len(decl)-1 && decl[d-1] >= 0 && decl[d+1] >= 0:
			out[d] = 1
		case len(decl) == 2:
			out[d] = 512
		case len(decl) == 3:
			out[d] = 128
		default:
			out[d] = 224
		}
	}
	return out
}

// suggestValue is a value for an integer scalar input: 16000 for a sample
// rate by its name, else 1.
func suggestValue(name string) string {
	switch strings.ToLower(name) {
	case "sr", "sample_rate", "sampling_rate", "samplerate":
		return "16000"
	}
	return "1"
}

func isInteger(t ort.TensorElementDataType) bool {
	switch t {
	case ort.TensorElementDataTypeInt8, ort.TensorElementDataTypeUint8, ort.TensorElementDataTypeInt16, ort.TensorElementDataTypeUint16,
		ort.TensorElementDataTypeInt32, ort.TensorElementDataTypeUint32, ort.TensorElementDataTypeInt64, ort.TensorElementDataTypeUint64:
		return true
	}
	return false
}

func typeName(t ort.TensorElementDataType) string {
	s := t.String()
	s = strings.TrimPrefix(s, "ONNX_TENSOR_ELEMENT_DATA_TYPE_")
	return strings.ToLower(s)
}

// elemSize is the byte size of one element, or 0 for types the bench does
// not synthesize.
func elemSize(t ort.TensorElementDataType) int {
	switch t {
	case ort.TensorElementDataTypeFloat, ort.TensorElementDataTypeInt32, ort.TensorElementDataTypeUint32:
		return 4
	case ort.TensorElementDataTypeDouble, ort.TensorElementDataTypeInt64, ort.TensorElementDataTypeUint64:
		return 8
	case ort.TensorElementDataTypeInt16, ort.TensorElementDataTypeUint16,
		ort.TensorElementDataTypeFloat16, ort.TensorElementDataTypeBFloat16:
		return 2
	case ort.TensorElementDataTypeInt8, ort.TensorElementDataTypeUint8, ort.TensorElementDataTypeBool:
		return 1
	}
	return 0
}

// tensorBytes is the size of a tensor's data in bytes, or 0 for values that
// are not tensors or whose elements the bench does not size.
func tensorBytes(v ort.Value) int64 {
	if v == nil || v.GetONNXType() != ort.ONNXTypeTensor {
		return 0
	}
	n := int64(elemSize(ort.TensorElementDataType(v.DataType())))
	for _, d := range v.GetShape() {
		n *= d
	}
	return n
}

func newTensor(spec InputSpec, val *float64, rng *rand.Rand) (ort.Value, error) {
	size := elemSize(spec.elem)
	if size == 0 {
		return nil, fmt.Errorf("element type %s cannot be synthesized", spec.Type)
	}
	n := int64(1)
	for _, d := range spec.Shape {
		n *= d
	}
	if len(spec.Shape) == 0 {
		return newScalar(spec.elem, val, rng)
	}
	if n == 0 {
		return nil, fmt.Errorf("shape %v holds no elements", spec.Shape)
	}
	if n*int64(size) > 8<<30 {
		return nil, fmt.Errorf("shape %v needs %d bytes; that is too large to synthesize", spec.Shape, n*int64(size))
	}
	data := make([]byte, n*int64(size))
	for k := int64(0); k < n; k++ {
		putElem(data[k*int64(size):], spec.elem, elemValue(spec.elem, val, rng))
	}
	return ort.NewCustomDataTensor(ort.Shape(spec.Shape), data, spec.elem)
}

// elemValue is the constant, or random in [0,1) for floating types, or 0.
func elemValue(t ort.TensorElementDataType, val *float64, rng *rand.Rand) float64 {
	if val != nil {
		return *val
	}
	switch t {
	case ort.TensorElementDataTypeFloat, ort.TensorElementDataTypeDouble,
		ort.TensorElementDataTypeFloat16, ort.TensorElementDataTypeBFloat16:
		return rng.Float64()
	}
	return 0
}

func putElem(b []byte, t ort.TensorElementDataType, v float64) {
	le := binary.LittleEndian
	switch t {
	case ort.TensorElementDataTypeFloat:
		le.PutUint32(b, math.Float32bits(float32(v)))
	case ort.TensorElementDataTypeDouble:
		le.PutUint64(b, math.Float64bits(v))
	case ort.TensorElementDataTypeInt64, ort.TensorElementDataTypeUint64:
		le.PutUint64(b, uint64(int64(v)))
	case ort.TensorElementDataTypeInt32, ort.TensorElementDataTypeUint32:
		le.PutUint32(b, uint32(int32(v)))
	case ort.TensorElementDataTypeInt16, ort.TensorElementDataTypeUint16:
		le.PutUint16(b, uint16(int16(v)))
	case ort.TensorElementDataTypeFloat16:
		le.PutUint16(b, float16bits(float32(v)))
	case ort.TensorElementDataTypeBFloat16:
		le.PutUint16(b, uint16(math.Float32bits(float32(v))>>16))
	case ort.TensorElementDataTypeBool:
		if v != 0 {
			b[0] = 1
		} else {
			b[0] = 0
		}
	default: // int8, uint8
		b[0] = byte(int8(v))
	}
}

// float16bits converts to IEEE half precision (round toward zero; enough for
// synthetic inputs).
func float16bits(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int((b>>23)&0xff) - 127 + 15
	mant := b & 0x7fffff
	switch {
	case exp <= 0:
		return sign
	case exp >= 31:
		return sign | 0x7c00
	}
	return sign | uint16(exp)<<10 | uint16(mant>>13)
}

func newScalar(t ort.TensorElementDataType, val *float64, rng *rand.Rand) (ort.Value, error) {
	v := elemValue(t, val, rng)
	switch t {
	case ort.TensorElementDataTypeFloat:
		return ort.NewScalar(float32(v))
	case ort.TensorElementDataTypeDouble:
		return ort.NewScalar(v)
	case ort.TensorElementDataTypeInt64:
		return ort.NewScalar(int64(v))
	case ort.TensorElementDataTypeUint64:
		return ort.NewScalar(uint64(v))
	case ort.TensorElementDataTypeInt32:
		return ort.NewScalar(int32(v))
	case ort.TensorElementDataTypeUint32:
		return ort.NewScalar(uint32(v))
	case ort.TensorElementDataTypeInt16:
		return ort.NewScalar(int16(v))
	case ort.TensorElementDataTypeUint16:
		return ort.NewScalar(uint16(v))
	case ort.TensorElementDataTypeInt8:
		return ort.NewScalar(int8(v))
	case ort.TensorElementDataTypeUint8:
		return ort.NewScalar(uint8(v))
	}
	return nil, fmt.Errorf("a scalar of type %s cannot be synthesized", typeName(t))
}

// CheckInputs reads the model of cfg and checks that the bench can fill
// its inputs as cfg says, before anything is started or written: a model
// that cannot be read is an error, and so are inputs left unresolved (an
// *UnresolvedInputsError listing every one). Generation fills its own
// inputs and is not checked. ONNX Runtime must be initialized.
func CheckInputs(cfg Config) error {
	if cfg.Generate > 0 {
		return nil
	}
	m, err := describeModel(cfg.ModelPath)
	if err != nil {
		return err
	}
	batch, shapes := max(cfg.Batch, 1), cfg.Shapes
	if len(cfg.Batches) > 1 {
		shapes = shapesForBatch(m.inputs, cfg.Shapes, batch)
	}
	in, err := Synthesize(m.inputs, shapes, cfg.DefaultShapes, cfg.Values, batch, cfg.Seed)
	if err != nil {
		return fmt.Errorf("model %q: %w", cfg.ModelPath, err)
	}
	in.Destroy()
	return nil
}
