package instrument

import (
	"context"
	"fmt"
	"strings"
	"time"

	ort "github.com/yalue/onnxruntime_go"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/ortel-dev/ortel/semconv"
)

// Values of gen_ai.operation.name and gen_ai.provider.name on generations:
// a prompt run through a decoder, then one token at a time, in process on
// ONNX Runtime.
const (
	GenerationOperation = "text_completion"
	GenerationProvider  = "onnxruntime"
)

// Generations records the LLM generations of one model under the OpenTelemetry
// GenAI conventions: per generation, a span "text_completion {model}" with a
// "prefill" and a "decode" child, the gen_ai.server.time_to_first_token and
// gen_ai.server.time_per_output_token histograms (with the upstream bucket
// boundaries), and ortel's token counts, output tokens per second and
// key/value-cache size. Runs of the model started with the contexts a
// Generation hands out nest under its prefill and decode spans.
//
// A Generations is safe for concurrent use; each Generation belongs to one
// goroutine.
type Generations struct {
	tracer    trace.Tracer
	spanName  string
	spanAttrs []attribute.KeyValue

	ttft, tpot  metric.Float64Histogram
	tokens      metric.Int64Histogram
	throughput  metric.Float64Histogram
	kvCacheSize metric.Int64Histogram

	genAIRec   []metric.RecordOption // gen_ai.* histograms
	modelRec   []metric.RecordOption // ortel.generation.* histograms
	inputRec   []metric.RecordOption // ortel.generation.tokens, input
	outputRec  []metric.RecordOption // ortel.generation.tokens, output
	baseAttrs  []attribute.KeyValue
	genAIAttrs []attribute.KeyValue
}

// NewGenerations returns a Generations for the model named with
// WithModelName (default "model"), using the providers and attributes of
// opts: pass the options of the model's session. Create it once per model;
// options that do not concern generations (profiling) are ignored.
func NewGenerations(opts ...Option) *Generations {
	return newGenerations(newConfig("", opts))
}

func newGenerations(cfg config) *Generations {
	g := &Generations{
		tracer:   cfg.tracerProvider.Tracer(ScopeName, trace.WithInstrumentationVersion(Version())),
		spanName: GenerationOperation + " " + cfg.modelName,
	}
	m := cfg.meterProvider.Meter(ScopeName, metric.WithInstrumentationVersion(Version()))
	var e [5]error
	g.ttft, e[0] = semconv.NewGenAIServerTimeToFirstToken(m)
	g.tpot, e[1] = semconv.NewGenAIServerTimePerOutputToken(m)
	g.tokens, e[2] = semconv.NewOrtelGenerationTokens(m)
	g.throughput, e[3] = semconv.NewOrtelGenerationThroughput(m)
	g.kvCacheSize, e[4] = semconv.NewOrtelGenerationKVCacheSize(m)
	for _, err := range e {
		if err != nil {
			otel.Handle(fmt.Errorf("ortel: creating the generation instruments: %w", err))
			break
		}
	}
	g.genAIAttrs = append([]attribute.KeyValue{
		semconv.GenAIOperationName(GenerationOperation),
		semconv.GenAIProviderName(GenerationProvider),
		semconv.GenAIRequestModel(cfg.modelName),
	}, cfg.attrs...)
	g.baseAttrs = append([]attribute.KeyValue{attribute.String(attrModelName, cfg.modelName)}, cfg.attrs...)
	g.spanAttrs = append(append([]attribute.KeyValue(nil), g.genAIAttrs...), attribute.String(attrModelName, cfg.modelName))
	g.genAIRec = []metric.RecordOption{metric.WithAttributeSet(attribute.NewSet(g.genAIAttrs...))}
	g.modelRec = []metric.RecordOption{metric.WithAttributeSet(attribute.NewSet(g.baseAttrs...))}
	g.inputRec = []metric.RecordOption{metric.WithAttributeSet(attribute.NewSet(append(append([]attribute.KeyValue(nil), g.baseAttrs...), semconv.GenAITokenTypeInput)...))}
	g.outputRec = []metric.RecordOption{metric.WithAttributeSet(attribute.NewSet(append(append([]attribute.KeyValue(nil), g.baseAttrs...), semconv.GenAITokenTypeOutput)...))}
	return g
}

