package otlpjson

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	colmetricspb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

func TestMarshalGolden(t *testing.T) {
	tests := []struct {
		name, file string
		msg        proto.Message
	}{
		{"traces", "traces.golden.jsonl", sampleTraces("ortel")},
		{"metrics", "metrics.golden.jsonl", sampleMetrics("ortel")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Marshal(tt.msg)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, '\n')
			path := filepath.Join("testdata", tt.file)
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("Marshal differs from %s (run go test -update if the change is intended)\ngot:  %s\nwant: %s", path, got, want)
			}
		})
	}
}

// decodeGeneric parses one JSON line into maps and slices.
func decodeGeneric(t *testing.T, line []byte) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(line, &v); err != nil {
		t.Fatalf("line is not JSON: %v\n%s", err, line)
	}
	return v
}

// at walks a generic JSON value by object keys and array indexes.
func at(t *testing.T, v any, path ...any) any {
	t.Helper()
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				t.Fatalf("at %v: not an object: %v", p, v)
			}
			v = m[k]
		case int:
			a, ok := v.([]any)
			if !ok || k >= len(a) {
				t.Fatalf("at %v: not an array of > %d: %v", p, k, v)
			}
			v = a[k]
		}
	}
	return v
}

func TestMarshalTracesIsOTLPJSON(t *testing.T) {
	line, err := Marshal(sampleTraces("svc"))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.ContainsAny(line, "\n\r") {
		t.Fatalf("line contains a line break: %q", line)
	}
	if bytes.Contains(line, []byte(" :")) || bytes.Contains(line, []byte(", ")) {
		t.Errorf("line is not compact: %s", line)
	}
	v := decodeGeneric(t, line)
	span := at(t, v, "resourceSpans", 0, "scopeSpans", 0, "spans", 0)
	tests := []struct {
		name string
		got  any
		want any
	}{
		{"traceId is lowercase hex", at(t, span, "traceId"), hex.EncodeToString(traceID)},
		{"spanId is lowercase hex", at(t, span, "spanId"), hex.EncodeToString(spanID)},
		{"parentSpanId is lowercase hex", at(t, span, "parentSpanId"), hex.EncodeToString(parentID)},
		{"link traceId is hex", at(t, span, "links", 0, "traceId"), hex.EncodeToString(linkTID)},
		{"link spanId is hex", at(t, span, "links", 0, "spanId"), hex.EncodeToString(linkSID)},
		{"kind is an integer", at(t, span, "kind"), 1.0},
		{"status code is an integer", at(t, span, "status", "code"), 2.0},
		{"int64 time is a decimal string", at(t, span, "startTimeUnixNano"), "1544712660000000000"},
		{"int64 attribute is a decimal string", at(t, span, "attributes", 2, "value", "intValue"), "-9007199254740993"},
		{"attribute named traceId keeps its value", at(t, span, "attributes", 1, "value", "stringValue"), "7u6bfsPBsXQ="},
		{"kvlist key spanId keeps its value", at(t, span, "attributes", 7, "value", "kvlistValue", "values", 0, "value", "stringValue"), "not an id"},
		{"bytes attribute stays base64", at(t, span, "attributes", 5, "value", "bytesValue"), "AAEC/w=="},
		{"unset parent is absent", at(t, v, "resourceSpans", 0, "scopeSpans", 0, "spans", 1, "parentSpanId"), nil},
		{"lowerCamelCase names", at(t, v, "resourceSpans", 0, "schemaUrl"), "https://opentelemetry.io/schemas/1.26.0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.got != tt.want {
				t.Errorf("got %#v, want %#v", tt.got, tt.want)
			}
		})
	}
}

func TestMarshalMetricsExemplarIDsAreHex(t *testing.T) {
	line, err := Marshal(sampleMetrics("svc"))
	if err != nil {
		t.Fatal(err)
	}
	v := decodeGeneric(t, line)
	metrics := at(t, v, "resourceMetrics", 0, "scopeMetrics", 0, "metrics")
	tests := []struct {
		name string
		got  any
		want any
	}{
		{"histogram exemplar traceId", at(t, metrics, 2, "histogram", "dataPoints", 0, "exemplars", 0, "traceId"), hex.EncodeToString(traceID)},
		{"histogram exemplar spanId", at(t, metrics, 2, "histogram", "dataPoints", 0, "exemplars", 0, "spanId"), hex.EncodeToString(spanID)},
		{"exp histogram exemplar traceId", at(t, metrics, 3, "exponentialHistogram", "dataPoints", 0, "exemplars", 0, "traceId"), hex.EncodeToString(traceID)},
		{"temporality is an integer", at(t, metrics, 1, "sum", "aggregationTemporality"), 2.0},
		{"asInt is a decimal string", at(t, metrics, 1, "sum", "dataPoints", 0, "asInt"), "1152921504606846976"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.got != tt.want {
				t.Errorf("got %#v, want %#v", tt.got, tt.want)
			}
		})
	}
}

// compactFile reads a pretty-printed JSON file and returns it as one line.
func compactFile(t testing.TB, path string) []byte {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		t.Fatalf("compact %s: %v", path, err)
	}
	return buf.Bytes()
}

