// Package telemetry sets up the OpenTelemetry SDK and its exporters for
// ortel's commands and examples: one call, Setup, gives a TracerProvider and
// a MeterProvider configured from the standard OTEL_* environment variables,
// and Shutdown flushes them within a bounded time.
//
// # Where telemetry goes
//
// With an OTLP endpoint configured (Config.Endpoint or
// OTEL_EXPORTER_OTLP_ENDPOINT and its _TRACES_/_METRICS_ variants) traces
// and metrics are sent over OTLP, gRPC, http/protobuf or http/json per
// signal, through the official exporters (package difftest proves the wire
// matches theirs for the same environment). A failed export names the URL
// it went to and, for a protocol or TLS mismatch, the variable to set. Without one, the embedded default appends them to
// <OutputDir>/traces.jsonl and <OutputDir>/metrics.jsonl in the OTLP/JSON
// lines format (package otlpjson), which any OpenTelemetry Collector
// replays with its otlpjsonfile receiver, optionally rotated
// (Config.Rotation). OTEL_TRACES_EXPORTER / OTEL_METRICS_EXPORTER=console
// prints a signal as OTLP/JSON lines, =none drops it; OTEL_SDK_DISABLED=true
// turns everything off.
//
// With Config.SpoolDir, what an OTLP export fails to deliver is appended to
// the spool (OTLP/JSON lines, bounded by Config.SpoolMaxBytes) instead of
// being dropped; Replay sends a spool, or any OTLP/JSON lines file, to the
// collector once per record. After a failed span export the collector is
// marked down: batches go to the spool at once, without waiting out the
// export timeout, while an empty export probes the collector in the
// background every second; so the span queue keeps draining during an
// outage and does not overflow.
//
// Resolve reads the environment without side effects; Resolved.Describe
// prints what will be used, for `ortel doctor`. A bad environment value
// never fails: it is ignored with a warning in Resolved.Warnings.
//
// # Environment
//
//	OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES        resource
//	OTEL_EXPORTER_OTLP_ENDPOINT (+_TRACES_, _METRICS_)   http://host:port plaintext, https:// TLS; no port: 80/443
//	OTEL_EXPORTER_OTLP_INSECURE (+signal)               plaintext for an endpoint without a scheme
//	OTEL_EXPORTER_OTLP_HEADERS (+signal)                k=v,k2=v2, percent-encoded; values never printed
//	OTEL_EXPORTER_OTLP_CERTIFICATE, _CLIENT_CERTIFICATE, _CLIENT_KEY (+signal)
//	OTEL_EXPORTER_OTLP_TIMEOUT (+signal)                milliseconds, default 10000
//	OTEL_EXPORTER_OTLP_COMPRESSION (+signal)            gzip or none
//	OTEL_EXPORTER_OTLP_PROTOCOL (+signal)               grpc (default), http/protobuf or http/json (both signals)
//	OTEL_TRACES_EXPORTER, OTEL_METRICS_EXPORTER         otlp (default), console or none
//	OTEL_TRACES_SAMPLER, OTEL_TRACES_SAMPLER_ARG        always_on, always_off, traceidratio, parentbased_* (default parentbased_always_on)
//	OTEL_METRIC_EXPORT_INTERVAL, _TIMEOUT               milliseconds
//	OTEL_BSP_MAX_QUEUE_SIZE (default 65536), OTEL_BSP_MAX_EXPORT_BATCH_SIZE,
//	OTEL_BSP_SCHEDULE_DELAY, OTEL_BSP_EXPORT_TIMEOUT
//	OTEL_SDK_DISABLED                                   true turns telemetry off
//
// # Reliability
//
// Telemetry never blocks or fails the caller. span.End only enqueues: when
// the queue is full (a collector down or slow for long) the span is dropped
// and counted, never waited for. Metric instruments only aggregate; exports
// run on the periodic reader's goroutine. Stats reports spans ended,
// exported, spooled, dropped and pending, and metric export failures;
// Shutdown, bounded by the export timeout plus 500ms (a dead collector
// delays exit by little more than OTEL_EXPORTER_OTLP_TIMEOUT), abandons
// exports still in flight when its time is up, spools or drops them, and
// reports the drops in its error, each signal with its own last error. Stats.Lost says, one line per signal, what never
// reached the collector (metrics only when the last export failed: they
// are cumulative).
//
// # Secrets
//
// Header values are credentials. The Headers type never prints them, and
// RedactorFromEnv builds a Redactor from every *_HEADERS variable (also
// entries that do not parse, whole) and endpoint passwords: a program
// passes everything it prints — its own output, the OpenTelemetry logger
// and error handler, gRPC's logger — through it (cmd/ortel does).
//
// # Emitted telemetry
//
// The package creates no instruments of its own. Every span and metric
// carries the resource: service.name, service.version, the
// OTEL_RESOURCE_ATTRIBUTES, host.name, host.arch, os.type, os.description,
// process.pid, process.executable.name, process.runtime.name,
// process.runtime.version, process.runtime.description and
// telemetry.sdk.name, telemetry.sdk.language, telemetry.sdk.version.
// Process command-line arguments are left out: they can hold credentials.
package telemetry