// Generation is one LLM generation in progress. Start opens it in its prefill
// phase; the first Token ends the prefill and opens the decode phase; End
// closes it and records its metrics. It is not safe for concurrent use.
type Generation struct {
	g          *Generations
	ctx        context.Context // the generation span's context
	span       trace.Span
	phase      trace.Span // prefill, then decode
	decodeCtx  context.Context
	start      time.Time
	tokenTimes []time.Time
	input      int
	kvBytes    int64
	ended      bool
	stats      GenerationStats
}

// GenerationStats is what a generation measured. Durations follow the
// upstream definitions: TimeToFirstToken runs from Start to the first token;
// TimePerOutputToken is the time from the first to the last token divided by
// the tokens after the first (0 for a single token).
type GenerationStats struct {
	InputTokens  int
	OutputTokens int

	Start      time.Time
	TokenTimes []time.Time // when each output token was marked
	End        time.Time

	TimeToFirstToken   time.Duration
	TimePerOutputToken time.Duration
	Prefill            time.Duration // Start to the first token
	Decode             time.Duration // first to last token
	// TokensPerSecond is output tokens per second from Start to the last
	// token; DecodeTokensPerSecond counts only the tokens after the first
	// over the decode phase (1/TimePerOutputToken).
	TokensPerSecond       float64
	DecodeTokensPerSecond float64
	KVCacheBytes          int64
	Err                   error
}

// Start opens a generation of a prompt of inputTokens tokens as a child of
// the span in ctx. The returned context carries its prefill span: run the
// prompt (the prefill) with it, then call Token.
func (g *Generations) Start(ctx context.Context, inputTokens int) (context.Context, *Generation) {
	start := time.Now()
	gctx, span := g.tracer.Start(ctx, g.spanName,
		trace.WithTimestamp(start),
		trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithAttributes(g.spanAttrs...),
		trace.WithAttributes(semconv.GenAIUsageInputTokens(inputTokens)))
	pctx, phase := g.tracer.Start(gctx, "prefill", trace.WithTimestamp(start), trace.WithSpanKind(trace.SpanKindInternal))
	return pctx, &Generation{g: g, ctx: gctx, span: span, phase: phase, start: start, input: inputTokens}
}

// Token marks one output token produced now and returns the context for the
// runs that produce the next one. The first call ends the prefill span,
// which is when the time to first token is taken, and opens the decode span;
// the returned context carries it. Token after End does nothing.
func (g *Generation) Token() context.Context {
	if g.ended {
		return g.ctx
	}
	now := time.Now()
	g.tokenTimes = append(g.tokenTimes, now)
	if len(g.tokenTimes) == 1 {
		g.phase.End(trace.WithTimestamp(now))
		g.decodeCtx, g.phase = g.g.tracer.Start(g.ctx, "decode", trace.WithTimestamp(now), trace.WithSpanKind(trace.SpanKindInternal))
	}
	return g.decodeCtx
}

// SetKVCacheBytes records the size of the key/value cache the model holds for
// this generation (see KVCacheBytes). The last value set is recorded at End.
func (g *Generation) SetKVCacheBytes(n int64) { g.kvBytes = n }

