package ortlib

import "github.com/ortel-dev/ortel/instrument/internal/ortapi"

// AvailableProviders lists the execution providers the loaded ONNX Runtime
// library was built with, in its order of preference, such as
// ["CPUExecutionProvider"] for the CPU-only build (ONNX Runtime's
// GetAvailableProviders). Call Init first.
func AvailableProviders() ([]string, error) {
	return ortapi.AvailableProviders()
}
