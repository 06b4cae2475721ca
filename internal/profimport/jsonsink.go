package profimport

import (
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"math"
	"strconv"
	"unicode/utf8"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
)

// FileSink writes each batch as one OTLP/JSON line (an
// ExportTraceServiceRequest, the collector file exporter's format), encoded
// by hand: it is the hot path of a file import, and going through protobuf
// messages and protojson costs several times more than reading the profile.
// Each batch is one write call to w, made before Write returns.
type FileSink struct {
	w      io.Writer
	name   string
	prefix []byte // up to the '[' of "spans"
	buf    []byte
}

// suffix closes what prefix opened.
const suffix = "]}]}]}\n"

// NewFileSink returns a sink writing to w, which name names in errors.
// res and scope describe the spans (the resource and instrumentation scope
// of every line).
func NewFileSink(w io.Writer, name string, res *resource.Resource, scope instrumentation.Scope) *FileSink {
	b := []byte(`{"resourceSpans":[{"resource":{"attributes":`)
	var attrs []attribute.KeyValue
	if res != nil {
		attrs = res.Attributes()
	}
	b = appendAttrs(b, attrs)
	b = append(b, '}')
	if res != nil && res.SchemaURL() != "" {
		b = append(b, `,"schemaUrl":`...)
		b = appendString(b, res.SchemaURL())
	}
	b = append(b, `,"scopeSpans":[{"scope":{"name":`...)
	b = appendString(b, scope.Name)
	if scope.Version != "" {
		b = append(b, `,"version":`...)
		b = appendString(b, scope.Version)
	}
	b = append(b, `},"spans":[`...)
	return &FileSink{w: w, name: name, prefix: b}
}

// Write encodes the batch as one line and writes it.
func (s *FileSink) Write(ctx context.Context, batch []Span) error {
	if len(batch) == 0 {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	b := append(s.buf[:0], s.prefix...)
	for i := range batch {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendSpan(b, &batch[i])
	}
	b = append(b, suffix...)
	s.buf = b
	if _, err := s.w.Write(b); err != nil {
		return fmt.Errorf("write %s: %w", s.name, err)
	}
	return nil
}

// Close does nothing: every batch was written by Write. The caller closes
// the file (and checks that error).
func (s *FileSink) Close() error { return nil }

func appendSpan(b []byte, sp *Span) []byte {
	b = append(b, `{"traceId":"`...)
	b = hex.AppendEncode(b, sp.TraceID[:])
	b = append(b, `","spanId":"`...)
	b = hex.AppendEncode(b, sp.SpanID[:])
	if sp.Parent.IsValid() {
		b = append(b, `","parentSpanId":"`...)
		b = hex.AppendEncode(b, sp.Parent[:])
	}
	b = append(b, `","name":`...)
	b = appendString(b, sp.Name)
	b = append(b, `,"kind":1,"startTimeUnixNano":"`...)
	b = strconv.AppendInt(b, sp.Start, 10)
	b = append(b, `","endTimeUnixNano":"`...)
	b = strconv.AppendInt(b, sp.End, 10)
	b = append(b, `","attributes":`...)
	b = appendAttrs(b, sp.Attrs)
	return append(b, `,"status":{}}`...)
}

func appendAttrs(b []byte, attrs []attribute.KeyValue) []byte {
	b = append(b, '[')
	for i, kv := range attrs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"key":`...)
		b = appendString(b, string(kv.Key))
		b = append(b, `,"value":`...)
		b = appendValue(b, kv.Value)
		b = append(b, '}')
	}
	return append(b, ']')
}

func appendValue(b []byte, v attribute.Value) []byte {
	switch v.Type() {
	case attribute.BOOL:
		return append(strconv.AppendBool(append(b, `{"boolValue":`...), v.AsBool()), '}')
	case attribute.INT64:
		b = strconv.AppendInt(append(b, `{"intValue":"`...), v.AsInt64(), 10)
		return append(b, `"}`...)
	case attribute.FLOAT64:
		return append(appendFloat(append(b, `{"doubleValue":`...), v.AsFloat64()), '}')
	case attribute.STRING:
		return append(appendString(append(b, `{"stringValue":`...), v.AsString()), '}')
	case attribute.BOOLSLICE:
		b = append(b, `{"arrayValue":{"values":[`...)
		for i, x := range v.AsBoolSlice() {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendValue(b, attribute.BoolValue(x))
		}
		return append(b, `]}}`...)
	case attribute.INT64SLICE:
		b = append(b, `{"arrayValue":{"values":[`...)
		for i, x := range v.AsInt64Slice() {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendValue(b, attribute.Int64Value(x))
		}
		return append(b, `]}}`...)
	case attribute.FLOAT64SLICE:
		b = append(b, `{"arrayValue":{"values":[`...)
		for i, x := range v.AsFloat64Slice() {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendValue(b, attribute.Float64Value(x))
		}
		return append(b, `]}}`...)
	case attribute.STRINGSLICE:
		b = append(b, `{"arrayValue":{"values":[`...)
		for i, x := range v.AsStringSlice() {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(appendString(append(b, `{"stringValue":`...), x), '}')
		}
		return append(b, `]}}`...)
	}
	return append(b, `{}`...)
}

// appendFloat writes f as protojson does: NaN and infinities as strings.
func appendFloat(b []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(b, `"NaN"`...)
	case math.IsInf(f, 1):
		return append(b, `"Infinity"`...)
	case math.IsInf(f, -1):
		return append(b, `"-Infinity"`...)
	}
	return strconv.AppendFloat(b, f, 'g', -1, 64)
}

const hexDigits = "0123456789abcdef"

const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// plain8 reports whether none of the 8 bytes of x needs escaping or UTF-8
// checking: no control character, '"', '\\' or non-ASCII byte.
func plain8(x uint64) bool {
	ctl := (x - lsb*0x20) & ^x & msb
	q := x ^ (lsb * '"')
	bs := x ^ (lsb * '\\')
	return (ctl | ((q - lsb) &^ q & msb) | ((bs - lsb) &^ bs & msb) | (x & msb)) == 0
}

// load8 reads s[i:i+8] as a little-endian word (the compiler merges the
// loads).
func load8(s string, i int) uint64 {
	s = s[i : i+8]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// appendString appends s as a JSON string; invalid UTF-8 becomes U+FFFD.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	i := 0
	for i+8 <= len(s) && plain8(load8(s, i)) {
		i += 8
	}
	start := 0
	for i < len(s) {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\t':
				b = append(b, '\\', 't')
			case '\r':
				b = append(b, '\\', 'r')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i++
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
