package otlpjson

import (
	"bytes"
	"encoding/json"
	"testing"
)

func TestWriteStringIsValidJSON(t *testing.T) {
	tests := []string{
		"", "plain", `quote " and \ backslash`, "<&>", "tab\tnew\nline\r", "\x00\x01\x1f\x7f",
		"ünïcödé ✓ 😀", "\u2028\u2029", "bad \xff utf8",
	}
	for _, s := range tests {
		t.Run(s, func(t *testing.T) {
			var buf bytes.Buffer
			writeString(&buf, s)
			var got string
			if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
				t.Fatalf("%s is not a JSON string: %v", buf.Bytes(), err)
			}
			want := string(bytes.ToValidUTF8([]byte(s), []byte("\uFFFD")))
			if got != want {
				t.Errorf("decoded %q, want %q", got, want)
			}
		})
	}
}

func TestTranscodeKeepsStructure(t *testing.T) {
	tests := []struct {
		name, in, want string
		enc            idEncoding
	}{
		{"whitespace removed", " { \"a\" : [ 1 , 2.50 , -3e2 ] ,\n\t\"b\" : { } , \"c\":[],\"d\":null } ", `{"a":[1,2.50,-3e2],"b":{},"c":[],"d":null}`, toHex},
		{"numbers kept verbatim", `{"x":12345678901234567890,"y":1.0e-7}`, `{"x":12345678901234567890,"y":1.0e-7}`, toHex},
		{"to hex", `{"spanId":"7uGbfsPBsXQ=","name":"spanId"}`, `{"spanId":"eee19b7ec3c1b174","name":"spanId"}`, toHex},
		{"to base64", `{"spans":[{"spanId":"EEE19B7EC3C1B174"}]}`, `{"spans":[{"spanId":"7uGbfsPBsXQ="}]}`, toBase64},
		{"empty id stays empty", `{"parentSpanId":""}`, `{"parentSpanId":""}`, toBase64},
		{"id key as value untouched", `{"key":"traceId","value":{"stringValue":"zz"}}`, `{"key":"traceId","value":{"stringValue":"zz"}}`, toBase64},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := transcodeIDs(&buf, []byte(tt.in), tt.enc); err != nil {
				t.Fatal(err)
			}
			if buf.String() != tt.want {
				t.Errorf("got  %s\nwant %s", buf.String(), tt.want)
			}
		})
	}
}

func TestTranscodeRejects(t *testing.T) {
	for _, in := range []string{"", "   ", "{", `{"a":}`, `{"a" 1}`, `[1,]`, `{} {}`, `{"spanId":true}`, `{"traceId":[]}`} {
		t.Run(in, func(t *testing.T) {
			var buf bytes.Buffer
			if err := transcodeIDs(&buf, []byte(in), toBase64); err == nil {
				t.Errorf("accepted %q as %s", in, buf.String())
			}
		})
	}
}
