package onnxgen

import (
	"encoding/binary"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// field is one decoded protobuf field.
type field struct {
	num   protowire.Number
	typ   protowire.Type
	v     uint64 // varint, fixed32 and fixed64 values
	bytes []byte // length-delimited values
}

// msg is a decoded protobuf message: its fields in wire order.
type msg []field

// parse decodes b field by field, independently of the encoder.
func parse(t testing.TB, b []byte) msg {
	t.Helper()
	var m msg
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			t.Fatalf("bad tag: %v", protowire.ParseError(n))
		}
		b = b[n:]
		f := field{num: num, typ: typ}
		switch typ {
		case protowire.VarintType:
			f.v, n = protowire.ConsumeVarint(b)
		case protowire.Fixed32Type:
			var v uint32
			v, n = protowire.ConsumeFixed32(b)
			f.v = uint64(v)
		case protowire.Fixed64Type:
			f.v, n = protowire.ConsumeFixed64(b)
		case protowire.BytesType:
			f.bytes, n = protowire.ConsumeBytes(b)
		default:
			t.Fatalf("field %d: unexpected wire type %d", num, typ)
		}
		if n < 0 {
			t.Fatalf("field %d: %v", num, protowire.ParseError(n))
		}
		b = b[n:]
		m = append(m, f)
	}
	return m
}

func (m msg) all(num protowire.Number) []field {
	var out []field
	for _, f := range m {
		if f.num == num {
			out = append(out, f)
		}
	}
	return out
}

func (m msg) has(num protowire.Number) bool { return len(m.all(num)) > 0 }

func (m msg) varint(t testing.TB, num protowire.Number) uint64 {
	t.Helper()
	fs := m.all(num)
	if len(fs) != 1 || fs[0].typ != protowire.VarintType {
		t.Fatalf("field %d: want one varint, got %+v", num, fs)
	}
	return fs[0].v
}

func (m msg) str(num protowire.Number) string {
	fs := m.all(num)
	if len(fs) == 0 {
		return ""
	}
	return string(fs[len(fs)-1].bytes)
}

func (m msg) strs(num protowire.Number) []string {
	var out []string
	for _, f := range m.all(num) {
		out = append(out, string(f.bytes))
	}
	return out
}

func (m msg) subs(t testing.TB, num protowire.Number) []msg {
	t.Helper()
	var out []msg
	for _, f := range m.all(num) {
		out = append(out, parse(t, f.bytes))
	}
	return out
}

func (m msg) sub(t testing.TB, num protowire.Number) msg {
	t.Helper()
	s := m.subs(t, num)
	if len(s) != 1 {
		t.Fatalf("field %d: want one message, got %d", num, len(s))
	}
	return s[0]
}

// int64s decodes a repeated int64 field, packed or not.
func (m msg) int64s(t testing.TB, num protowire.Number) []int64 {
	t.Helper()
	var out []int64
	for _, f := range m.all(num) {
		if f.typ == protowire.VarintType {
			out = append(out, int64(f.v))
			continue
		}
		b := f.bytes
		for len(b) > 0 {
			v, n := protowire.ConsumeVarint(b)
			if n < 0 {
				t.Fatalf("field %d: %v", num, protowire.ParseError(n))
			}
			out = append(out, int64(v))
			b = b[n:]
		}
	}
	return out
}

// floats decodes a repeated float field, packed or not.
func (m msg) floats(t testing.TB, num protowire.Number) []float32 {
	t.Helper()
	var out []float32
	for _, f := range m.all(num) {
		if f.typ == protowire.Fixed32Type {
			out = append(out, math.Float32frombits(uint32(f.v)))
			continue
		}
		if len(f.bytes)%4 != 0 {
			t.Fatalf("field %d: packed floats of %d bytes", num, len(f.bytes))
		}
		for i := 0; i < len(f.bytes); i += 4 {
			out = append(out, math.Float32frombits(binary.LittleEndian.Uint32(f.bytes[i:])))
		}
	}
	return out
}

// dump renders an encoded ModelProto as text for the golden files, decoding
// it field by field (so it checks the encoding, not the Go structs).
func dump(t testing.TB, b []byte) string {
	t.Helper()
	var w strings.Builder
	m := parse(t, b)
	fmt.Fprintf(&w, "ir_version %d\n", m.varint(t, modelIRVersion))
	fmt.Fprintf(&w, "producer %q %q\n", m.str(modelProducerName), m.str(modelProducerVersion))
	for _, o := range m.subs(t, modelOpsetImport) {
		fmt.Fprintf(&w, "opset_import %q %d\n", o.str(opsetDomain), o.varint(t, opsetVersion))
	}
	for _, e := range m.subs(t, modelMetadataProps) {
		fmt.Fprintf(&w, "metadata %q = %q\n", e.str(entryKey), e.str(entryValue))
	}
	dumpGraph(t, &w, m.sub(t, modelGraph), "")
	return w.String()
}

