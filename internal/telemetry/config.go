package telemetry

import (
	"crypto/tls"
	"errors"
	"fmt"
	"go.opentelemetry.io/otel/sdk/resource"
	"io"
	"os"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// Modes of Resolved.Mode.
const (
	// ModeOTLP sends traces, metrics or both to a collector over OTLP.
	ModeOTLP = "otlp"
	// ModeFile is the embedded default, used when no OTLP endpoint is
	// configured: replayable OTLP/JSON lines files under the output folder.
	ModeFile = "file"
	// ModeDisabled is OTEL_SDK_DISABLED=true: nothing is recorded or sent.
	ModeDisabled = "disabled"
	// ModeConsole: no signal goes to OTLP or files, at least one is
	// printed (OTEL_TRACES_EXPORTER or OTEL_METRICS_EXPORTER=console).
	ModeConsole = "console"
	// ModeNone: both signals' exporters are none.
	ModeNone = "none"
)

// Kinds of Exporter.Kind, what one signal's exporter does.
const (
	// KindOTLP sends the signal to a collector over OTLP.
	KindOTLP = "otlp"
	// KindFile appends it to an OTLP/JSON lines file (the embedded
	// default when no endpoint is configured).
	KindFile = "file"
	// KindConsole prints it as OTLP/JSON lines on standard output.
	KindConsole = "console"
	// KindNone does not export it.
	KindNone = "none"
)

// OTLP transports.
const (
	ProtocolGRPC = "grpc"
	ProtocolHTTP = "http/protobuf"
	// ProtocolHTTPJSON is OTLP/HTTP with JSON bodies, for both signals.
	// The official metric exporter has no JSON encoding: ortel's
	// re-encodes its requests (see jsonTransport).
	ProtocolHTTPJSON = "http/json"
)

// Defaults.
const (
	DefaultServiceName     = "ortel"
	DefaultOutputDir       = "ortel-out"
	DefaultMetricInterval  = 10 * time.Second // OTEL_METRIC_EXPORT_INTERVAL
	DefaultMetricTimeout   = 30 * time.Second // OTEL_METRIC_EXPORT_TIMEOUT
	DefaultShutdownTimeout = 10 * time.Second
	// shutdownMargin is added to the export timeout to bound Shutdown.
	shutdownMargin = 500 * time.Millisecond
	// DefaultExportTimeout bounds one OTLP export, retries included
	// (OTEL_EXPORTER_OTLP_TIMEOUT).
	DefaultExportTimeout = 10 * time.Second
	// DefaultSpanQueueSize is far above the SDK's 2048, so the burst of
	// operator spans a profiled pass ends at once is not dropped
	// (OTEL_BSP_MAX_QUEUE_SIZE).
	DefaultSpanQueueSize     = 65536
	DefaultSpanBatchSize     = 512              // OTEL_BSP_MAX_EXPORT_BATCH_SIZE
	DefaultSpanScheduleDelay = 5 * time.Second  // OTEL_BSP_SCHEDULE_DELAY
	DefaultSpanExportTimeout = 30 * time.Second // OTEL_BSP_EXPORT_TIMEOUT
	// DefaultProtocol is the OTLP transport used unless
	// OTEL_EXPORTER_OTLP_PROTOCOL says otherwise. ortel keeps gRPC, its
	// first transport, rather than the specification's http/protobuf, so
	// existing setups pointed at port 4317 keep working.
	DefaultProtocol = ProtocolGRPC
)

// File names ModeFile writes under OutputDir.
const (
	TracesFileName  = "traces.jsonl"
	MetricsFileName = "metrics.jsonl"
)

const (
	envPrefix       = "OTEL_EXPORTER_OTLP_"
	compressionGzip = "gzip"
	compressionNone = "none"
)

// Config says how to set up telemetry. Its zero value means: defaults,
// then the standard OTEL_* environment variables. A field that is set
// overrides the environment.
type Config struct {
	// ServiceName is the program's default service.name: the environment
	// wins over it (OTEL_SERVICE_NAME, else service.name in
	// OTEL_RESOURCE_ATTRIBUTES), and "ortel" is used when it is empty too.
	ServiceName string
	// ServiceVersion is the service.version resource attribute, if set.
	ServiceVersion string
	// OutputDir is where the embedded default (no endpoint configured)
	// writes traces.jsonl and metrics.jsonl. Default "ortel-out".
	OutputDir string
	// Endpoint is the OTLP collector for both signals, overriding
	// OTEL_EXPORTER_OTLP_ENDPOINT and its _TRACES_/_METRICS_ variants.
	// Over http/protobuf each signal's path (/v1/traces, /v1/metrics) is
	// appended to it.
	// "http://host:4317" is plaintext, "https://host:4317" is TLS, and
	// "host:4317" is TLS unless OTEL_EXPORTER_OTLP_INSECURE=true (the
	// OTLP specification's rule). "" means: from the environment.
	Endpoint string
	// MetricInterval is how often metrics are exported, overriding
	// OTEL_METRIC_EXPORT_INTERVAL (milliseconds). Default: that variable,
	// else DefaultMetricInterval.
	MetricInterval time.Duration
	// DefaultMetricInterval is the program's own default interval, used
	// when neither MetricInterval nor OTEL_METRIC_EXPORT_INTERVAL is set
	// (the agent's 1s). Default 10s, the specification's 60s being long
	// for a benchmark.
	DefaultMetricInterval time.Duration
	// Views are handed to the MeterProvider.
	Views []sdkmetric.View
	// Resource, when set, is the resource of every span and metric instead
	// of one describing this process: ortel import describes the profiled
	// process with it. ServiceName and the OTEL_RESOURCE_ATTRIBUTES and
	// OTEL_SERVICE_NAME variables are then the caller's to apply.
	Resource *resource.Resource
	// Readers are extra metric readers on the same MeterProvider as the
	// exporter (in every mode), e.g. the live view's in-process reader: what
	// they read is what is exported.
	Readers []sdkmetric.Reader
	// ExportTimeout bounds one OTLP export, retries included, overriding
	// OTEL_EXPORTER_OTLP_TIMEOUT and its _TRACES_/_METRICS_ variants.
	// Default: those variables, else 10s.
	ExportTimeout time.Duration
	// ShutdownTimeout bounds Telemetry.Shutdown. Default: the longest
	// export timeout of the signals sent over OTLP plus 500ms, so a dead
	// collector delays exit by little more than OTEL_EXPORTER_OTLP_TIMEOUT
	// (or ExportTimeout); 10s otherwise.
	ShutdownTimeout time.Duration
	// Rotation bounds the embedded default's files (ModeFile): by default
	// they grow without bound. The agent sets it from its flags.
	Rotation Rotation
	// SpoolDir, when set, is where exports that fail (collector down,
	// frozen, refusing) are written as OTLP/JSON lines (traces.jsonl,
	// metrics.jsonl) instead of being dropped, for `ortel replay`.
	// SpoolMaxBytes bounds the folder (default DefaultSpoolMaxBytes);
	// past it, failed exports are dropped and counted.
	SpoolDir      string
	SpoolMaxBytes int64
	// Disabled turns telemetry off, as OTEL_SDK_DISABLED=true does
	// (ModeDisabled): nothing is recorded, written or sent, and no spool
	// or file is opened (ortel's --no-telemetry).
	Disabled bool
	// Console is where console exporters (OTEL_TRACES_EXPORTER=console,
	// OTEL_METRICS_EXPORTER=console) write. Default: standard output.
	Console io.Writer
}

// Exporter is everything one signal's OTLP exporter is given. Setup passes
// each field explicitly, so nothing the exporter would read from the
// environment on its own differs from what Describe prints.
type Exporter struct {
	// Kind is KindOTLP, KindFile, KindConsole or KindNone. The fields
	// below are set for KindOTLP only.
	Kind string
	// Protocol is ProtocolGRPC, ProtocolHTTP or ProtocolHTTPJSON.
	Protocol string
	// Endpoint is "host:port"; "" when the signal is not sent over OTLP.
	Endpoint string
	// URLPath is the path posted to over OTLP/HTTP, such as
	// "/v1/traces"; "" over gRPC.
	URLPath string
	// Insecure is true for plaintext, false for TLS.
	Insecure bool
	// Headers are sent with every export. Their values are secrets: the
	// Headers type never prints them.
	Headers Headers
	// CertificateFile is a PEM file of CA certificates to trust instead of
	// the system's; ClientCertFile and ClientKeyFile a client key pair for
	// mutual TLS. Empty when unset or unusable (see Warnings).
	CertificateFile, ClientCertFile, ClientKeyFile string
	// Timeout bounds one export, retries included.
	Timeout time.Duration
	// Compression is "gzip" or "none".
	Compression string

	tls *tls.Config // built by Resolve from the files above; nil for plaintext
	// endpointVar and protocolVar name where the endpoint and the protocol
	// came from, for the hints of failed exports ("" for the default).
	endpointVar, protocolVar string
}

// Resolved is a Config with the environment applied and defaults filled
// in: exactly what Setup uses. Resolving never fails on a bad environment
// value: the value is ignored, a line is added to Warnings, and the default
// (or the generic variable, for a signal-specific one) is used.
type Resolved struct {
	// Mode sums up Traces.Kind and Metrics.Kind: ModeOTLP when either
	// goes to a collector, else ModeFile when either goes to a file, else
	// ModeConsole or ModeNone; ModeDisabled for OTEL_SDK_DISABLED=true.
	Mode string

	// TracesEndpoint and MetricsEndpoint are Traces.Endpoint and
	// Metrics.Endpoint: "host:port", "" outside ModeOTLP.
	TracesEndpoint, MetricsEndpoint string
	// Insecure, Headers, CertificateFile, ClientCertFile, ClientKeyFile,
	// Timeout and Compression are the generic settings (Config.Endpoint
	// and the OTEL_EXPORTER_OTLP_* variables without a signal in their
	// name). Traces and Metrics below hold what each exporter actually
	// uses: they differ from these only where an OTEL_EXPORTER_OTLP_TRACES_*
	// or _METRICS_* variable says so.
	Insecure                                       bool
	Headers                                        Headers
	CertificateFile, ClientCertFile, ClientKeyFile string
	Timeout                                        time.Duration
	Compression                                    string
	// Protocol is the generic OTLP transport (OTEL_EXPORTER_OTLP_PROTOCOL):
	// ProtocolGRPC, ProtocolHTTP or ProtocolHTTPJSON. Each signal's is in Traces.Protocol
	// and Metrics.Protocol.
	Protocol string
	// Sampler says which spans are recorded (OTEL_TRACES_SAMPLER and
	// OTEL_TRACES_SAMPLER_ARG), in the variable's words, such as
	// "parentbased_traceidratio 0.25".
	Sampler string
	sampler sdktrace.Sampler

	// Traces and Metrics are the settings of each signal's exporter.
	Traces, Metrics Exporter

	ServiceName    string
	ServiceVersion string
	// ResourceAttrs are the resource attributes from configuration:
	// OTEL_RESOURCE_ATTRIBUTES, service.name and service.version. Setup
	// adds the detected host, OS, process and SDK attributes.
	ResourceAttrs []attribute.KeyValue

	// OutputDir is where ModeFile writes.
	OutputDir string
	// Rotation bounds the files of ModeFile: see Config.
	Rotation Rotation
	// SpoolDir and SpoolMaxBytes: see Config.
	SpoolDir      string
	SpoolMaxBytes int64
	// MetricInterval and MetricTimeout drive the periodic metric reader.
	MetricInterval, MetricTimeout time.Duration
	// Span batching (OTEL_BSP_*): the queue never blocks span.End; a full
	// queue drops the span and counts it.
	SpanQueueSize, SpanBatchSize         int
	SpanScheduleDelay, SpanExportTimeout time.Duration
	// ShutdownTimeout bounds Telemetry.Shutdown.
	ShutdownTimeout time.Duration

	// Warnings are the environment values that were ignored, and why, in
	// plain words. They never contain header values.
	Warnings []string
}

// SpoolTracesFile and SpoolMetricsFile return the spool's files.
func (r Resolved) SpoolTracesFile() string  { return joinPath(r.SpoolDir, TracesFileName) }
func (r Resolved) SpoolMetricsFile() string { return joinPath(r.SpoolDir, MetricsFileName) }

// TracesFile and MetricsFile return the paths ModeFile writes.
func (r Resolved) TracesFile() string  { return joinPath(r.OutputDir, TracesFileName) }
func (r Resolved) MetricsFile() string { return joinPath(r.OutputDir, MetricsFileName) }

func joinPath(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + string(os.PathSeparator) + name
}

// Resolve applies the environment to cfg. It fails only on a bad cfg field
// (an Endpoint that does not parse, a negative duration), never on a bad
// environment value: see Resolved.Warnings.
func Resolve(cfg Config) (Resolved, error) {
	return resolve(cfg, os.Getenv)
}

func resolve(cfg Config, getenv func(string) string) (Resolved, error) {
	if err := checkConfig(cfg); err != nil {
		return Resolved{}, err
	}
	e := &env{getenv: getenv}
	r := Resolved{
		Protocol:        DefaultProtocol,
		OutputDir:       cfg.OutputDir,
		ShutdownTimeout: cfg.ShutdownTimeout,
	}
	if r.OutputDir == "" {
		r.OutputDir = DefaultOutputDir
	}
	r.SpoolDir, r.SpoolMaxBytes, r.Rotation = cfg.SpoolDir, cfg.SpoolMaxBytes, cfg.Rotation
	if r.SpoolMaxBytes == 0 {
		r.SpoolMaxBytes = DefaultSpoolMaxBytes
	}

	r.ServiceName, r.ServiceVersion, r.ResourceAttrs = e.resource(cfg)
	r.MetricInterval = cfg.MetricInterval
	if r.MetricInterval == 0 {
		r.MetricInterval = DefaultMetricInterval
		if cfg.DefaultMetricInterval > 0 {
			r.MetricInterval = cfg.DefaultMetricInterval
		}
		if d, ok := e.millis("OTEL_METRIC_EXPORT_INTERVAL"); ok {
			r.MetricInterval = d
		}
	}
	r.MetricTimeout = DefaultMetricTimeout
	if d, ok := e.millis("OTEL_METRIC_EXPORT_TIMEOUT"); ok {
		r.MetricTimeout = d
	}
	e.batch(&r)
	r.Sampler, r.sampler = e.sampler()
	if err := e.exporters(cfg, &r); err != nil {
		return Resolved{}, err
	}
	if r.ShutdownTimeout == 0 {
		r.ShutdownTimeout = DefaultShutdownTimeout
		if r.Mode == ModeOTLP {
			r.ShutdownTimeout = 0
			for _, x := range []Exporter{r.Traces, r.Metrics} {
				if x.Kind == KindOTLP {
					r.ShutdownTimeout = max(r.ShutdownTimeout, x.Timeout)
				}
			}
			// The last export may take its whole timeout: leave it time to
			// finish, and to spool, before giving up on it.
			r.ShutdownTimeout += shutdownMargin
		}
	}
	if disabled, ok := e.boolean("OTEL_SDK_DISABLED"); (ok && disabled) || cfg.Disabled {
		r.Mode = ModeDisabled
	}
	r.Warnings = e.warnings
	return r, nil
}

func checkConfig(cfg Config) error {
	var errs []error
	if cfg.MetricInterval < 0 {
		errs = append(errs, fmt.Errorf("telemetry: metric interval %v is negative", cfg.MetricInterval))
	}
	if cfg.DefaultMetricInterval < 0 {
		errs = append(errs, fmt.Errorf("telemetry: default metric interval %v is negative", cfg.DefaultMetricInterval))
	}
	if cfg.Rotation.MaxBytes < 0 || cfg.Rotation.Backups < 0 {
		errs = append(errs, fmt.Errorf("telemetry: file rotation %d bytes, %d backups: negative", cfg.Rotation.MaxBytes, cfg.Rotation.Backups))
	}
	if cfg.SpoolMaxBytes < 0 {
		errs = append(errs, fmt.Errorf("telemetry: spool bound %d is negative", cfg.SpoolMaxBytes))
	}
	if cfg.ExportTimeout < 0 {
		errs = append(errs, fmt.Errorf("telemetry: export timeout %v is negative", cfg.ExportTimeout))
	}
	if cfg.ShutdownTimeout < 0 {
		errs = append(errs, fmt.Errorf("telemetry: shutdown timeout %v is negative", cfg.ShutdownTimeout))
	}
	if cfg.Endpoint != "" {
		if _, err := parseEndpoint(cfg.Endpoint, ProtocolHTTP); err != nil {
			errs = append(errs, fmt.Errorf("telemetry: endpoint %s: %w", safeQuote(cfg.Endpoint), err))
		}
	}
	return errors.Join(errs...)
}

// batch resolves the OTEL_BSP_* variables.
func (e *env) batch(r *Resolved) {
	r.SpanQueueSize = DefaultSpanQueueSize
	if n, ok := e.integer("OTEL_BSP_MAX_QUEUE_SIZE", 1); ok {
		r.SpanQueueSize = n
	}
	r.SpanBatchSize = DefaultSpanBatchSize
	if n, ok := e.integer("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", 1); ok {
		r.SpanBatchSize = n
	}
	if r.SpanBatchSize > r.SpanQueueSize {
		e.warnf("OTEL_BSP_MAX_EXPORT_BATCH_SIZE=%d is larger than the span queue (%d): using %d",
			r.SpanBatchSize, r.SpanQueueSize, r.SpanQueueSize)
		r.SpanBatchSize = r.SpanQueueSize
	}
	r.SpanScheduleDelay = DefaultSpanScheduleDelay
	if d, ok := e.millis("OTEL_BSP_SCHEDULE_DELAY"); ok {
		r.SpanScheduleDelay = d
	}
	r.SpanExportTimeout = DefaultSpanExportTimeout
	if d, ok := e.millis("OTEL_BSP_EXPORT_TIMEOUT"); ok {
		r.SpanExportTimeout = d
	}
}
