package telemetry

import (
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/resource"
	colmetricspb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"

	"github.com/ortel-dev/ortel/internal/telemetry/otlpjson"
)

// TestMetricsOverHTTPJSON sends a metric export through the official
// metric exporter as Setup builds it for http/json: the body arrives as
// OTLP/JSON (gzip kept), the headers as set, and a JSON partial success
// in the answer reaches the exporter's error.
func TestMetricsOverHTTPJSON(t *testing.T) {
	for _, gz := range []bool{false, true} {
		t.Run("gzip="+map[bool]string{false: "none", true: "gzip"}[gz], func(t *testing.T) {
			var got struct {
				contentType, encoding, tenant, path string
				names                               []string
			}
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				got.contentType, got.encoding, got.tenant, got.path = r.Header.Get("Content-Type"), r.Header.Get("Content-Encoding"), r.Header.Get("X-Tenant"), r.URL.Path
				var body io.Reader = r.Body
				if got.encoding == "gzip" {
					zr, err := gzip.NewReader(r.Body)
					if err != nil {
						http.Error(w, err.Error(), http.StatusBadRequest)
						return
					}
					body = zr
				}
				raw, _ := io.ReadAll(body)
				var req colmetricspb.ExportMetricsServiceRequest
				if err := otlpjson.Unmarshal(raw, &req); err != nil {
					http.Error(w, err.Error(), http.StatusBadRequest)
					return
				}
				for _, rm := range req.GetResourceMetrics() {
					for _, sm := range rm.GetScopeMetrics() {
						for _, m := range sm.GetMetrics() {
							got.names = append(got.names, m.GetName())
						}
					}
				}
				w.Header().Set("Content-Type", "application/json")
				_, _ = io.WriteString(w, `{"partialSuccess":{"rejectedDataPoints":"1","errorMessage":"one point too old"}}`)
			}))
			defer srv.Close()
			env := map[string]string{
				"OTEL_EXPORTER_OTLP_ENDPOINT": srv.URL + "/base",
				"OTEL_EXPORTER_OTLP_PROTOCOL": "http/json",
				"OTEL_EXPORTER_OTLP_HEADERS":  "x-tenant=t1",
			}
			if gz {
				env["OTEL_EXPORTER_OTLP_COMPRESSION"] = "gzip"
			}
			r, err := resolve(Config{}, func(k string) string { return env[k] })
			if err != nil {
				t.Fatal(err)
			}
			ctx := testContext(t)
			exp, err := otlpmetrichttp.New(ctx, metricHTTPOptions(r.Metrics)...)
			if err != nil {
				t.Fatal(err)
			}
			defer exp.Shutdown(ctx)
			now := time.Now()
			err = exp.Export(ctx, &metricdata.ResourceMetrics{Resource: resource.Empty(), ScopeMetrics: []metricdata.ScopeMetrics{{
				Scope: instrumentation.Scope{Name: "t"},
				Metrics: []metricdata.Metrics{{Name: "runs", Data: metricdata.Sum[int64]{
					Temporality: metricdata.CumulativeTemporality, IsMonotonic: true,
					DataPoints: []metricdata.DataPoint[int64]{{StartTime: now, Time: now, Value: 3}},
				}}},
			}}})
			if err == nil || !strings.Contains(err.Error(), "one point too old") {
				t.Errorf("export error %v, want the partial success's message", err)
			}
			wantEnc := map[bool]string{false: "", true: "gzip"}[gz]
			if got.contentType != "application/json" || got.encoding != wantEnc || got.tenant != "t1" || got.path != "/base/v1/metrics" {
				t.Errorf("request: %+v", got)
			}
			if len(got.names) != 1 || got.names[0] != "runs" {
				t.Errorf("metrics in the JSON body: %v", got.names)
			}
		})
	}
}
