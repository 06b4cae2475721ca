package otlpjson_test

import (
	"bytes"
	"fmt"
	"strings"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/ortel-dev/ortel/internal/telemetry/otlpjson"
)

func ExampleWriter() {
	var out bytes.Buffer
	w := otlpjson.NewWriter(&out)
	err := w.WriteTraces(&coltracepb.ExportTraceServiceRequest{ResourceSpans: []*tracepb.ResourceSpans{{
		ScopeSpans: []*tracepb.ScopeSpans{{Spans: []*tracepb.Span{{
			TraceId:           []byte{0x5b, 0x8e, 0xff, 0xf7, 0x98, 0x03, 0x81, 0x03, 0xd2, 0x69, 0xb6, 0x33, 0x81, 0x3f, 0xc6, 0x0c},
			SpanId:            []byte{0xee, 0xe1, 0x9b, 0x7e, 0xc3, 0xc1, 0xb1, 0x74},
			Name:              "onnxruntime.run",
			Kind:              tracepb.Span_SPAN_KIND_INTERNAL,
			StartTimeUnixNano: 1544712660000000000,
		}}}},
	}}})
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := w.Close(); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(out.String())
	// Output:
	// {"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"5b8efff798038103d269b633813fc60c","spanId":"eee19b7ec3c1b174","name":"onnxruntime.run","kind":1,"startTimeUnixNano":"1544712660000000000"}]}]}]}
}

func ExampleReadTraces() {
	file := strings.NewReader(`{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"5B8EFFF798038103D269B633813FC60C","spanId":"EEE19B7EC3C1B174","name":"I'm a server span","kind":2}]}]}]}
{"resourceSpans":[{"scopeSpans":[{"spans":[{"spanId":"not hex"}]}]}]}
{"resourceSpans":[{"scopeSpans":[{"spans":[{"name":"after the damaged record","kind":1}]}]}]}
`)
	err := otlpjson.ReadTraces(file, func(req *coltracepb.ExportTraceServiceRequest) error {
		span := req.GetResourceSpans()[0].GetScopeSpans()[0].GetSpans()[0]
		fmt.Printf("%s %x %s\n", span.GetName(), span.GetSpanId(), span.GetKind())
		return nil
	})
	fmt.Println(err)
	// Output:
	// I'm a server span eee19b7ec3c1b174 SPAN_KIND_SERVER
	// after the damaged record  SPAN_KIND_INTERNAL
	// line 2: spanId "not hex": want 16 hex digits, found 7 characters (a damaged record at byte 160, skipped)
}
