package telemetry

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"slices"
	"strings"
)

// Headers are the OTLP headers sent with each export, such as an
// authorization token. Their values are credentials, so a Headers value
// never prints them: fmt (every verb), encoding/json and log/slog all show
// the keys with the value "<redacted>". Index the map to get a value.
type Headers map[string]string

const redacted = "<redacted>"

// Keys returns the header names, sorted.
func (h Headers) Keys() []string {
	return slices.Sorted(maps.Keys(h))
}

// Redacted returns the header names, sorted and comma-separated, or
// "none": what Describe prints.
func (h Headers) Redacted() string {
	if len(h) == 0 {
		return "none"
	}
	return strings.Join(h.Keys(), ", ")
}

// String returns "map[key:<redacted> ...]".
func (h Headers) String() string {
	var b strings.Builder
	b.WriteString("map[")
	for i, k := range h.Keys() {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(k)
		b.WriteString(":" + redacted)
	}
	b.WriteByte(']')
	return b.String()
}

// Format makes every fmt verb (%v, %+v, %#v, %s, %q, %x, %d ...) print
// String, so no verb can reach the values.
func (h Headers) Format(f fmt.State, verb rune) {
	_, _ = io.WriteString(f, h.String())
}

// MarshalJSON encodes the keys with redacted values.
func (h Headers) MarshalJSON() ([]byte, error) {
	m := make(map[string]string, len(h))
	for k := range h {
		m[k] = redacted
	}
	return json.Marshal(m)
}

// LogValue makes log/slog print the keys only.
func (h Headers) LogValue() slog.Value {
	return slog.StringValue(h.String())
}
