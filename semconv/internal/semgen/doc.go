// Package semgen reads ortel's semantic-convention registry (YAML in the
// upstream semantic-conventions model format, under semconv/registry),
// checks it and renders the generated Go code of package semconv and the
// metrics reference docs/metrics.md. It is run by `go generate ./semconv/...`
// through semconv/internal/gen, and by semconv's staleness test.
package semgen
