package otlpjson

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"

	colmetricspb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"
)

const goodSpan = `{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"5b8efff798038103d269b633813fc60c","spanId":"eee19b7ec3c1b174","name":"a"}]}]}]}`

func TestReadTracesErrors(t *testing.T) {
	tests := []struct {
		name    string
		input   string
		wantErr string // substring; "" means no error
		wantN   int    // requests delivered before the error
	}{
		{"good", goodSpan + "\n", "", 1},
		{"no trailing newline", goodSpan, "", 1},
		{"blank lines and CRLF", "\n" + goodSpan + "\r\n\r\n  \n" + goodSpan + "\r\n", "", 2},
		{"byte order mark", "\xef\xbb\xbf" + goodSpan + "\n", "", 1},
		{"unknown fields ignored", `{"resourceSpans":[],"future":{"x":[1,2]}}` + "\n", "", 1},
		{"snake_case names", `{"resource_spans":[{"scope_spans":[{"spans":[{"trace_id":"5b8efff798038103d269b633813fc60c","span_id":"eee19b7ec3c1b174","parent_span_id":""}]}]}]}`, "", 1},
		{"enum names", `{"resourceSpans":[{"scopeSpans":[{"spans":[{"kind":"SPAN_KIND_CLIENT"}]}]}]}`, "", 1},
		{"not JSON on line 2, skipped", goodSpan + "\nnot json\n" + goodSpan, "line 2: invalid JSON", 2},
		{"truncated line 3", goodSpan + "\n\n" + goodSpan[:40] + "\n", "line 3: JSON ends early", 1},
		{"base64 trace id", `{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"W47/95gDgQPSabYzgT/GDA=="}]}]}]}`, "line 1: traceId \"W47/95gDgQPSabYzgT/GDA==\": want 32 hex digits", 0},
		{"short span id", `{"resourceSpans":[{"scopeSpans":[{"spans":[{"spanId":"abcd"}]}]}]}`, "spanId \"abcd\": want 16 hex digits", 0},
		{"non-hex parent", `{"resourceSpans":[{"scopeSpans":[{"spans":[{"parentSpanId":"zzzzzzzzzzzzzzzz"}]}]}]}`, "parentSpanId \"zzzzzzzzzzzzzzzz\" is not hex", 0},
		{"number id", `{"resourceSpans":[{"scopeSpans":[{"spans":[{"spanId":12}]}]}]}`, "spanId: want a string, found the number 12", 0},
		{"object id", `{"resourceSpans":[{"scopeSpans":[{"spans":[{"spanId":{}}]}]}]}`, "spanId: want a string, found a JSON object", 0},
		{"two values on a line", goodSpan + " " + goodSpan, "line 1: more than one JSON value", 0},
		{"wrong type", `{"resourceSpans":{"x":1}}`, "line 1: not a valid ExportTraceServiceRequest", 0},
		{"array at top", `[1,2]`, "line 1: not a valid ExportTraceServiceRequest", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := 0
			err := ReadTraces(strings.NewReader(tt.input), func(*coltracepb.ExportTraceServiceRequest) error {
				n++
				return nil
			})
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("error = %v, want it to contain %q", err, tt.wantErr)
			}
			if n != tt.wantN {
				t.Errorf("delivered %d requests, want %d", n, tt.wantN)
			}
		})
	}
}