func TestUnmarshalSpecTraceExample(t *testing.T) {
	var req coltracepb.ExportTraceServiceRequest
	if err := Unmarshal(compactFile(t, "testdata/spec/trace.json"), &req); err != nil {
		t.Fatal(err)
	}
	if n := len(req.GetResourceSpans()); n != 1 {
		t.Fatalf("got %d resource spans, want 1", n)
	}
	rs := req.GetResourceSpans()[0]
	if got := rs.GetResource().GetAttributes()[0].GetValue().GetStringValue(); got != "my.service" {
		t.Errorf("service.name = %q", got)
	}
	sp := rs.GetScopeSpans()[0].GetSpans()[0]
	mustHex := func(s string) []byte {
		b, err := hex.DecodeString(s)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"traceId", hex.EncodeToString(sp.GetTraceId()), hex.EncodeToString(mustHex("5B8EFFF798038103D269B633813FC60C"))},
		{"spanId", hex.EncodeToString(sp.GetSpanId()), "eee19b7ec3c1b174"},
		{"parentSpanId", hex.EncodeToString(sp.GetParentSpanId()), "eee19b7ec3c1b173"},
		{"kind", sp.GetKind(), tracepb.Span_SPAN_KIND_SERVER},
		{"start", sp.GetStartTimeUnixNano(), uint64(1544712660000000000)},
		{"end", sp.GetEndTimeUnixNano(), uint64(1544712661000000000)},
		{"name", sp.GetName(), "I'm a server span"},
		{"scope", rs.GetScopeSpans()[0].GetScope().GetVersion(), "1.0.0"},
	}
	for _, c := range checks {
		t.Run(c.name, func(t *testing.T) {
			if c.got != c.want {
				t.Errorf("got %v, want %v", c.got, c.want)
			}
		})
	}
}

func TestUnmarshalSpecMetricsExample(t *testing.T) {
	var req colmetricspb.ExportMetricsServiceRequest
	if err := Unmarshal(compactFile(t, "testdata/spec/metrics.json"), &req); err != nil {
		t.Fatal(err)
	}
	ms := req.GetResourceMetrics()[0].GetScopeMetrics()[0].GetMetrics()
	if len(ms) != 3 {
		t.Fatalf("got %d metrics, want 3", len(ms))
	}
	if got := ms[0].GetSum().GetDataPoints()[0].GetAsDouble(); got != 5 {
		t.Errorf("counter = %v, want 5", got)
	}
	if !ms[0].GetSum().GetIsMonotonic() {
		t.Error("counter is not monotonic")
	}
	if got := ms[1].GetGauge().GetDataPoints()[0].GetAsDouble(); got != 10 {
		t.Errorf("gauge = %v, want 10", got)
	}
	h := ms[2].GetHistogram().GetDataPoints()[0]
	if h.GetCount() != 3 || h.GetSum() != 3 || len(h.GetBucketCounts()) != 3 || h.GetExplicitBounds()[0] != 1 {
		t.Errorf("histogram = %v", h)
	}
}

// TestSpecExamplesRoundTrip reads the spec examples, writes them and reads
// them back: what ortel writes, it (and a collector) reads to the same data.
func TestSpecExamplesRoundTrip(t *testing.T) {
	tests := []struct {
		file string
		msg  func() proto.Message
	}{
		{"testdata/spec/trace.json", func() proto.Message { return new(coltracepb.ExportTraceServiceRequest) }},
		{"testdata/spec/metrics.json", func() proto.Message { return new(colmetricspb.ExportMetricsServiceRequest) }},
	}
	for _, tt := range tests {
		t.Run(filepath.Base(tt.file), func(t *testing.T) {
			first := tt.msg()
			if err := Unmarshal(compactFile(t, tt.file), first); err != nil {
				t.Fatal(err)
			}
			line, err := Marshal(first)
			if err != nil {
				t.Fatal(err)
			}
			second := tt.msg()
			if err := Unmarshal(line, second); err != nil {
				t.Fatalf("read back %s: %v", line, err)
			}
			if !proto.Equal(first, second) {
				t.Errorf("round trip changed the data:\nfirst:  %v\nsecond: %v", first, second)
			}
		})
	}
}

// TestUnmarshalWhitespaceVariants feeds protojson's own multi-line output,
// with its arbitrary whitespace, after converting its base64 ids to hex by
// hand: the reader must not depend on compact input.
func TestUnmarshalWhitespaceVariants(t *testing.T) {
	in := sampleTraces("ws")
	for _, opts := range []protojson.MarshalOptions{
		{Multiline: true, Indent: "\t"},
		{Multiline: true, Indent: "    ", UseProtoNames: true},
		{UseEnumNumbers: false},
	} {
		raw, err := opts.Marshal(in)
		if err != nil {
			t.Fatal(err)
		}
		var generic any
		if err := json.Unmarshal(raw, &generic); err != nil {
			t.Fatal(err)
		}
		idsToHex(t, generic)
		pretty, err := json.MarshalIndent(generic, "", "   ")
		if err != nil {
			t.Fatal(err)
		}
		var got coltracepb.ExportTraceServiceRequest
		if err := Unmarshal(pretty, &got); err != nil {
			t.Fatalf("Unmarshal(%s): %v", pretty, err)
		}
		if !proto.Equal(in, &got) {
			t.Errorf("options %+v: got %v, want %v", opts, &got, in)
		}
	}
}

// idsToHex converts, in a decoded JSON tree, every id field from base64 to
// hex: an oracle written independently of the token transcoder.
func idsToHex(t *testing.T, v any) {
	t.Helper()
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			switch k {
			case "traceId", "trace_id", "spanId", "span_id", "parentSpanId", "parent_span_id":
				var b []byte
				if err := json.Unmarshal([]byte(`"`+e.(string)+`"`), &b); err != nil {
					t.Fatal(err)
				}
				x[k] = hex.EncodeToString(b)
			default:
				idsToHex(t, e)
			}
		}
	case []any:
		for _, e := range x {
			idsToHex(t, e)
		}
	}
}
