package telemetry

import (
	"strings"
	"testing"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/ortel-dev/ortel/test/otlptest"
)

// TestExportErrorsExplain sends a trace export over the wrong protocol to
// a real receiver's other port, and to a closed port, and checks the error
// names where it went and, for a mismatch, the variable to set.
func TestExportErrorsExplain(t *testing.T) {
	rcv, err := otlptest.Start(otlptest.WithHTTP("127.0.0.1:0"))
	if err != nil {
		t.Fatal(err)
	}
	defer rcv.Close()
	const secret = "s3cr3t-token"
	tests := []struct {
		name string
		env  map[string]string
		want []string
	}{
		{name: "grpc to the OTLP/HTTP port",
			env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://" + rcv.HTTPEndpoint()},
			want: []string{"export to grpc " + rcv.HTTPEndpoint() + " (from OTEL_EXPORTER_OTLP_ENDPOINT)",
				"looks like an OTLP/HTTP receiver", "set OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf"}},
		{name: "grpc to the OTLP/HTTP port, signal protocol variable",
			env:  map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://" + rcv.HTTPEndpoint(), "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "grpc"},
			want: []string{"(from OTEL_EXPORTER_OTLP_TRACES_ENDPOINT)", "set OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=http/protobuf"}},
		{name: "http/protobuf to the gRPC port",
			env:  map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://" + rcv.Endpoint(), "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf"},
			want: []string{"export to http://" + rcv.Endpoint() + "/v1/traces", "looks like an OTLP/gRPC receiver", "set OTEL_EXPORTER_OTLP_PROTOCOL=grpc"}},
		{name: "http/json to the gRPC port",
			env:  map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://" + rcv.Endpoint(), "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"},
			want: []string{"looks like an OTLP/gRPC receiver", "set OTEL_EXPORTER_OTLP_PROTOCOL=grpc"}},
		{name: "TLS to a plaintext port",
			env:  map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "https://" + rcv.HTTPEndpoint(), "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf"},
			want: []string{"export to https://" + rcv.HTTPEndpoint() + "/v1/traces", "answers in plaintext", "write http://"}},
		{name: "nothing listening, the resolved URL without secrets",
			env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://user:" + secret + "@127.0.0.1:1/base", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
				"OTEL_EXPORTER_OTLP_HEADERS": "authorization=" + secret},
			want: []string{"export to http://127.0.0.1:1/base/v1/traces (from OTEL_EXPORTER_OTLP_ENDPOINT)", "connection refused"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := map[string]string{"OTEL_EXPORTER_OTLP_TIMEOUT": "1500"}
			for k, v := range tt.env {
				env[k] = v
			}
			r, err := resolve(Config{}, func(k string) string { return env[k] })
			if err != nil {
				t.Fatal(err)
			}
			ctx := testContext(t)
			c := traceClient(r.Traces)
			if err := c.Start(ctx); err != nil {
				t.Fatal(err)
			}
			defer c.Stop(ctx)
			err = c.UploadTraces(ctx, []*tracepb.ResourceSpans{{ScopeSpans: []*tracepb.ScopeSpans{{Spans: []*tracepb.Span{{
				TraceId: make([]byte, 16), SpanId: []byte{1, 2, 3, 4, 5, 6, 7, 8}, Name: "s"}}}}}})
			if err == nil {
				t.Fatal("the export succeeded")
			}
			t.Log(err)
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
			if strings.Contains(err.Error(), secret) {
				t.Errorf("error shows the secret: %v", err)
			}
		})
	}
}
