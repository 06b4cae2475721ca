package ortapi

import (
	"errors"

	ort "github.com/yalue/onnxruntime_go"
)

// ProvidersAPIVersion is the C API version whose table AvailableProviders
// reads: the Go binding's, which every library it loads has.
const ProvidersAPIVersion = 24

// Indices of GetAvailableProviders and ReleaseAvailableProviders in the
// OrtApi table (a test counts them in the binding's header).
const (
	idxGetAvailableProviders     = 125
	idxReleaseAvailableProviders = 126
)

// AvailableProviders lists the execution providers the loaded ONNX Runtime
// library was built with (OrtApi::GetAvailableProviders), such as
// "CPUExecutionProvider". ONNX Runtime must be initialized first.
func AvailableProviders() ([]string, error) {
	if !ort.IsInitialized() {
		return nil, errors.New("list execution providers: ONNX Runtime is not initialized")
	}
	return providers()
}
