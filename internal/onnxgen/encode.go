package onnxgen

import (
	"maps"
	"math"
	"slices"

	"google.golang.org/protobuf/encoding/protowire"
)

// Field numbers from onnx.proto.
const (
	modelIRVersion       protowire.Number = 1
	modelProducerName    protowire.Number = 2
	modelProducerVersion protowire.Number = 3
	modelDomain          protowire.Number = 4
	modelModelVersion    protowire.Number = 5
	modelDocString       protowire.Number = 6
	modelGraph           protowire.Number = 7
	modelOpsetImport     protowire.Number = 8
	modelMetadataProps   protowire.Number = 14

	opsetDomain  protowire.Number = 1
	opsetVersion protowire.Number = 2

	entryKey   protowire.Number = 1
	entryValue protowire.Number = 2

	graphNode        protowire.Number = 1
	graphName        protowire.Number = 2
	graphInitializer protowire.Number = 5
	graphDocString   protowire.Number = 10
	graphInput       protowire.Number = 11
	graphOutput      protowire.Number = 12
	graphValueInfo   protowire.Number = 13

	nodeInput     protowire.Number = 1
	nodeOutput    protowire.Number = 2
	nodeName      protowire.Number = 3
	nodeOpType    protowire.Number = 4
	nodeAttribute protowire.Number = 5
	nodeDocString protowire.Number = 6
	nodeDomain    protowire.Number = 7

	attrName    protowire.Number = 1
	attrF       protowire.Number = 2
	attrI       protowire.Number = 3
	attrS       protowire.Number = 4
	attrT       protowire.Number = 5
	attrG       protowire.Number = 6
	attrFloats  protowire.Number = 7
	attrInts    protowire.Number = 8
	attrStrings protowire.Number = 9
	attrType    protowire.Number = 20

	tensorDims     protowire.Number = 1
	tensorDataType protowire.Number = 2
	tensorName     protowire.Number = 8
	tensorRawData  protowire.Number = 9

	valueInfoName      protowire.Number = 1
	valueInfoType      protowire.Number = 2
	valueInfoDocString protowire.Number = 3

	typeTensorType protowire.Number = 1

	tensorTypeElemType protowire.Number = 1
	tensorTypeShape    protowire.Number = 2

	shapeDim protowire.Number = 1

	dimValue protowire.Number = 1
	dimParam protowire.Number = 2
)

// appendVarintField appends a varint field (int32/int64/enum).
func appendVarintField(b []byte, num protowire.Number, v uint64) []byte {
	b = protowire.AppendTag(b, num, protowire.VarintType)
	return protowire.AppendVarint(b, v)
}

// appendStringField appends a string field unless s is empty.
func appendStringField(b []byte, num protowire.Number, s string) []byte {
	if s == "" {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendString(b, s)
}

// appendMessage appends an embedded message field whose body is written by
// body. It reserves a one-byte length and moves the body when the length
// needs more, so large bodies are not built in a separate buffer.
func appendMessage(b []byte, num protowire.Number, body func([]byte) []byte) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	at := len(b)
	b = append(b, 0)
	b = body(b)
	n := len(b) - at - 1
	size := protowire.SizeVarint(uint64(n))
	if size == 1 {
		b[at] = byte(n)
		return b
	}
	b = append(b, make([]byte, size-1)...)
	copy(b[at+size:], b[at+1:at+1+n])
	protowire.AppendVarint(b[at:at], uint64(n))
	return b
}

// appendPackedInt64s appends a packed repeated int64 field unless v is empty.
func appendPackedInt64s(b []byte, num protowire.Number, v []int64) []byte {
	if len(v) == 0 {
		return b
	}
	return appendMessage(b, num, func(b []byte) []byte {
		for _, x := range v {
			b = protowire.AppendVarint(b, uint64(x))
		}
		return b
	})
}

func appendModel(b []byte, m *Model) []byte {
	ir := m.IRVersion
	if ir == 0 {
		ir = DefaultIRVersion
	}
	producer := m.Producer
	if producer == "" {
		producer = DefaultProducer
	}
	opset := m.Opset
	if opset == 0 {
		opset = DefaultOpset
	}
	b = appendVarintField(b, modelIRVersion, uint64(ir))
	b = appendStringField(b, modelProducerName, producer)
	b = appendStringField(b, modelProducerVersion, m.ProducerVersion)
	b = appendStringField(b, modelDomain, m.Domain)
	if m.ModelVersion != 0 {
		b = appendVarintField(b, modelModelVersion, uint64(m.ModelVersion))
	}
	b = appendStringField(b, modelDocString, m.Doc)
	b = appendMessage(b, modelGraph, func(b []byte) []byte { return appendGraph(b, &m.Graph) })
	b = appendMessage(b, modelOpsetImport, func(b []byte) []byte {
		return appendVarintField(b, opsetVersion, uint64(opset))
	})
	for _, d := range sortedKeys(m.Opsets) {
		b = appendMessage(b, modelOpsetImport, func(b []byte) []byte {
			b = appendStringField(b, opsetDomain, d)
			return appendVarintField(b, opsetVersion, uint64(m.Opsets[d]))
		})
	}
	for _, k := range sortedKeys(m.Metadata) {
		b = appendMessage(b, modelMetadataProps, func(b []byte) []byte {
			b = protowire.AppendTag(b, entryKey, protowire.BytesType)
			b = protowire.AppendString(b, k)
			b = protowire.AppendTag(b, entryValue, protowire.BytesType)
			return protowire.AppendString(b, m.Metadata[k])
		})
	}
	return b
}

