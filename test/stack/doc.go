// Package stack reads the files of ortel's local observability stack, so
// that tests can check them without running Docker: docker-compose.yaml, the
// collector configuration and its build manifest in otelcol-config/, the
// Prometheus configuration, and the Grafana dashboards.
//
// It also knows how the collector's Prometheus exporter names ortel's
// metrics (PromName): onnxruntime.run.duration with unit s becomes
// onnxruntime_run_duration_seconds, a counter gains _total, a gauge of unit
// "1" gains _ratio, and annotation units such as {run} add nothing. Tests use
// it to check that dashboards query names that ortel really emits.
//
// The static tests of this package run with plain `go test`:
//
//   - docker-compose.yaml parses, pins every image to a tag other than
//     latest, mounts only files that exist in the repository, publishes the
//     documented ports on 127.0.0.1 only, and runs the collector on
//     otelcol-config/collector.yaml;
//   - every component a collector pipeline uses is declared, every declared
//     component is used, and the build manifest builds exactly those
//     components;
//   - every metric name and label a dashboard query uses is one ortel emits;
//   - the collector built from the manifest accepts the configuration
//     (`otelcol-ortel validate`), when it has been built: locally the test
//     skips with a hint, under CI=true it fails instead.
//
// The package emits no telemetry.
package stack
