package telemetry

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net/http"

	colmetricspb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	"google.golang.org/protobuf/proto"

	"github.com/ortel-dev/ortel/internal/telemetry/otlpjson"
)

// OTLP/HTTP content types.
const (
	contentTypeProtobuf = "application/x-protobuf"
	contentTypeJSON     = "application/json"
)

// metricHTTPClient is the HTTP client of x's metric exports when ortel
// builds one itself: http/json (the official metric exporter has none) and
// replay. It dials as the official exporters do (proxy from the
// environment, x's TLS) and, for http/json, re-encodes each protobuf
// request as OTLP/JSON on its way out.
func metricHTTPClient(x Exporter) *http.Client {
	base := http.DefaultTransport.(*http.Transport).Clone()
	if !x.Insecure {
		base.TLSClientConfig = x.tlsConfig()
	}
	var rt http.RoundTripper = base
	if x.Protocol == ProtocolHTTPJSON {
		rt = jsonTransport{next: base}
	}
	return &http.Client{Transport: rt, Timeout: x.Timeout}
}

// jsonTransport turns protobuf ExportMetricsServiceRequests into OTLP/JSON
// (gzip kept when the request had it) and a JSON response back into
// protobuf, so the official metric exporter speaks http/json unchanged.
type jsonTransport struct{ next http.RoundTripper }

func (t jsonTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Header.Get("Content-Type") != contentTypeProtobuf || req.Body == nil {
		return t.next.RoundTrip(req)
	}
	gz := req.Header.Get("Content-Encoding") == compressionGzip
	body, err := readBody(req.Body, gz)
	if err != nil {
		return nil, fmt.Errorf("http/json: read the metrics request: %w", err)
	}
	var m colmetricspb.ExportMetricsServiceRequest
	if err := proto.Unmarshal(body, &m); err != nil {
		return nil, fmt.Errorf("http/json: decode the metrics request: %w", err)
	}
	js, err := otlpjson.Marshal(&m)
	if err != nil {
		return nil, fmt.Errorf("http/json: encode the metrics request: %w", err)
	}
	if gz {
		var b bytes.Buffer
		zw := gzip.NewWriter(&b)
		_, _ = zw.Write(js) // a bytes.Buffer does not fail
		_ = zw.Close()
		js = b.Bytes()
	}
	out := req.Clone(req.Context())
	out.Header.Set("Content-Type", contentTypeJSON)
	out.Body = io.NopCloser(bytes.NewReader(js))
	out.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(js)), nil }
	out.ContentLength = int64(len(js))
	resp, err := t.next.RoundTrip(out)
	if err != nil || resp.StatusCode/100 != 2 || resp.Header.Get("Content-Type") != contentTypeJSON {
		return resp, err
	}
	// A JSON answer may carry a partial success: hand it to the exporter
	// in the encoding it reads.
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	_ = resp.Body.Close()
	if err != nil {
		return nil, fmt.Errorf("http/json: read the answer: %w", err)
	}
	var answer colmetricspb.ExportMetricsServiceResponse
	if len(bytes.TrimSpace(raw)) > 0 {
		if err := otlpjson.Unmarshal(raw, &answer); err != nil {
			return nil, fmt.Errorf("http/json: decode the answer: %w", err)
		}
	}
	pb, _ := proto.Marshal(&answer)
	resp.Header.Set("Content-Type", contentTypeProtobuf)
	resp.Header.Del("Content-Length")
	resp.Body = io.NopCloser(bytes.NewReader(pb))
	resp.ContentLength = int64(len(pb))
	return resp, nil
}

func readBody(r io.ReadCloser, gz bool) ([]byte, error) {
	defer r.Close()
	if !gz {
		return io.ReadAll(r)
	}
	zr, err := gzip.NewReader(r)
	if err != nil {
		return nil, err
	}
	return io.ReadAll(zr)
}
