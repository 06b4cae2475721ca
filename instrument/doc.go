// Package instrument makes ONNX Runtime inference observable with
// OpenTelemetry: every session run is a span, every pipeline stage is a span,
// and every operator of a profiled run is a span placed at its true
// wall-clock time under the run it belongs to, so a trace reads
// request → stage → run → operator.
//
// It wraps the sessions of github.com/yalue/onnxruntime_go
// (DynamicAdvancedSession and AdvancedSession) and uses the OpenTelemetry API
// only: spans and metrics go to the global providers unless others are
// injected with WithTracerProvider and WithMeterProvider. Configure the SDK
// side (exporters, the views of package views) in the program.
//
// # Getting started
//
// Load ONNX Runtime once with package ortlib (it finds the library from
// ONNXRUNTIME_SHARED_LIBRARY_PATH, the ortel cache or the system), then
// create sessions here instead of with onnxruntime_go:
//
//	if _, err := ortlib.Init(); err != nil { ... }
//	sess, err := instrument.NewDynamicSession(ctx, "det.onnx", inputs, outputs, nil,
//		instrument.WithProfiling(instrument.Profiling{EveryN: 100, SlowRun: time.Second}))
//	defer sess.Close(ctx) // before the providers shut down
//	err = sess.Run(ctx, in, out)
//
// examples/http-service is a complete net/http service.
//
// # Cost
//
// A Run adds one span and one histogram Record, with attribute sets built
// once at session creation, two atomic adds for the lifecycle gate and two
// for the run counters (read by an asynchronous callback). With no-op
// providers that is about 3% of a Silero VAD Run (85 µs). The rest is the
// SDK's: with the SDK's BatchSpanProcessor each ended span wakes its export
// goroutine, which on a small machine costs more CPU than the span (+47% per
// traced VAD Run on 2 cores, 2 context switches per Run); a batcher that
// wakes once per batch costs +10%: give the SDK package instrument/spanbatch
// instead (sdktrace.WithSpanProcessor(spanbatch.New(exp))). See
// BenchmarkTracedRunVAD and the README's budgets.
//
// # Lifecycle
//
// Sessions are safe for concurrent use (AdvancedSession: not with itself).
// Close refuses new runs with ErrClosed, waits for the runs in flight,
// destroys the session and emits the operator spans still pending, all
// bounded by its context; a session is never destroyed under a Run. Flush
// emits pending operator spans without closing. Close sessions before
// shutting the providers down: operator spans that reach a provider already
// shut down are counted (ProfilingStats().Lost) and reported once through
// otel.Handle.
//
// # Operator profiling
//
// Operator timings exist only in ONNX Runtime's profiler. It is off by
// default. With WithProfiling (or the ORTEL_PROFILE_* environment
// variables) runs are selected every Nth, with a probability, after a run
// slower than SlowRun (the next TailRuns runs), with ProfileRuns (ortel
// bench's profiling pass) or with TriggerProfiling (rate-limited, for an
// endpoint or a signal). Every selected run is profiled, under concurrency
// too, and each of its operators becomes a child span of its run span,
// emitted in the background.
//
// On ONNX Runtime 1.25 and later a selected run goes through the session
// itself with run-level profiling on (RunOptionsEnableProfiling, reached
// through the C API since the Go binding predates it); wrapped sessions are
// profiled too. On 1.24 it goes through a profiled copy of the session (a
// window of at most WindowRuns runs), opened ahead of time off the request
// path; there a wrapped session cannot be profiled and says so.
// Each profile's events are gathered into runs by profile.Grouper (matched
// by interval and thread, nested, bounded in memory), the grouper `ortel
// import` uses too. ImportProfile turns a profile written by any ORT
// program into the same spans.
//
// What a profiled run costs: on ONNX Runtime 1.30 the per-run profiler
// itself adds about 0.4-0.5 ms to a run whatever the model (it formats
// every event with C++ streams and writes a new file per run: 5x a Silero
// VAD run, 1.07x a PaddleOCR det run); reading the profile and emitting
// the operator spans adds about 6 µs per operator, off the request path,
// most of it the SDK's span creation (ortel keeps each node's span name and
// attributes between runs). So 1 run in 100 of a 0.1 ms model costs more
// than 2% CPU; Profiling.MaxCPUShare caps profiling's share and lengthens
// the sampling interval to fit, reported by ProfilingStats and by the
// ortel.profiling.interval attribute of profiled run spans.
//
// # LLM generation
//
// Generations records generations of a decoder under the OpenTelemetry
// GenAI conventions: Start opens a generation and its prefill span, the
// first Token ends the prefill (the time to first token) and opens the
// decode span, End records the time per output token (upstream's
// definition: first to last token over the tokens after the first), the
// token counts, tokens per second and the KV-cache size (KVCacheBytes sums
// a decoder's present.* outputs). The gen_ai histograms carry the upstream
// recommended bucket boundaries.
//
// # Telemetry
//
// Spans:
//
//	name                     kind      attributes
//	run {model}              internal  onnxruntime.model.name, .session.id, .execution_providers,
//	                                   .batch_size, .run.profiled, error.type (on failure),
//	                                   ortel.profiling.interval (profiled runs, with MaxCPUShare)
//	create_session {model}   internal  as run, at session creation
//	{op type}, e.g. Conv     internal  onnxruntime.node.name, .node.op_type, .execution_provider,
//	                                   .node.index, .node.input_type_shapes, .node.output_type_shapes,
//	                                   .node.activation_size, .node.parameter_size, .node.output_size,
//	                                   .node.threads.count, .node.threads.sub_runs,
//	                                   .node.threads.main_run_ratio, .node.threads.imbalance
//	{stage name}             internal  ortel.stage.name, ortel.pipeline.name, error.type (on failure)
//	text_completion {model}  internal  gen_ai.operation.name, gen_ai.provider.name, gen_ai.request.model,
//	                                   gen_ai.usage.input_tokens, gen_ai.usage.output_tokens,
//	                                   ortel.generation.kv_cache.size, error.type (on failure)
//	prefill, decode          internal  (children of a generation; its runs nest under them)
//
// Metrics:
//
//	name                                   instrument                  unit     attributes
//	onnxruntime.run.duration               Float64Histogram            s        onnxruntime.model.name, onnxruntime.run.profiled, error.type
//	onnxruntime.runs                       Int64ObservableCounter      {run}    onnxruntime.model.name
//	onnxruntime.run.errors                 Int64Counter                {error}  onnxruntime.model.name, error.type
//	onnxruntime.run.active                 Int64ObservableUpDownCounter {run}   onnxruntime.model.name
//	onnxruntime.session.creation.duration  Float64Histogram            s        onnxruntime.model.name, error.type
//	onnxruntime.node.duration              Float64Histogram            s        onnxruntime.model.name, onnxruntime.node.op_type, onnxruntime.execution_provider
//	ortel.stage.duration                   Float64Histogram            s        ortel.stage.name, ortel.pipeline.name, error.type
//	gen_ai.server.time_to_first_token      Float64Histogram            s        gen_ai.operation.name, gen_ai.provider.name, gen_ai.request.model
//	gen_ai.server.time_per_output_token    Float64Histogram            s        gen_ai.operation.name, gen_ai.provider.name, gen_ai.request.model
//	ortel.generation.tokens                Int64Histogram              {token}  onnxruntime.model.name, gen_ai.token.type
//	ortel.generation.throughput            Float64Histogram            {token}/s onnxruntime.model.name
//	ortel.generation.kv_cache.size         Int64Histogram              By       onnxruntime.model.name
//
// Attributes given with WithAttributes go on all of them. Node names, shapes
// and session ids stay on spans: they would multiply metric series.
// docs/metrics.md, generated from the semconv registry, has the full reference.
package instrument