func dumpGraph(t testing.TB, w *strings.Builder, g msg, indent string) {
	fmt.Fprintf(w, "%sgraph %q\n", indent, g.str(graphName))
	indent += "  "
	if d := g.str(graphDocString); d != "" {
		fmt.Fprintf(w, "%sdoc %q\n", indent, d)
	}
	for _, in := range g.subs(t, graphInput) {
		fmt.Fprintf(w, "%sinput %s\n", indent, dumpValueInfo(t, in))
	}
	for _, out := range g.subs(t, graphOutput) {
		fmt.Fprintf(w, "%soutput %s\n", indent, dumpValueInfo(t, out))
	}
	for _, init := range g.subs(t, graphInitializer) {
		fmt.Fprintf(w, "%sinitializer %s\n", indent, dumpTensor(t, init))
	}
	for _, n := range g.subs(t, graphNode) {
		op := n.str(nodeOpType)
		if d := n.str(nodeDomain); d != "" {
			op = d + "." + op
		}
		fmt.Fprintf(w, "%snode %q %s(%s) -> %s", indent, n.str(nodeName), op,
			strings.Join(n.strs(nodeInput), ", "), strings.Join(n.strs(nodeOutput), ", "))
		var graphs []msg
		for _, a := range n.subs(t, nodeAttribute) {
			fmt.Fprintf(w, " %s=", a.str(attrName))
			switch AttrType(a.varint(t, attrType)) {
			case AttrTypeFloat:
				fmt.Fprint(w, a.floats(t, attrF)[0])
			case AttrTypeInt:
				fmt.Fprint(w, int64(a.varint(t, attrI)))
			case AttrTypeString:
				fmt.Fprintf(w, "%q", a.str(attrS))
			case AttrTypeTensor:
				fmt.Fprintf(w, "tensor(%s)", dumpTensor(t, a.sub(t, attrT)))
			case AttrTypeGraph:
				fmt.Fprint(w, "graph")
				graphs = append(graphs, a.sub(t, attrG))
			case AttrTypeFloats:
				fmt.Fprint(w, a.floats(t, attrFloats))
			case AttrTypeInts:
				fmt.Fprint(w, a.int64s(t, attrInts))
			case AttrTypeStrings:
				fmt.Fprintf(w, "%q", a.strs(attrStrings))
			default:
				fmt.Fprint(w, "?")
			}
		}
		w.WriteByte('\n')
		for _, sub := range graphs {
			dumpGraph(t, w, sub, indent+"  ")
		}
	}
	for _, v := range g.subs(t, graphValueInfo) {
		fmt.Fprintf(w, "%svalue_info %s\n", indent, dumpValueInfo(t, v))
	}
}

func dumpValueInfo(t testing.TB, v msg) string {
	tt := v.sub(t, valueInfoType).sub(t, typeTensorType)
	s := fmt.Sprintf("%s %v", v.str(valueInfoName), DataType(tt.varint(t, tensorTypeElemType)))
	if !tt.has(tensorTypeShape) {
		return s + "[...]"
	}
	var dims []string
	for _, d := range tt.sub(t, tensorTypeShape).subs(t, shapeDim) {
		switch {
		case d.has(dimParam):
			dims = append(dims, d.str(dimParam))
		case d.has(dimValue):
			dims = append(dims, fmt.Sprint(d.varint(t, dimValue)))
		default:
			dims = append(dims, "?")
		}
	}
	return s + "[" + strings.Join(dims, ",") + "]"
}

func dumpTensor(t testing.TB, m msg) string {
	typ := DataType(m.varint(t, tensorDataType))
	raw := []byte(m.str(tensorRawData))
	var dims []string
	for _, d := range m.int64s(t, tensorDims) {
		dims = append(dims, fmt.Sprint(d))
	}
	s := fmt.Sprintf("%s %v[%s]", m.str(tensorName), typ, strings.Join(dims, ","))
	if len(raw) <= 16 {
		return s + fmt.Sprintf(" raw=%x", raw)
	}
	return s + fmt.Sprintf(" raw=%dB", len(raw))
}

