// Package semgen reads ortel's semantic-convention registry (YAML in the
// upstream semantic-conventions model format, under semconv/registry),
// checks it and renders the generated Go code of package semconv, each
// receiver package's table of the metrics it emits (metrics_gen.go) and
// the metrics reference docs/metrics.md. It is run by `go generate ./...`
// through semconv/internal/gen, and by semconv's staleness test.
package semgen
