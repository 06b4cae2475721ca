package profimport

import (
	"bytes"
	"encoding/json"
	"testing"

	"go.opentelemetry.io/otel/attribute"
)

// FuzzAppendString: the hand-written JSON string encoder of the file sink
// decodes to what encoding/json's encoding decodes to, for any bytes
// (control characters, quotes, backslashes, invalid UTF-8), so a node name
// never breaks a line of the traces file.
func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "plain ascii name", `If_0_then_branch__Inline_0__/decoder/"q"\x`, "tab\there\n", "\xff\xfe bad", "ünïcödé 名前", "\x00\x1f\x7f", "12345678\"2345678"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := appendString(nil, s)
		var a, b string
		if err := json.Unmarshal(got, &a); err != nil {
			t.Fatalf("%q encodes to invalid JSON %s: %v", s, got, err)
		}
		want, _ := json.Marshal(s)
		if err := json.Unmarshal(want, &b); err != nil {
			t.Fatal(err)
		}
		if a != b {
			t.Fatalf("%q decodes to %q, encoding/json's to %q", s, a, b)
		}
		// Inside a whole span line too.
		var buf bytes.Buffer
		sink := NewFileSink(&buf, "fuzz", nil, testScope)
		if err := sink.Write(t.Context(), []Span{{Name: s, Attrs: []attribute.KeyValue{attribute.StringSlice(s, []string{s})}}}); err != nil {
			t.Fatal(err)
		}
		if !json.Valid(buf.Bytes()) {
			t.Fatalf("line for %q is not valid JSON: %s", s, buf.Bytes())
		}
	})
}