// TestReadSkipsAndCountsDamaged: damaged records anywhere — a line a
// crash cut short, zeros a power loss left, a cut last line without its
// newline — are skipped and counted; every good record around them is
// read, and the error says how many were skipped and where the first was.
func TestReadSkipsAndCountsDamaged(t *testing.T) {
	good := goodSpan + "\n"
	tests := []struct {
		name       string
		input      string
		good       int
		damaged    int
		firstLine  int
		firstBytes int64
	}{
		{"clean", good + good, 2, 0, 0, 0},
		{"cut record in the middle", good + goodSpan[:60] + "\n" + good, 2, 1, 2, int64(len(good))},
		{"zeros from a power loss", good + "\x00\x00\x00\n" + good + "\x00\x00", 2, 2, 2, int64(len(good))},
		{"cut last line without its newline", good + good + goodSpan[:60], 2, 1, 3, int64(2 * len(good))},
		{"whole last record without its newline", good + goodSpan, 2, 0, 0, 0},
		{"only damage", "{\n\x00\n", 0, 2, 1, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := 0
			err := ReadTraces(strings.NewReader(tt.input), func(*coltracepb.ExportTraceServiceRequest) error { n++; return nil })
			if n != tt.good {
				t.Errorf("read %d good records, want %d", n, tt.good)
			}
			var de *DamagedError
			if tt.damaged == 0 {
				if err != nil {
					t.Errorf("error %v, want none", err)
				}
				return
			}
			if !errors.As(err, &de) || de.Count != tt.damaged || de.Line != tt.firstLine || de.Offset != tt.firstBytes {
				t.Fatalf("error %#v, want %d damaged, the first on line %d at byte %d", err, tt.damaged, tt.firstLine, tt.firstBytes)
			}
			if !strings.Contains(err.Error(), "skipped") {
				t.Errorf("error %q does not say the record was skipped", err)
			}
		})
	}
}