// TestMarshalRoundTrip encodes a model using every kind of field and
// decodes it back with protowire, checking each field's number and value.
func TestMarshalRoundTrip(t *testing.T) {
	m := Model{
		Opset:           18,
		Opsets:          map[string]int{"com.microsoft": 1},
		Producer:        "test",
		ProducerVersion: "1.2",
		Domain:          "dev.ortel",
		ModelVersion:    3,
		Doc:             "model doc",
		Metadata:        map[string]string{"b": "2", "a": "1"},
		Graph: Graph{
			Name: "g",
			Doc:  "graph doc",
			Inputs: []ValueInfo{
				{Name: "x", Type: Float, Dims: []Dim{DimParam("batch"), DimValue(4), {Value: -1}}},
				{Name: "s", Type: Int64},
				{Name: "u", Type: Bool, UnknownRank: true},
			},
			Outputs: []ValueInfo{{Name: "y", Type: Float, Dims: FixedDims(2, 4)}},
			Initializers: []Tensor{
				FloatTensor("w", []int64{2, 2}, []float32{1, -2, 0.5, 3}),
				Int64Tensor("i", nil, []int64{-7}),
				Int32Tensor("j", []int64{2}, []int32{1, -1}),
				{Name: "h", Type: Float16, Dims: []int64{1}, Raw: []byte{0x00, 0x3c}},
			},
			Nodes: []Node{{
				Name: "n", OpType: "Custom", Domain: "com.microsoft", Doc: "node doc",
				Inputs: []string{"x", "", "w"}, Outputs: []string{"y", ""},
				Attrs: []Attr{
					AttrFloat("f", 0.25), AttrInt("i", -3), AttrString("s", "same"),
					AttrFloats("fs", 1, 2), AttrInts("is", 0, -1, 300), AttrStrings("ss", "a", "b"),
					AttrTensor("t", Int64Tensor("tt", []int64{2}, []int64{5, 6})),
					AttrGraph("g", Graph{Name: "sub", Outputs: []ValueInfo{{Name: "x", Type: Float, UnknownRank: true}}}),
				},
			}},
		},
	}
	b, err := m.Marshal()
	if err != nil {
		t.Fatalf("Marshal: %v", err)
	}
	pm := parse(t, b)
	if got := pm.varint(t, modelIRVersion); got != DefaultIRVersion {
		t.Errorf("ir_version = %d, want %d", got, DefaultIRVersion)
	}
	for num, want := range map[protowire.Number]string{
		modelProducerName: "test", modelProducerVersion: "1.2", modelDomain: "dev.ortel", modelDocString: "model doc",
	} {
		if got := pm.str(num); got != want {
			t.Errorf("model field %d = %q, want %q", num, got, want)
		}
	}
	if got := pm.varint(t, modelModelVersion); got != 3 {
		t.Errorf("model_version = %d, want 3", got)
	}
	var opsets []string
	for _, o := range pm.subs(t, modelOpsetImport) {
		opsets = append(opsets, fmt.Sprintf("%q:%d", o.str(opsetDomain), o.varint(t, opsetVersion)))
	}
	if want := []string{`"":18`, `"com.microsoft":1`}; !slices.Equal(opsets, want) {
		t.Errorf("opset_import = %v, want %v", opsets, want)
	}
	var meta []string
	for _, e := range pm.subs(t, modelMetadataProps) {
		meta = append(meta, e.str(entryKey)+"="+e.str(entryValue))
	}
	if want := []string{"a=1", "b=2"}; !slices.Equal(meta, want) {
		t.Errorf("metadata_props = %v, want %v (sorted)", meta, want)
	}

	g := pm.sub(t, modelGraph)
	if g.str(graphName) != "g" || g.str(graphDocString) != "graph doc" {
		t.Errorf("graph name/doc = %q/%q", g.str(graphName), g.str(graphDocString))
	}
	var ins []string
	for _, v := range g.subs(t, graphInput) {
		ins = append(ins, dumpValueInfo(t, v))
	}
	if want := []string{"x float[batch,4,?]", "s int64[]", "u bool[...]"}; !slices.Equal(ins, want) {
		t.Errorf("inputs = %q, want %q", ins, want)
	}

	inits := g.subs(t, graphInitializer)
	if len(inits) != 4 {
		t.Fatalf("%d initializers, want 4", len(inits))
	}
	w := inits[0]
	if w.str(tensorName) != "w" || DataType(w.varint(t, tensorDataType)) != Float || !slices.Equal(w.int64s(t, tensorDims), []int64{2, 2}) {
		t.Errorf("initializer w decoded as %s", dumpTensor(t, w))
	}
	raw := []byte(w.str(tensorRawData))
	var floats []float32
	for i := 0; i+4 <= len(raw); i += 4 {
		floats = append(floats, math.Float32frombits(binary.LittleEndian.Uint32(raw[i:])))
	}
	if want := []float32{1, -2, 0.5, 3}; !slices.Equal(floats, want) {
		t.Errorf("w raw_data decodes to %v, want %v", floats, want)
	}
	if got := dumpTensor(t, inits[1]); got != "i int64[] raw=f9ffffffffffffff" {
		t.Errorf("scalar int64 initializer = %s", got)
	}
	if got := dumpTensor(t, inits[2]); got != "j int32[2] raw=01000000ffffffff" {
		t.Errorf("int32 initializer = %s", got)
	}
	if got := dumpTensor(t, inits[3]); got != "h float16[1] raw=003c" {
		t.Errorf("raw float16 initializer = %s", got)
	}

	n := g.sub(t, graphNode)
	if got := n.strs(nodeInput); !slices.Equal(got, []string{"x", "", "w"}) {
		t.Errorf("node inputs = %q (empty names must be kept)", got)
	}
	if got := n.strs(nodeOutput); !slices.Equal(got, []string{"y", ""}) {
		t.Errorf("node outputs = %q", got)
	}
	if n.str(nodeName) != "n" || n.str(nodeOpType) != "Custom" || n.str(nodeDomain) != "com.microsoft" || n.str(nodeDocString) != "node doc" {
		t.Errorf("node fields: %v", n)
	}
	attrs := n.subs(t, nodeAttribute)
	got := make(map[string]string)
	for _, a := range attrs {
		typ := AttrType(a.varint(t, attrType))
		var v any
		switch typ {
		case AttrTypeFloat:
			v = a.floats(t, attrF)
		case AttrTypeInt:
			v = int64(a.varint(t, attrI))
		case AttrTypeString:
			v = a.str(attrS)
		case AttrTypeFloats:
			v = a.floats(t, attrFloats)
		case AttrTypeInts:
			v = a.int64s(t, attrInts)
		case AttrTypeStrings:
			v = a.strs(attrStrings)
		case AttrTypeTensor:
			v = dumpTensor(t, a.sub(t, attrT))
		case AttrTypeGraph:
			v = a.sub(t, attrG).str(graphName)
		}
		got[a.str(attrName)] = fmt.Sprintf("%v:%v", typ, v)
	}
	want := map[string]string{
		"f": "float:[0.25]", "i": "int:-3", "s": "string:same", "fs": "floats:[1 2]",
		"is": "ints:[0 -1 300]", "ss": "strings:[a b]",
		"t": "tensor:tt int64[2] raw=05000000000000000600000000000000", "g": "graph:sub",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("attributes:\n got %v\nwant %v", got, want)
	}
}

