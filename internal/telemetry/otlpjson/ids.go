package otlpjson

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"
)

// idEncoding says which way transcodeIDs converts id values.
type idEncoding int

const (
	// toHex converts base64 ids (protojson output) to lowercase hex (OTLP JSON).
	toHex idEncoding = iota
	// toBase64 converts hex ids (OTLP JSON input) to base64 (protojson input).
	toBase64
)

// idSize returns the byte length of the id held by a JSON object key, or 0
// when the key does not hold a trace or span id.
//
// Only Span, Span.Link, Exemplar (and LogRecord) have object keys with these
// names; user attribute names are JSON values ({"key": "traceId", ...}),
// never object keys, so a key match is always an id field. The snake_case
// forms are the proto field names, which readers must accept too.
func idSize(key string) int {
	switch key {
	case "traceId", "trace_id":
		return 16
	case "spanId", "span_id", "parentSpanId", "parent_span_id":
		return 8
	}
	return 0
}

// frame is one open JSON object or array while transcoding.
type frame struct {
	object bool
	n      int // tokens written inside: keys and values for objects, values for arrays
}

// transcodeIDs re-encodes one JSON value token by token, converting the
// string values of id fields (see idSize) as enc says, and writes it to dst
// compactly: no whitespace, key order and number literals kept as they are.
// Walking tokens instead of matching text is what makes this robust against
// the whitespace protojson randomizes and against ids appearing as text
// inside attribute values.
func transcodeIDs(dst *bytes.Buffer, src []byte, enc idEncoding) error {
	dec := json.NewDecoder(bytes.NewReader(src))
	dec.UseNumber()
	var (
		stack    []frame
		topLevel int
		idKey    string // the id key whose value comes next, if any
	)
	beginValue := func() error {
		if len(stack) == 0 {
			topLevel++
			if topLevel > 1 {
				return errors.New("more than one JSON value on the line")
			}
			return nil
		}
		top := &stack[len(stack)-1]
		if !top.object && top.n > 0 {
			dst.WriteByte(',')
		}
		top.n++
		return nil
	}
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return jsonError(err, dec)
		}
		if d, ok := tok.(json.Delim); ok && (d == '}' || d == ']') {
			stack = stack[:len(stack)-1]
			dst.WriteByte(byte(d))
			continue
		}
		// An object key?
		if s, ok := tok.(string); ok && len(stack) > 0 {
			if top := &stack[len(stack)-1]; top.object && top.n%2 == 0 {
				if top.n > 0 {
					dst.WriteByte(',')
				}
				top.n++
				writeString(dst, s)
				dst.WriteByte(':')
				if idSize(s) > 0 {
					idKey = s
				}
				continue
			}
		}
		if err := beginValue(); err != nil {
			return err
		}
		key := idKey
		idKey = ""
		switch t := tok.(type) {
		case json.Delim: // '{' or '['
			if key != "" {
				return fmt.Errorf("%s: want a string, found a JSON %s", key, delimKind(t))
			}
			stack = append(stack, frame{object: t == '{'})
			dst.WriteByte(byte(t))
		case string:
			if key != "" {
				conv, err := convertID(key, t, enc)
				if err != nil {
					return err
				}
				t = conv
			}
			writeString(dst, t)
		case json.Number:
			if key != "" {
				return fmt.Errorf("%s: want a string, found the number %s", key, t)
			}
			dst.WriteString(string(t))
		case bool:
			if key != "" {
				return fmt.Errorf("%s: want a string, found %t", key, t)
			}
			if t {
				dst.WriteString("true")
			} else {
				dst.WriteString("false")
			}
		case nil:
			dst.WriteString("null") // protojson reads null as "not set"
		}
	}
	if topLevel == 0 {
		return errors.New("no JSON value")
	}
	if len(stack) > 0 {
		return errors.New("JSON ends early (truncated line?)")
	}
	return nil
}

func delimKind(d json.Delim) string {
	if d == '{' {
		return "object"
	}
	return "array"
}

// jsonError turns a decoder error into one that says where it happened.
func jsonError(err error, dec *json.Decoder) error {
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return errors.New("JSON ends early (truncated line?)")
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Errorf("invalid JSON at byte %d: %v", se.Offset, err)
	}
	return fmt.Errorf("invalid JSON at byte %d: %v", dec.InputOffset(), err)
}

// convertID converts one id value. Empty ids (unset fields) stay empty.
func convertID(key, v string, enc idEncoding) (string, error) {
	if v == "" {
		return v, nil
	}
	size := idSize(key)
	switch enc {
	case toHex:
		b, err := base64.StdEncoding.DecodeString(v)
		if err != nil {
			return "", fmt.Errorf("%s: %q is not base64: %v", key, v, err)
		}
		if len(b) != size {
			return "", fmt.Errorf("%s is %d bytes long, want %d", key, len(b), size)
		}
		return hex.EncodeToString(b), nil
	default:
		if len(v) != 2*size {
			return "", fmt.Errorf("%s %q: want %d hex digits, found %d characters", key, v, 2*size, len(v))
		}
		b, err := hex.DecodeString(v)
		if err != nil {
			return "", fmt.Errorf("%s %q is not hex: %v", key, v, err)
		}
		return base64.StdEncoding.EncodeToString(b), nil
	}
}

// writeString writes s as a JSON string. Unlike encoding/json it leaves <, >
// and & unescaped, as protojson does.
func writeString(dst *bytes.Buffer, s string) {
	const hexDigits = "0123456789abcdef"
	dst.WriteByte('"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				dst.WriteString(s[start:i])
				dst.WriteString(`\ufffd`)
				i += size
				start = i
				continue
			}
			i += size
			continue
		}
		dst.WriteString(s[start:i])
		switch c {
		case '"', '\\':
			dst.WriteByte('\\')
			dst.WriteByte(c)
		case '\n':
			dst.WriteString(`\n`)
		case '\r':
			dst.WriteString(`\r`)
		case '\t':
			dst.WriteString(`\t`)
		default:
			dst.WriteString(`\u00`)
			dst.WriteByte(hexDigits[c>>4])
			dst.WriteByte(hexDigits[c&0xf])
		}
		i++
		start = i
	}
	dst.WriteString(s[start:])
	dst.WriteByte('"')
}
