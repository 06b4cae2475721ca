package otlptest

import (
	"bytes"
	"net/http"
	"testing"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"
)

func TestHTTPReceiver(t *testing.T) {
	r, err := Start(WithHTTP("127.0.0.1:0"))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	body, err := proto.Marshal(&coltracepb.ExportTraceServiceRequest{ResourceSpans: []*tracepb.ResourceSpans{{
		ScopeSpans: []*tracepb.ScopeSpans{{Spans: []*tracepb.Span{{Name: "over-http", TraceId: make([]byte, 16), SpanId: make([]byte, 8)}}}},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	post := func(path, contentType string) int {
		t.Helper()
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, "http://"+r.HTTPEndpoint()+path, bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", contentType)
		req.Header.Set("X-Tenant", "acme")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := post(HTTPTracesPath, "application/x-protobuf"); code != http.StatusOK {
		t.Fatalf("status %d, want 200", code)
	}
	if s := r.Spans(); len(s) != 1 || s[0].GetName() != "over-http" {
		t.Fatalf("spans = %v", s)
	}
	if h := r.Headers().Get("x-tenant"); len(h) != 1 || h[0] != "acme" {
		t.Errorf("x-tenant = %q", h)
	}
	if tr, _ := r.HTTPAccepted(); tr != 1 {
		t.Errorf("HTTPAccepted traces = %d, want 1", tr)
	}
	if code := post(HTTPTracesPath, "application/json"); code != http.StatusUnsupportedMediaType {
		t.Errorf("JSON body: status %d, want 415", code)
	}
	if code := post("/v1/other", "application/x-protobuf"); code != http.StatusNotFound {
		t.Errorf("unknown path: status %d, want 404", code)
	}
	r.SetFailure(codes.Unavailable)
	if code := post(HTTPTracesPath, "application/x-protobuf"); code != http.StatusServiceUnavailable {
		t.Errorf("injected Unavailable: status %d, want 503", code)
	}
	if len(r.Spans()) != 1 {
		t.Errorf("a failed request's data was kept")
	}
}
