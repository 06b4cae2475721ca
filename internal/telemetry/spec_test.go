package telemetry

import (
	"bytes"
	"net"
	"strings"
	"testing"

	colmetricspb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"

	"github.com/ortel-dev/ortel/internal/telemetry/otlpjson"
	"github.com/ortel-dev/ortel/test/otlptest"
)

// startBoth starts a receiver serving OTLP over gRPC and over HTTP.
func startBoth(t *testing.T) *otlptest.Receiver {
	t.Helper()
	r, err := otlptest.Start(otlptest.WithHTTP("127.0.0.1:0"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	return r
}

// TestSetupSendsWhatTheEnvironmentSays sets each variable of the OTLP
// exporter section of the specification (and OTEL_TRACES_EXPORTER,
// OTEL_METRICS_EXPORTER, OTEL_TRACES_SAMPLER, OTEL_SERVICE_NAME,
// OTEL_RESOURCE_ATTRIBUTES) and checks what arrives where, over gRPC and
// over http/protobuf, at a real receiver.
func TestSetupSendsWhatTheEnvironmentSays(t *testing.T) {
	type sent struct {
		grpcTraces, grpcMetrics bool // arrived over gRPC (else over HTTP)
		traces, metrics         bool // arrived at all
		consoleMetrics          bool // printed on the console writer
		service                 string
		header                  string // value of the x-tenant header on arrival
	}
	tests := []struct {
		name string
		env  func(grpc, http string) map[string]string
		cfg  Config
		want sent
	}{
		{name: "grpc by default",
			env: func(g, _ string) map[string]string {
				return map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://" + g, "OTEL_EXPORTER_OTLP_HEADERS": "x-tenant=acme"}
			},
			want: sent{grpcTraces: true, grpcMetrics: true, traces: true, metrics: true, service: "ortel", header: "acme"}},
		{name: "http/protobuf, gzip, service name from the environment",
			env: func(_, h string) map[string]string {
				return map[string]string{
					"OTEL_EXPORTER_OTLP_PROTOCOL":    "http/protobuf",
					"OTEL_EXPORTER_OTLP_ENDPOINT":    "http://" + h,
					"OTEL_EXPORTER_OTLP_COMPRESSION": "gzip",
					"OTEL_EXPORTER_OTLP_HEADERS":     "x-tenant=blue%20team",
					"OTEL_SERVICE_NAME":              "from-env",
				}
			},
			cfg:  Config{ServiceName: "ortel"},
			want: sent{traces: true, metrics: true, service: "from-env", header: "blue team"}},
		{name: "per signal: traces over http to their own URL, metrics over grpc",
			env: func(g, h string) map[string]string {
				return map[string]string{
					"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL":  "http/protobuf",
					"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT":  "http://" + h + otlptest.HTTPTracesPath,
					"OTEL_EXPORTER_OTLP_TRACES_HEADERS":   "x-tenant=traces",
					"OTEL_EXPORTER_OTLP_METRICS_PROTOCOL": "grpc",
					"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": "http://" + g,
					"OTEL_EXPORTER_OTLP_METRICS_HEADERS":  "x-tenant=metrics",
					"OTEL_RESOURCE_ATTRIBUTES":            "service.name=from-attrs",
				}
			},
			cfg:  Config{ServiceName: "ortel"},
			want: sent{grpcMetrics: true, traces: true, metrics: true, service: "from-attrs"}},
		{name: "traces none",
			env: func(g, _ string) map[string]string {
				return map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://" + g, "OTEL_TRACES_EXPORTER": "none"}
			},
			want: sent{grpcMetrics: true, metrics: true}},
		{name: "metrics console",
			env: func(_, h string) map[string]string {
				return map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://" + h, "OTEL_METRICS_EXPORTER": "console"}
			},
			want: sent{traces: true, consoleMetrics: true, service: "ortel"}},
		{name: "sampler always_off",
			env: func(g, _ string) map[string]string {
				return map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://" + g, "OTEL_TRACES_SAMPLER": "always_off"}
			},
			want: sent{grpcMetrics: true, metrics: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cleanEnv(t)
			rcv := startBoth(t)
			for k, v := range tt.env(rcv.Endpoint(), rcv.HTTPEndpoint()) {
				t.Setenv(k, v)
			}
			var console bytes.Buffer
			cfg := tt.cfg
			cfg.OutputDir = t.TempDir()
			cfg.Console = &console
			ctx := testContext(t)
			tel, err := Setup(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			if w := tel.Resolved.Warnings; len(w) > 0 {
				t.Errorf("warnings: %q", w)
			}
			emit(t, tel)
			if err := tel.Shutdown(ctx); err != nil {
				t.Fatalf("shutdown: %v", err)
			}
			spans := rcv.Spans()
			if got := len(spans) > 0; got != tt.want.traces {
				t.Errorf("traces arrived = %v (%d spans), want %v", got, len(spans), tt.want.traces)
			}
			if got := len(rcv.ResourceMetrics()) > 0; got != tt.want.metrics {
				t.Errorf("metrics arrived = %v, want %v", got, tt.want.metrics)
			}
			if tt.want.traces {
				if got := spans[0].ServiceName(); got != tt.want.service {
					t.Errorf("service.name = %q, want %q", got, tt.want.service)
				}
			}
			if tt.want.header != "" {
				if got := rcv.Headers().Get("x-tenant"); len(got) == 0 || got[0] != tt.want.header {
					t.Errorf("x-tenant header = %q, want %q", got, tt.want.header)
				}
			}
			if got := strings.Contains(console.String(), "test.runs"); got != tt.want.consoleMetrics {
				t.Errorf("console holds metrics = %v, want %v:\n%s", got, tt.want.consoleMetrics, console.String())
			}
			if tt.want.consoleMetrics {
				n := 0
				err := otlpjson.ReadMetrics(&console, func(*colmetricspb.ExportMetricsServiceRequest) error { n++; return nil })
				if err != nil || n == 0 {
					t.Errorf("console output is not OTLP/JSON metrics lines (%d read): %v", n, err)
				}
			}
			// Which transport carried what.
			httpTraces, httpMetrics := rcv.HTTPAccepted()
			if tt.want.traces && (httpTraces == 0) != tt.want.grpcTraces {
				t.Errorf("trace requests over HTTP: %d of %d, want grpc=%v", httpTraces, len(rcv.TraceRequests()), tt.want.grpcTraces)
			}
			if tt.want.metrics && (httpMetrics == 0) != tt.want.grpcMetrics {
				t.Errorf("metric requests over HTTP: %d of %d, want grpc=%v", httpMetrics, len(rcv.ResourceMetrics()), tt.want.grpcMetrics)
			}
			if tel.Files() != nil {
				t.Errorf("files written: %v", tel.Files())
			}
		})
	}
}

// TestDropNotesQuoteEachSignalsOwnError sends traces and metrics to two
// different dead collectors: each signal's note must quote its own error
// (its own address), never the other signal's.
func TestDropNotesQuoteEachSignalsOwnError(t *testing.T) {
	cleanEnv(t)
	dead := func() string {
		lis, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := lis.Addr().String()
		lis.Close()
		return addr
	}
	tracesAt, metricsAt := dead(), dead()
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://"+tracesAt)
	t.Setenv("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "http://"+metricsAt+"/v1/metrics")
	t.Setenv("OTEL_EXPORTER_OTLP_METRICS_PROTOCOL", "http/protobuf")
	t.Setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "500")
	ctx := testContext(t)
	tel, err := Setup(ctx, Config{OutputDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	emit(t, tel)
	// Spans fail first, metrics last (at shutdown): the latest error of
	// all is the metrics', which the span note must not quote.
	_ = tel.TracerProvider.ForceFlush(ctx)
	shutdownErr := tel.Shutdown(ctx)
	lost := tel.Stats().Lost()
	if len(lost) != 2 {
		t.Fatalf("lost = %q, want a line per signal", lost)
	}
	cases := []struct{ text, own, other string }{
		{lost[0], tracesAt, metricsAt},
		{lost[1], metricsAt, tracesAt},
	}
	for _, line := range strings.Split(shutdownErr.Error(), "\n") {
		switch {
		case strings.Contains(line, "spans were dropped"):
			cases = append(cases, struct{ text, own, other string }{line, tracesAt, metricsAt})
		case strings.Contains(line, "metric exports failed"):
			cases = append(cases, struct{ text, own, other string }{line, metricsAt, tracesAt})
		}
	}
	if len(cases) != 4 {
		t.Fatalf("Shutdown error lacks the span or metric drop note: %v", shutdownErr)
	}
	for _, c := range cases {
		if !strings.Contains(c.text, c.own) || strings.Contains(c.text, c.other) {
			t.Errorf("%q should quote %s and not %s", c.text, c.own, c.other)
		}
	}
}
