package instrument

import "github.com/ortel-dev/ortel/semconv"

// Attribute names, from the semconv registry (semconv/registry,
// docs/metrics.md).
const (
	attrModelName          = string(semconv.OnnxruntimeModelNameKey)
	attrSessionID          = string(semconv.OnnxruntimeSessionIDKey)
	attrExecutionProvider  = string(semconv.OnnxruntimeExecutionProviderKey)
	attrExecutionProviders = string(semconv.OnnxruntimeExecutionProvidersKey)
	attrBatchSize          = string(semconv.OnnxruntimeBatchSizeKey)
	attrRunProfiled        = string(semconv.OnnxruntimeRunProfiledKey)
	attrErrorType          = string(semconv.ErrorTypeKey)
	attrStageName          = string(semconv.OrtelStageNameKey)
	attrPipelineName       = string(semconv.OrtelPipelineNameKey)
	attrProfilingInterval  = string(semconv.OrtelProfilingIntervalKey)

	attrNodeName           = string(semconv.OnnxruntimeNodeNameKey)
	attrNodeOpType         = string(semconv.OnnxruntimeNodeOpTypeKey)
	attrNodeIndex          = string(semconv.OnnxruntimeNodeIndexKey)
	attrNodeInputShapes    = string(semconv.OnnxruntimeNodeInputTypeShapesKey)
	attrNodeOutputShapes   = string(semconv.OnnxruntimeNodeOutputTypeShapesKey)
	attrNodeActivationSize = string(semconv.OnnxruntimeNodeActivationSizeKey)
	attrNodeParameterSize  = string(semconv.OnnxruntimeNodeParameterSizeKey)
	attrNodeOutputSize     = string(semconv.OnnxruntimeNodeOutputSizeKey)
)