// TestMarshalLargeTensor checks the length prefix of messages whose size
// needs several varint bytes (the encoder writes bodies in place).
func TestMarshalLargeTensor(t *testing.T) {
	for _, n := range []int{31, 32, 33, 4095, 70000} {
		data := sample(n, uint64(n))
		m := Model{Graph: Graph{
			Name:         "big",
			Inputs:       []ValueInfo{{Name: "x", Type: Float, Dims: FixedDims(int64(n))}},
			Outputs:      []ValueInfo{{Name: "y", Type: Float, Dims: FixedDims(int64(n))}},
			Initializers: []Tensor{FloatTensor("w", []int64{int64(n)}, data)},
			Nodes:        []Node{{Name: "add", OpType: "Add", Inputs: []string{"x", "w"}, Outputs: []string{"y"}}},
		}}
		b, err := m.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		init := parse(t, b).sub(t, modelGraph).sub(t, graphInitializer)
		raw := []byte(init.str(tensorRawData))
		if len(raw) != 4*n {
			t.Fatalf("n=%d: raw_data has %d bytes, want %d", n, len(raw), 4*n)
		}
		for i, v := range data {
			if got := math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:])); got != v {
				t.Fatalf("n=%d: element %d = %v, want %v", n, i, got, v)
			}
		}
	}
}

// TestGolden compares text dumps of encoded ready-made models with
// testdata/*.golden; run with -update to rewrite them after an intended
// change.
func TestGolden(t *testing.T) {
	tests := []struct {
		file  string
		model Model
	}{
		{"matmul_add_chain.golden", MatMulAddChain(2, 3)},
		{"decoder.golden", Decoder(DecoderConfig{Layers: 1, Heads: 2, HeadDim: 2, Vocab: 5})},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			b, err := tt.model.Marshal()
			if err != nil {
				t.Fatal(err)
			}
			got := dump(t, b)
			path := filepath.Join("testdata", tt.file)
			if *update {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("%s differs from the encoding; run go test -update if the change is intended.\ngot:\n%s", path, got)
			}
		})
	}
}
