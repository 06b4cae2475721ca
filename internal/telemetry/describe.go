package telemetry

import (
	"fmt"
	"strings"
)

// Describe returns human-readable lines saying what telemetry does with
// this configuration, for verbose output: the mode, Destinations, then
// Settings' other lines (security, header names but never values,
// resource, batching) and every warning.
func (r Resolved) Describe() []string {
	settings := r.Settings()
	return append(append(settings[:1:1], r.Destinations()...), settings[1:]...)
}

// Destinations returns where each signal goes, one line each ("traces:
// ...", "metrics: ..., every 10s"), then the spool and the rotation of
// files when they apply: what differs between ortel's commands, which
// give Setup different folders and intervals (`ortel doctor` prints them
// per command).
func (r Resolved) Destinations() []string {
	if r.Mode == ModeDisabled {
		return nil
	}
	lines := []string{
		"traces: " + r.Traces.describe("traces", r.TracesFile()),
		fmt.Sprintf("metrics: %s, every %s", r.Metrics.describe("metrics", r.MetricsFile()), durationText(r.MetricInterval)),
	}
	if r.SpoolDir != "" && r.Mode == ModeOTLP {
		lines = append(lines, fmt.Sprintf("spool: exports that fail go to %s (at most %s), for ortel replay", r.SpoolDir, bytesText(r.SpoolMaxBytes)))
	}
	if r.Mode == ModeFile && r.Rotation.MaxBytes > 0 {
		lines = append(lines, fmt.Sprintf("files: rotated at %s, keeping the %d newest of each (name-TIME.jsonl)", bytesText(r.Rotation.MaxBytes), max(1, r.Rotation.Backups)))
	}
	return lines
}

// Settings returns the lines of Describe that are not Destinations: the
// mode first, then the sampler, service, resource, batching, shutdown
// bound and every warning.
func (r Resolved) Settings() []string {
	var lines []string
	add := func(format string, args ...any) { lines = append(lines, fmt.Sprintf(format, args...)) }
	switch r.Mode {
	case ModeDisabled:
		add("mode: disabled (OTEL_SDK_DISABLED=true): no traces or metrics are recorded")
	case ModeFile:
		add("mode: file, the embedded default (no OTLP endpoint configured; set OTEL_EXPORTER_OTLP_ENDPOINT to send to a collector)")
	case ModeOTLP:
		add("mode: otlp (sent to a collector)")
	default:
		add("mode: %s (no collector, no files)", r.Mode)
	}
	if r.Mode != ModeDisabled {
		add("sampler: %s", r.Sampler)
	}
	service := r.ServiceName
	if r.ServiceVersion != "" {
		service += " " + r.ServiceVersion
	}
	add("service: %s", service)
	var attrs []string
	for _, kv := range r.ResourceAttrs {
		if kv.Key == "service.name" || kv.Key == "service.version" {
			continue
		}
		attrs = append(attrs, string(kv.Key)+"="+kv.Value.String())
	}
	if len(attrs) > 0 {
		add("resource: %s (plus detected host, os, process and telemetry.sdk attributes)", strings.Join(attrs, ", "))
	} else {
		add("resource: detected host, os, process and telemetry.sdk attributes")
	}
	if r.Mode != ModeDisabled {
		add("spans: queue of %d (a full queue drops and counts, never blocks), batches of %d every %s, export timeout %s",
			r.SpanQueueSize, r.SpanBatchSize, durationText(r.SpanScheduleDelay), durationText(r.SpanExportTimeout))
		add("shutdown: bounded by %s (a dead collector delays exit by no more than this)", durationText(r.ShutdownTimeout))
	}
	for _, w := range r.Warnings {
		add("warning: %s", w)
	}
	return lines
}

// describe is one exporter's line: what it does with the signal, and for
// OTLP where, how secured, headers by name.
func (x Exporter) describe(signal, file string) string {
	upper := strings.ToUpper(signal)
	switch x.Kind {
	case KindNone:
		return fmt.Sprintf("not exported (OTEL_%s_EXPORTER=none)", upper)
	case KindConsole:
		return fmt.Sprintf("printed on standard output as OTLP/JSON lines (OTEL_%s_EXPORTER=console)", upper)
	case KindFile:
		return fmt.Sprintf("appended to %s as OTLP/JSON lines", file)
	}
	var b strings.Builder
	if isHTTP(x.Protocol) {
		fmt.Fprintf(&b, "otlp %s, POST %s", x.Protocol, x.url())
	} else {
		fmt.Fprintf(&b, "otlp grpc to %s", x.Endpoint)
	}
	if x.Insecure {
		b.WriteString(" (plaintext)")
	} else {
		b.WriteString(" (TLS")
		if x.CertificateFile != "" {
			fmt.Fprintf(&b, ", CA %s", x.CertificateFile)
		}
		if x.ClientCertFile != "" {
			fmt.Fprintf(&b, ", client certificate %s", x.ClientCertFile)
		}
		b.WriteString(")")
	}
	fmt.Fprintf(&b, ", headers: %s", x.Headers.Redacted())
	if len(x.Headers) > 0 {
		b.WriteString(" (values hidden)")
	}
	fmt.Fprintf(&b, ", timeout %s, compression %s", durationText(x.Timeout), x.Compression)
	return b.String()
}

// Where says briefly where the signal goes: "grpc host:port",
// "http://host:port/v1/traces", "standard output", "the file" or
// "nowhere (none)".
func (x Exporter) Where() string {
	switch x.Kind {
	case KindNone:
		return "nowhere (exporter none)"
	case KindConsole:
		return "standard output"
	case KindFile:
		return "a file"
	}
	if isHTTP(x.Protocol) {
		return x.url()
	}
	return "grpc " + x.Endpoint
}

// url is where an OTLP/HTTP exporter posts: scheme://host:port/path.
func (x Exporter) url() string {
	scheme := "https"
	if x.Insecure {
		scheme = "http"
	}
	return scheme + "://" + x.Endpoint + x.URLPath
}
