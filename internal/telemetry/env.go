package telemetry

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
)

// env reads OTEL_* variables and collects a warning for each bad value.
type env struct {
	getenv   func(string) string
	warnings []string
}

func (e *env) warnf(format string, args ...any) {
	e.warnings = append(e.warnings, fmt.Sprintf(format, args...))
}

// lookup returns the trimmed value of name; "" when unset or blank (the
// specification treats an empty value as unset).
func (e *env) lookup(name string) string {
	return strings.TrimSpace(e.getenv(name))
}

// millis reads a whole number of milliseconds > 0. ok is false when the
// variable is unset or bad (then with a warning).
func (e *env) millis(name string) (d time.Duration, ok bool) {
	v := e.lookup(name)
	if v == "" {
		return 0, false
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n <= 0 || n > int64(24*time.Hour/time.Millisecond) {
		e.warnf("%s=%s ignored: want a whole number of milliseconds between 1 and 86400000", name, safeQuote(v))
		return 0, false
	}
	return time.Duration(n) * time.Millisecond, true
}

// integer reads a whole number >= minimum.
func (e *env) integer(name string, minimum int) (int, bool) {
	v := e.lookup(name)
	if v == "" {
		return 0, false
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < minimum || n > 1<<24 {
		e.warnf("%s=%s ignored: want a whole number between %d and %d", name, safeQuote(v), minimum, 1<<24)
		return 0, false
	}
	return n, true
}

// boolean reads "true" or "false", in any case.
func (e *env) boolean(name string) (value, ok bool) {
	v := e.lookup(name)
	switch strings.ToLower(v) {
	case "":
		return false, false
	case "true":
		return true, true
	case "false":
		return false, true
	}
	e.warnf("%s=%s ignored: want true or false", name, safeQuote(v))
	return false, false
}

// resource resolves the service name and version and the configured
// resource attributes.
func (e *env) resource(cfg Config) (name, version string, attrs []attribute.KeyValue) {
	var fromEnv []attribute.KeyValue
	if v := e.lookup("OTEL_RESOURCE_ATTRIBUTES"); v != "" {
		for i, entry := range strings.Split(v, ",") {
			entry = strings.TrimSpace(entry)
			if entry == "" {
				continue
			}
			k, val, found := strings.Cut(entry, "=")
			k = strings.TrimSpace(k)
			if !found || k == "" {
				e.warnf("OTEL_RESOURCE_ATTRIBUTES entry %d %s ignored: want key=value", i+1, safeQuote(entry))
				continue
			}
			dec, err := url.PathUnescape(strings.TrimSpace(val))
			if err != nil {
				e.warnf("OTEL_RESOURCE_ATTRIBUTES %s ignored: its value is not valid percent-encoding", k)
				continue
			}
			fromEnv = append(fromEnv, attribute.String(k, dec))
		}
	}
	envService := ""
	for _, kv := range fromEnv {
		switch kv.Key {
		case "service.name":
			envService = kv.Value.AsString()
		case "service.version":
			version = kv.Value.AsString()
		}
	}
	// The environment wins over the program's default name: a user running
	// the same program twice names each run.
	name = e.lookup("OTEL_SERVICE_NAME")
	if name == "" {
		name = envService
	}
	if name == "" {
		name = cfg.ServiceName
	}
	if name == "" {
		name = DefaultServiceName
	}
	if cfg.ServiceVersion != "" {
		version = cfg.ServiceVersion
	}
	for _, kv := range fromEnv {
		if kv.Key != "service.name" && kv.Key != "service.version" {
			attrs = append(attrs, kv)
		}
	}
	attrs = append(attrs, attribute.String("service.name", name))
	if version != "" {
		attrs = append(attrs, attribute.String("service.version", version))
	}
	return name, version, attrs
}

// headers parses a W3C-baggage-like "k1=v1,k2=v2" list with percent-encoded
// values. Warnings name the entry's position or key, never a value.
func (e *env) headers(name string) (Headers, bool) {
	v := e.lookup(name)
	if v == "" {
		return nil, false
	}
	h := Headers{}
	for i, entry := range strings.Split(v, ",") {
		if strings.TrimSpace(entry) == "" {
			continue
		}
		k, val, found := strings.Cut(entry, "=")
		k = strings.ToLower(strings.TrimSpace(k))
		switch {
		case !found:
			e.warnf("%s entry %d ignored: it has no '=' (want key=value)", name, i+1)
			continue
		case !validHeaderKey(k):
			e.warnf("%s entry %d ignored: its key is empty or has characters other than a-z, 0-9, '-', '_' and '.'", name, i+1)
			continue
		}
		dec, err := url.PathUnescape(strings.TrimSpace(val))
		if err != nil {
			e.warnf("%s %s ignored: its value is not valid percent-encoding", name, k)
			continue
		}
		h[k] = dec
	}
	return h, true
}

// validHeaderKey reports whether k is a valid gRPC metadata key.
func validHeaderKey(k string) bool {
	if k == "" || strings.HasPrefix(k, "grpc-") {
		return false
	}
	for _, c := range k {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

// safeQuote quotes an environment value for a warning, unless it looks
// like it holds credentials (user:password@ in a URL).
func safeQuote(v string) string {
	if strings.Contains(v, "@") {
		return "(value not shown: it looks like it holds credentials)"
	}
	if len(v) > 200 {
		v = v[:200] + "…"
	}
	return strconv.Quote(v)
}
