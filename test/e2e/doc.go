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
//	go test -tags e2e -count=1 -v ./test/e2e/
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
// TestCrashes (make faults too) is the crash test: 200 SIGKILLs at random
// moments of `ortel agent` and `ortel bench` (a tiny generated model)
// while they write their spool (collector dead) or their OTLP/JSON files,
// every 10th a SIGTERM instead, every start appending to what the last
// kill left (and one start in four meeting a file end damaged as a kill or
// a power loss inside a write leaves it); then the agent's files and a
// bench's spool on a 2 MiB tmpfs that fills up and is freed (mounting it
// needs root: elsewhere the part says so and skips, under CI=true it
// fails). After `ortel replay` of every folder (one by two replays at
// once), every whole record of the files must have arrived exactly once
// and nothing else (no damaged record sent), a second replay must send
// nothing, every exit's counts must add up (produced = written + lost) and
// match what its files gained. Its figures go to out/crashes/figures.txt;
// ORTEL_CRASH_ITERATIONS and ORTEL_CRASH_SEED change the count and replay a
// schedule.
//
// Environment:
//
//	ORTEL_E2E_CMD             workload command line (run by bash) instead of bin/ortel bench
//	ORTEL_E2E_RUNS            unprofiled runs the workload records (default 31: 1 cold + 30 measured)
//	ORTEL_E2E_PROFILED_RUNS   profiled runs the workload records (default 3)
//	ORTEL_E2E_OUT             log folder (default <repo>/out/e2e)
//	ORTEL_CRASH_ITERATIONS    TestCrashes' kills (default 200)
//	ORTEL_CRASH_SEED          TestCrashes' random schedule (default: the time, printed)
//
// The package's non-test code is the harness (processes, ports, the
// Prometheus HTTP API, generated configs, span-tree checks, the expected
// metrics); it is unit-tested without the tag. It emits no telemetry.
package e2e