func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}

func appendGraph(b []byte, g *Graph) []byte {
	for i := range g.Nodes {
		b = appendMessage(b, graphNode, func(b []byte) []byte { return appendNode(b, &g.Nodes[i]) })
	}
	b = appendStringField(b, graphName, g.Name)
	for i := range g.Initializers {
		b = appendMessage(b, graphInitializer, func(b []byte) []byte { return appendTensor(b, &g.Initializers[i]) })
	}
	b = appendStringField(b, graphDocString, g.Doc)
	for _, list := range []struct {
		num protowire.Number
		vs  []ValueInfo
	}{{graphInput, g.Inputs}, {graphOutput, g.Outputs}, {graphValueInfo, g.ValueInfo}} {
		for i := range list.vs {
			b = appendMessage(b, list.num, func(b []byte) []byte { return appendValueInfo(b, &list.vs[i]) })
		}
	}
	return b
}

func appendNode(b []byte, n *Node) []byte {
	for _, in := range n.Inputs {
		// Empty names mark left-out optional inputs and must be kept.
		b = protowire.AppendTag(b, nodeInput, protowire.BytesType)
		b = protowire.AppendString(b, in)
	}
	for _, out := range n.Outputs {
		b = protowire.AppendTag(b, nodeOutput, protowire.BytesType)
		b = protowire.AppendString(b, out)
	}
	b = appendStringField(b, nodeName, n.Name)
	b = appendStringField(b, nodeOpType, n.OpType)
	for i := range n.Attrs {
		b = appendMessage(b, nodeAttribute, func(b []byte) []byte { return appendAttr(b, &n.Attrs[i]) })
	}
	b = appendStringField(b, nodeDocString, n.Doc)
	b = appendStringField(b, nodeDomain, n.Domain)
	return b
}

func appendAttr(b []byte, a *Attr) []byte {
	b = appendStringField(b, attrName, a.Name)
	switch a.Type {
	case AttrTypeFloat:
		b = protowire.AppendTag(b, attrF, protowire.Fixed32Type)
		b = protowire.AppendFixed32(b, math.Float32bits(a.F))
	case AttrTypeInt:
		b = appendVarintField(b, attrI, uint64(a.I))
	case AttrTypeString:
		b = protowire.AppendTag(b, attrS, protowire.BytesType)
		b = protowire.AppendString(b, a.S)
	case AttrTypeTensor:
		b = appendMessage(b, attrT, func(b []byte) []byte { return appendTensor(b, a.T) })
	case AttrTypeGraph:
		b = appendMessage(b, attrG, func(b []byte) []byte { return appendGraph(b, a.G) })
	case AttrTypeFloats:
		if len(a.Floats) > 0 {
			b = appendMessage(b, attrFloats, func(b []byte) []byte {
				for _, f := range a.Floats {
					b = protowire.AppendFixed32(b, math.Float32bits(f))
				}
				return b
			})
		}
	case AttrTypeInts:
		b = appendPackedInt64s(b, attrInts, a.Ints)
	case AttrTypeStrings:
		for _, s := range a.Strings {
			b = protowire.AppendTag(b, attrStrings, protowire.BytesType)
			b = protowire.AppendString(b, s)
		}
	}
	return appendVarintField(b, attrType, uint64(a.Type))
}

func appendTensor(b []byte, t *Tensor) []byte {
	b = appendPackedInt64s(b, tensorDims, t.Dims)
	b = appendVarintField(b, tensorDataType, uint64(t.Type))
	b = appendStringField(b, tensorName, t.Name)
	b = protowire.AppendTag(b, tensorRawData, protowire.BytesType)
	b = protowire.AppendVarint(b, uint64(t.rawSize()))
	return t.appendRawData(b)
}

func appendValueInfo(b []byte, v *ValueInfo) []byte {
	b = appendStringField(b, valueInfoName, v.Name)
	b = appendMessage(b, valueInfoType, func(b []byte) []byte {
		return appendMessage(b, typeTensorType, func(b []byte) []byte {
			b = appendVarintField(b, tensorTypeElemType, uint64(v.Type))
			if v.UnknownRank {
				return b
			}
			return appendMessage(b, tensorTypeShape, func(b []byte) []byte {
				for _, d := range v.Dims {
					b = appendMessage(b, shapeDim, func(b []byte) []byte {
						switch {
						case d.Param != "":
							b = protowire.AppendTag(b, dimParam, protowire.BytesType)
							b = protowire.AppendString(b, d.Param)
						case d.Value >= 0:
							b = appendVarintField(b, dimValue, uint64(d.Value))
						}
						return b
					})
				}
				return b
			})
		})
	})
	return appendStringField(b, valueInfoDocString, v.Doc)
}
