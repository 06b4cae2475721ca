// Package semconv holds ortel's semantic conventions: the names, units,
// descriptions and attributes of every metric ortel emits, and typed
// constructors for its instruments.
//
// Everything here except table.go is generated from the YAML registry in
// semconv/registry (the upstream OpenTelemetry semantic-conventions model
// format) by `go generate ./...`, which also writes the metrics reference
// docs/metrics.md and each receiver package's table of the metrics it
// emits (receivers/<name>/metrics_gen.go). A test fails when the generated
// files are stale.
//
// Upstream names (system.*, process.*, hw.*, error.type, ...) are reused as
// they are in semantic conventions v1.43.0; ortel's own names live under
// onnxruntime.* (what ONNX Runtime produces), nvidia.* (NVML-only readings)
// and ortel.* (project concepts).
//
// For a metric M, such as onnxruntime.run.duration (Go name
// OnnxruntimeRunDuration), the package has the constants MName, MUnit and
// MDescription and a constructor NewM(meter, opts...) returning the
// instrument type the registry names (here metric.Float64Histogram) with
// name, unit, description and any bucket boundaries applied. For an
// attribute A it has AKey, a constructor A(v) and, for enums, one variable
// per value (for example HwTypeGPU). The Metrics and Attributes tables list
// everything; see docs/metrics.md for the full reference.
//
// To add a name: add an entry to a file under semconv/registry (copy a
// neighbour), run `go generate ./semconv/...`, and commit the registry
// together with the regenerated files.
//
// The package uses the OpenTelemetry metric API only, never the SDK.
package semconv

//go:generate go run ./internal/gen -registry registry -go . -docs ../docs/metrics.md -receivers ../receivers
