// Package e2e is ortel's end-to-end test: it runs a real OpenTelemetry
// Collector (built from otelcol-config/builder-config.yaml) and Debian's
// Prometheus on free loopback ports, runs `ortel bench` on a real model with
// OTLP export to the collector, and checks what came out the other side: the
// series Prometheus scraped from the collector and the spans the collector
// exported.
//
// The test itself is behind the e2e build tag:
//
//	scripts/e2e.sh                      (or make e2e)
//	go test -tags e2e -count=1 -v ./internal/e2e/
//
// Steps, each with its own time limit: build the collector (cached), install
// Prometheus if missing, start an in-process OTLP receiver standing in for
// Jaeger and a second one for the test, start the collector with
// collector.yaml plus a generated overlay that routes a second OTLP exporter
// of the traces pipeline to the test's receiver, start Prometheus with
// otelcol-config/prometheus.yml pointed at the collector and a 1s scrape
// interval (and the alerting rules of otelcol-config/rules), run the
// workload, query Prometheus, check the span tree, run every dashboard panel
// query as Grafana would (a range query over the workload) and require data
// (only ExcusedPanels may be empty, on a machine without their source),
// tear everything down.
//
// TestFaults (make faults) is the outage test: a Silero VAD bench exporting
// to the collector while the collector is stopped for 7 s and restarted,
// then frozen (SIGSTOP) for 20 s; after `ortel replay` of the bench's spool,
// every span the bench ended must have left the collector (deduplicated by
// span id), and a command facing a frozen collector must exit within its
// export timeout + 5 s of the same command with a live one (not the
// SDK's default 10 s), and the wait it reports at exit must stay within
// the export timeout + 2 s. Its logs go to
// out/faults/. Logs and generated configs stay in out/e2e/ and are
// printed when the test fails.
//
// Environment:
//
//	ORTEL_E2E_CMD             workload command line (run by bash) instead of bin/ortel bench
//	ORTEL_E2E_RUNS            unprofiled runs the workload records (default 31: 1 cold + 30 measured)
//	ORTEL_E2E_PROFILED_RUNS   profiled runs the workload records (default 3)
//	ORTEL_E2E_OUT             log folder (default <repo>/out/e2e)
//
// The package's non-test code is the harness (processes, ports, the
// Prometheus HTTP API, generated configs, span-tree checks, the expected
// metrics); it is unit-tested without the tag. It emits no telemetry.
package e2e