// End closes the generation. A nil err records the time to first token and
// the time per output token (upstream counts successful responses only); the
// token counts, throughput and cache size are recorded in every case. A
// non-nil err marks the spans failed. End returns the measurements; a second
// End returns them again and records nothing.
func (g *Generation) End(err error) GenerationStats {
	if g.ended {
		return g.stats
	}
	g.ended = true
	end := time.Now()
	s := GenerationStats{
		InputTokens: g.input, OutputTokens: len(g.tokenTimes),
		Start: g.start, TokenTimes: g.tokenTimes, End: end,
		KVCacheBytes: g.kvBytes, Err: err,
	}
	ctx := g.ctx
	gg := g.g
	if n := len(g.tokenTimes); n > 0 {
		first, last := g.tokenTimes[0], g.tokenTimes[n-1]
		s.TimeToFirstToken = first.Sub(g.start)
		s.Prefill = s.TimeToFirstToken
		s.Decode = last.Sub(first)
		if total := last.Sub(g.start); total > 0 {
			s.TokensPerSecond = float64(n) / total.Seconds()
		}
		if n > 1 {
			s.TimePerOutputToken = s.Decode / time.Duration(n-1)
			if s.Decode > 0 {
				s.DecodeTokensPerSecond = float64(n-1) / s.Decode.Seconds()
			}
		}
		if err == nil {
			gg.ttft.Record(ctx, s.TimeToFirstToken.Seconds(), gg.genAIRec...)
			if n > 1 {
				gg.tpot.Record(ctx, s.TimePerOutputToken.Seconds(), gg.genAIRec...)
			}
		}
		if s.TokensPerSecond > 0 {
			gg.throughput.Record(ctx, s.TokensPerSecond, gg.modelRec...)
		}
		// The decode span ends with the last token; an error after it still
		// marks the generation span.
		g.phase.End(trace.WithTimestamp(last))
	} else {
		if err != nil {
			g.phase.SetStatus(codes.Error, err.Error())
		}
		g.phase.End(trace.WithTimestamp(end))
	}
	gg.tokens.Record(ctx, int64(g.input), gg.inputRec...)
	gg.tokens.Record(ctx, int64(len(g.tokenTimes)), gg.outputRec...)
	if g.kvBytes > 0 {
		gg.kvCacheSize.Record(ctx, g.kvBytes, gg.modelRec...)
		g.span.SetAttributes(semconv.OrtelGenerationKVCacheSize(int(g.kvBytes)))
	}
	g.span.SetAttributes(semconv.GenAIUsageOutputTokens(len(g.tokenTimes)))
	if err != nil {
		g.span.RecordError(err)
		g.span.SetStatus(codes.Error, err.Error())
		g.span.SetAttributes(attribute.String(attrErrorType, errorType(err)))
	}
	g.span.End(trace.WithTimestamp(end))
	g.stats = s
	return s
}

// Context returns the context of the generation's own span, for work that
// belongs to the generation but to neither phase (tokenization, sampling).
func (g *Generation) Context() context.Context { return g.ctx }

// KVCacheBytes sums the bytes of the key/value-cache tensors among a
// decoder's outputs: those whose name starts with "present" (present.0.key,
// present_key_values, ...), the Hugging Face/Optimum convention. names and
// values are parallel; nil values and tensors of unknown element size count 0.
func KVCacheBytes(names []string, values []ort.Value) int64 {
	var total int64
	for i, name := range names {
		if i >= len(values) || values[i] == nil || !strings.HasPrefix(name, "present") {
			continue
		}
		total += tensorBytes(values[i])
	}
	return total
}

// tensorBytes returns the size of a tensor's data in bytes, or 0 for values
// that are not tensors or whose element type has no fixed size (strings).
func tensorBytes(v ort.Value) int64 {
	if v == nil || v.GetONNXType() != ort.ONNXTypeTensor {
		return 0
	}
	n := elementBytes(ort.TensorElementDataType(v.DataType()))
	for _, d := range v.GetShape() {
		n *= d
	}
	return n
}

func elementBytes(t ort.TensorElementDataType) int64 {
	switch t {
	case ort.TensorElementDataTypeDouble, ort.TensorElementDataTypeInt64, ort.TensorElementDataTypeUint64:
		return 8
	case ort.TensorElementDataTypeFloat, ort.TensorElementDataTypeInt32, ort.TensorElementDataTypeUint32:
		return 4
	case ort.TensorElementDataTypeFloat16, ort.TensorElementDataTypeBFloat16,
		ort.TensorElementDataTypeInt16, ort.TensorElementDataTypeUint16:
		return 2
	case ort.TensorElementDataTypeInt8, ort.TensorElementDataTypeUint8, ort.TensorElementDataTypeBool:
		return 1
	}
	return 0
}
