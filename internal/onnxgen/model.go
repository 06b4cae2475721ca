package onnxgen

import (
	"fmt"
	"os"
)

// Defaults used when the corresponding Model field is zero.
const (
	// DefaultIRVersion is the ONNX IR version written when Model.IRVersion
	// is 0.
	DefaultIRVersion = 8
	// DefaultOpset is the default-domain opset imported when Model.Opset is
	// 0.
	DefaultOpset = 17
	// DefaultProducer is the producer name written when Model.Producer is
	// empty.
	DefaultProducer = "ortel-onnxgen"
)

// Model is an ONNX model: one graph plus the header ONNX Runtime reads.
type Model struct {
	Graph Graph
	// Opset is the version of the default ONNX operator set (domain "");
	// 0 means DefaultOpset.
	Opset int
	// Opsets imports further operator domains, such as "com.microsoft",
	// with their versions. A node whose Domain is not imported is an error.
	Opsets map[string]int
	// IRVersion is the ONNX IR version; 0 means DefaultIRVersion.
	IRVersion int64
	// Producer names the tool that made the model; "" means
	// DefaultProducer.
	Producer        string
	ProducerVersion string
	Domain          string
	ModelVersion    int64
	Doc             string
	// Metadata becomes the model's metadata_props (ONNX Runtime's custom
	// metadata map). Keys are written in sorted order.
	Metadata map[string]string

	// err records impossible constructor arguments; Validate reports it.
	err error
}

// invalidModel returns a Model that reports err, wrapped in
// ErrInvalidModel, from Validate, Marshal and WriteFile.
func invalidModel(format string, args ...any) Model {
	return Model{err: fmt.Errorf("%w: %s", ErrInvalidModel, fmt.Sprintf(format, args...))}
}

// Validate checks the model against ONNX's structural rules (see the
// package documentation) without encoding it. Its errors wrap
// ErrInvalidModel and name the graph, node and value at fault.
func (m Model) Validate() error {
	if m.err != nil {
		return m.err
	}
	if m.Opset < 0 {
		return fmt.Errorf("%w: opset %d is negative", ErrInvalidModel, m.Opset)
	}
	for d, v := range m.Opsets {
		if d == "" || d == "ai.onnx" {
			return fmt.Errorf("%w: Model.Opsets lists the default domain %q; set Model.Opset instead", ErrInvalidModel, d)
		}
		if v <= 0 {
			return fmt.Errorf("%w: Model.Opsets gives domain %q version %d; versions start at 1", ErrInvalidModel, d, v)
		}
	}
	c := checker{opsets: m.Opsets}
	if err := c.graph(&m.Graph, nil); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidModel, err)
	}
	return nil
}

// Marshal validates the model and encodes it as an ONNX ModelProto, ready to
// be written to a .onnx file or handed to ONNX Runtime. The encoding is
// deterministic: the same Model always gives the same bytes.
func (m Model) Marshal() ([]byte, error) {
	if err := m.Validate(); err != nil {
		return nil, err
	}
	return appendModel(make([]byte, 0, m.sizeHint()), &m), nil
}

// WriteFile marshals the model and writes it to path (mode 0644).
func (m Model) WriteFile(path string) error {
	b, err := m.Marshal()
	if err != nil {
		return fmt.Errorf("write model %q: %w", path, err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return fmt.Errorf("write model %q: %w", path, err)
	}
	return nil
}

// NumParameters returns the number of elements in the model's initializers.
func (m Model) NumParameters() int64 { return m.Graph.NumParameters() }

// sizeHint estimates the encoded size, dominated by initializer data, so
// that Marshal allocates once for large models.
func (m *Model) sizeHint() int {
	n := 4096 + 128*len(m.Graph.Nodes)
	for i := range m.Graph.Initializers {
		n += m.Graph.Initializers[i].rawSize() + 64
	}
	return n
}
