package stack

import (
	"slices"
	"strings"
	"unicode"

	"github.com/ortel-dev/ortel/semconv"
)

// Instrument kinds as the semconv registry names them.
const (
	Counter       = "counter"
	UpDownCounter = "updowncounter"
	Gauge         = "gauge"
	Histogram     = "histogram"
)

// PromName returns the name the collector's Prometheus exporter gives an
// OTel metric, with translation_strategy UnderscoreEscapingWithSuffixes (the
// setting in otelcol-config/collector.yaml). It follows the translator the
// exporter uses (github.com/prometheus/otlptranslator v1.0.0, as built into
// collector v0.155.0):
//
//   - characters other than letters, digits and ':' separate name tokens;
//   - the unit is appended in words (s -> seconds, By -> bytes, J -> joules,
//     By/s -> bytes_per_second) unless a token already says it; "1" and
//     annotations in braces such as {run} add nothing;
//   - a counter (monotonic sum) ends in _total;
//   - a gauge of unit "1" ends in _ratio (an updowncounter of unit "1" does not).
//
// instrument is one of Counter, UpDownCounter, Gauge or Histogram. A
// histogram's series add _bucket, _sum and _count to the name (see Series).
func PromName(name, unit, instrument string) string {
	tokens := strings.FieldsFunc(name, func(r rune) bool { return !isMetricChar(r) })
	main, per := unitSuffixes(unit)
	tokens = addUnitTokens(tokens, cleanUnit(main), cleanUnit(per))
	if instrument == Counter {
		tokens = append(slices.DeleteFunc(tokens, func(s string) bool { return s == "total" }), "total")
	}
	if unit == "1" && instrument == Gauge {
		tokens = append(slices.DeleteFunc(tokens, func(s string) bool { return s == "ratio" }), "ratio")
	}
	out := strings.Join(tokens, "_")
	if out != "" && unicode.IsDigit(rune(out[0])) {
		out = "_" + out
	}
	return out
}

// Series returns the names of the Prometheus series a metric produces: the
// PromName, or for a histogram its _bucket, _sum and _count series.
func Series(name, unit, instrument string) []string {
	n := PromName(name, unit, instrument)
	if instrument == Histogram {
		return []string{n + "_bucket", n + "_sum", n + "_count"}
	}
	return []string{n}
}

// SpanMetricsSeries are the series the collector's span_metrics connector
// produces (namespace traces.span.metrics, duration unit s, as
// collector.yaml sets them), as Prometheus names them.
var SpanMetricsSeries = append(
	Series("traces.span.metrics.calls", "", Counter),
	Series("traces.span.metrics.duration", "s", Histogram)...)

// MetricPromName returns the Prometheus name of a registered metric.
func MetricPromName(m semconv.Metric) string { return PromName(m.Name, m.Unit, m.Instrument) }

// MetricSeries returns the Prometheus series names of a registered metric.
func MetricSeries(m semconv.Metric) []string { return Series(m.Name, m.Unit, m.Instrument) }

// LabelName returns the Prometheus label an attribute key becomes: every
// character other than a letter, digit or '_' turns into '_'
// (onnxruntime.node.op_type -> onnxruntime_node_op_type).
func LabelName(key string) string {
	b := []byte(key)
	for i, c := range b {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			b[i] = '_'
		}
	}
	s := string(b)
	if s != "" && s[0] >= '0' && s[0] <= '9' {
		s = "key_" + s
	}
	return s
}

var unitWords = map[string]string{
	"d": "days", "h": "hours", "min": "minutes", "s": "seconds", "ms": "milliseconds",
	"us": "microseconds", "ns": "nanoseconds",
	"By": "bytes", "KiBy": "kibibytes", "MiBy": "mebibytes", "GiBy": "gibibytes",
	"TiBy": "tibibytes", "KBy": "kilobytes", "MBy": "megabytes", "GBy": "gigabytes",
	"TBy": "terabytes",
	"m":   "meters", "V": "volts", "A": "amperes", "J": "joules", "W": "watts", "g": "grams",
	"Cel": "celsius", "Hz": "hertz", "1": "", "%": "percent",
}

var perUnitWords = map[string]string{
	"s": "second", "m": "minute", "h": "hour", "d": "day", "w": "week", "mo": "month", "y": "year",
}

func isMetricChar(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == ':'
}

// unitSuffixes splits a UCUM unit into its main and per-unit words.
func unitSuffixes(unit string) (main, per string) {
	parts := strings.SplitN(unit, "/", 2)
	if m := strings.TrimSpace(parts[0]); m != "" && !strings.ContainsAny(m, "{}") {
		main = m
		if w, ok := unitWords[m]; ok {
			main = w
		}
	}
	if len(parts) > 1 {
		if p := strings.TrimSpace(parts[1]); p != "" && !strings.ContainsAny(p, "{}") {
			per = p
			if w, ok := perUnitWords[p]; ok {
				per = w
			}
			per = "per_" + per
		}
	}
	return main, per
}

// cleanUnit makes a unit word a valid name part.
func cleanUnit(s string) string {
	s = strings.Map(func(r rune) rune {
		if isMetricChar(r) {
			return r
		}
		return '_'
	}, s)
	for strings.Contains(s, "__") {
		s = strings.ReplaceAll(s, "__", "_")
	}
	return strings.TrimPrefix(s, "_")
}

func addUnitTokens(tokens []string, main, per string) []string {
	if slices.Contains(tokens, main) {
		main = ""
	}
	if per == "per_" {
		per = ""
	} else {
		per = strings.TrimSuffix(per, "_")
		if slices.Contains(tokens, per) {
			per = ""
		}
	}
	if per != "" {
		main = strings.TrimSuffix(main, "_")
	}
	if main != "" {
		tokens = append(tokens, main)
	}
	if per != "" {
		tokens = append(tokens, per)
	}
	return tokens
}