// TestScannerOffsets: each line's byte range and number, whether it has
// its newline, and a scanner resumed at an offset.
func TestScannerOffsets(t *testing.T) {
	input := "\xef\xbb\xbfa\r\n\n  \nbb\ncc"
	type line struct {
		text       string
		n          int
		start, end int64
		terminated bool
	}
	want := []line{{"a", 1, 0, 6, true}, {"bb", 4, 10, 13, true}, {"cc", 5, 13, 15, false}}
	var got []line
	sc := NewScanner(strings.NewReader(input))
	for sc.Scan() {
		got = append(got, line{string(sc.Line()), sc.LineNumber(), sc.Start(), sc.End(), sc.Terminated()})
	}
	if sc.Err() != nil || len(got) != len(want) {
		t.Fatalf("lines %+v, err %v; want %+v", got, sc.Err(), want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("line %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	resumed := NewScanner(strings.NewReader(input[10:]))
	resumed.SetPosition(10, 4)
	if !resumed.Scan() || string(resumed.Line()) != "bb" || resumed.LineNumber() != 4 || resumed.Start() != 10 || resumed.End() != 13 {
		t.Errorf("resumed at byte 10: line %q number %d bytes %d-%d", resumed.Line(), resumed.LineNumber(), resumed.Start(), resumed.End())
	}
}

func TestReadStopsAtCallbackError(t *testing.T) {
	stop := errors.New("enough")
	input := goodSpan + "\n" + goodSpan + "\n" + goodSpan + "\n"
	n := 0
	err := ReadTraces(strings.NewReader(input), func(*coltracepb.ExportTraceServiceRequest) error {
		n++
		if n == 2 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || !strings.HasPrefix(err.Error(), "line 2: ") {
		t.Fatalf("error = %v, want line 2 wrapping the callback error", err)
	}
	if n != 2 {
		t.Errorf("callback called %d times, want 2", n)
	}
}

func TestReadLongLine(t *testing.T) {
	// Longer than the reader's 64 KiB buffer.
	req := sampleTraces(strings.Repeat("s", 300<<10))
	var buf bytes.Buffer
	w := NewWriter(&buf)
	for range 2 {
		if err := w.WriteTraces(req); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	n := 0
	err := ReadTraces(&buf, func(got *coltracepb.ExportTraceServiceRequest) error {
		n++
		if !proto.Equal(got, req) {
			t.Error("long line changed in the round trip")
		}
		return nil
	})
	if err != nil || n != 2 {
		t.Fatalf("n=%d err=%v", n, err)
	}
}

type errReader struct{ data *strings.Reader }

func (e *errReader) Read(p []byte) (int, error) {
	if e.data.Len() == 0 {
		return 0, errors.New("connection reset")
	}
	return e.data.Read(p)
}

func TestReadIOError(t *testing.T) {
	r := &errReader{strings.NewReader(goodSpan + "\n" + goodSpan[:10])}
	err := ReadTraces(r, func(*coltracepb.ExportTraceServiceRequest) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "line 2: read: connection reset") {
		t.Fatalf("error = %v, want line 2 read error", err)
	}
}

func TestReadMetricsErrors(t *testing.T) {
	tests := []struct {
		name, input, wantErr string
	}{
		{"exemplar hex ids", `{"resourceMetrics":[{"scopeMetrics":[{"metrics":[{"name":"h","histogram":{"dataPoints":[{"exemplars":[{"traceId":"5b8efff798038103d269b633813fc60c","spanId":"eee19b7ec3c1b174","asDouble":1}]}]}}]}]}]}`, ""},
		{"exemplar base64 id", `{"resourceMetrics":[{"scopeMetrics":[{"metrics":[{"name":"h","histogram":{"dataPoints":[{"exemplars":[{"spanId":"7uGbfsPBsXQ="}]}]}}]}]}]}`, "line 1: spanId"},
		{"bad line 2", "{}\n{\"resourceMetrics\":5}\n", "line 2: not a valid ExportMetricsServiceRequest"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := ReadMetrics(strings.NewReader(tt.input), func(*colmetricspb.ExportMetricsServiceRequest) error { return nil })
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("error = %v, want %q", err, tt.wantErr)
			}
		})
	}
}

// fuzzSeeds returns real lines: the golden files and the spec examples.
func fuzzSeeds(f *testing.F, golden string, spec string) {
	for _, path := range []string{"testdata/" + golden} {
		data, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add(compactFile(f, "testdata/spec/"+spec))
	f.Add([]byte(goodSpan + "\n\n" + goodSpan))
	f.Add([]byte(`{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"zz"}]}]}]}`))
}

// FuzzReadTraces checks that no input panics the reader and that whatever
// it accepts survives a write and a second read unchanged.
func FuzzReadTraces(f *testing.F) {
	fuzzSeeds(f, "traces.golden.jsonl", "trace.json")
	f.Fuzz(func(t *testing.T, data []byte) {
		var got []*coltracepb.ExportTraceServiceRequest
		err := ReadTraces(bytes.NewReader(data), func(req *coltracepb.ExportTraceServiceRequest) error {
			got = append(got, req)
			return nil
		})
		var damaged *DamagedError
		if err != nil && !errors.As(err, &damaged) {
			return
		}
		for _, req := range got {
			line, err := Marshal(req)
			if err != nil {
				t.Fatalf("accepted request does not marshal: %v", err)
			}
			var again coltracepb.ExportTraceServiceRequest
			if err := Unmarshal(line, &again); err != nil {
				t.Fatalf("written line does not read back: %v\n%s", err, line)
			}
			if !proto.Equal(req, &again) {
				t.Fatalf("round trip changed the request:\n%v\n%v", req, &again)
			}
		}
	})
}

// FuzzReadMetrics is FuzzReadTraces for metrics.
func FuzzReadMetrics(f *testing.F) {
	fuzzSeeds(f, "metrics.golden.jsonl", "metrics.json")
	f.Fuzz(func(t *testing.T, data []byte) {
		var got []*colmetricspb.ExportMetricsServiceRequest
		err := ReadMetrics(bytes.NewReader(data), func(req *colmetricspb.ExportMetricsServiceRequest) error {
			got = append(got, req)
			return nil
		})
		var damaged *DamagedError
		if err != nil && !errors.As(err, &damaged) {
			return
		}
		for _, req := range got {
			line, err := Marshal(req)
			if err != nil {
				t.Fatalf("accepted request does not marshal: %v", err)
			}
			var again colmetricspb.ExportMetricsServiceRequest
			if err := Unmarshal(line, &again); err != nil {
				t.Fatalf("written line does not read back: %v\n%s", err, line)
			}
			if !proto.Equal(req, &again) {
				t.Fatalf("round trip changed the request:\n%v\n%v", req, &again)
			}
		}
	})
}
