package bench

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/ortel-dev/ortel/instrument"
	"github.com/ortel-dev/ortel/internal/report"
)

// modelInfo is what describeModel learns about a model file.
type modelInfo struct {
	report  report.Model
	inputs  []ort.InputOutputInfo
	outputs []ort.InputOutputInfo
}

func describeModel(path string) (*modelInfo, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open model %q: %w", path, err)
	}
	defer f.Close()
	h := sha256.New()
	size, err := io.Copy(h, f)
	if err != nil {
		return nil, fmt.Errorf("read model %q: %w", path, err)
	}
	if size == 0 {
		return nil, fmt.Errorf("model %q is an empty file", path)
	}
	ins, outs, err := ort.GetInputOutputInfo(path)
	if err != nil {
		return nil, fmt.Errorf("model %q is not a valid ONNX model: %w", path, err)
	}
	mi := &modelInfo{inputs: ins, outputs: outs, report: report.Model{
		Name: instrument.ModelName(path), Path: path, SizeBytes: size, SHA256: hex.EncodeToString(h.Sum(nil)),
	}}
	if md, err := ort.GetModelMetadata(path); err == nil {
		mi.report.Producer, _ = md.GetProducerName()
		mi.report.Graph, _ = md.GetGraphName()
		md.Destroy()
	}
	for _, i := range ins {
		mi.report.Inputs = append(mi.report.Inputs, report.Tensor{Name: i.Name, Type: typeName(i.DataType), Declared: i.Dimensions})
	}
	for _, o := range outs {
		mi.report.Outputs = append(mi.report.Outputs, report.Tensor{Name: o.Name, Type: typeName(o.DataType), Declared: o.Dimensions})
	}
	return mi, nil
}

// DescribeModel reads the model file at path (ONNX Runtime must be
// initialized): its name, size, SHA-256, producer, graph, inputs and
// outputs, as a bench report holds them. ortel report uses it for the
// model a profile ran (--model).
func DescribeModel(path string) (report.Model, error) {
	mi, err := describeModel(path)
	if err != nil {
		return report.Model{}, err
	}
	return mi.report, nil
}
