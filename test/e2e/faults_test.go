//go:build e2e

package e2e

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ortel-dev/ortel/test/otlptest"
	"github.com/ortel-dev/ortel/test/stack"
)

// The fault schedule of TestFaults, during one Silero VAD bench.
const (
	faultBench  = 45 * time.Second // the bench's --duration
	faultDown   = 7 * time.Second  // collector stopped, then started again
	faultFrozen = 20 * time.Second // collector SIGSTOPped, then SIGCONT
	faultExport = 2 * time.Second  // OTEL_EXPORTER_OTLP_TIMEOUT of the commands
	// A command facing a frozen collector exits within the export timeout +
	// this of the same command with a live one. Its shutdown is bounded by
	// the export timeout + 500ms, and two runs of a command on a loaded
	// machine differ by seconds, so 5s; a command that waited for the
	// OpenTelemetry SDK's default 10s export timeout instead still exceeds
	// it.
	faultExitSlack  = 5 * time.Second
	faultCheckLimit = 60 * time.Second // the spans' arrival after the replay
	// faultWaitLimit bounds the wait the command itself reports at exit
	// ("waited Xs at exit for the last exports"): the shutdown deadline
	// (export timeout + 500ms, a hard deadline in the code), then writing
	// to the spool what could not be sent. That write has no deadline
	// (Shutdown waits for it: a fixed one dropped spans on a loaded
	// machine) but is local work in proportion to what is queued, and the
	// short bench below ends a few dozen spans and a metric collection or
	// two: milliseconds of encoding and writing, well inside the 1.5s left
	// here. The SDK's default 10s would exceed it.
	faultWaitLimit = faultExport + 2*time.Second
)

// exitWait reads the wait a command reported at exit from its log.
var exitWait = regexp.MustCompile(`waited (\d+\.\d+)s at exit for the last exports`)

// TestFaults runs `ortel bench silero-vad` exporting to the real collector
// and, during the bench, stops the collector for 7 s and starts it again on
// the same ports, then freezes it (SIGSTOP) for 20 s and thaws it. The
// bench spools what it could not send; `ortel replay` sends the spool. Every
// span the bench ended must then have left the collector (deduplicated by
// span id): none lost. Last, a command facing a frozen collector must exit
// within its export timeout + 5 s of what it takes with a live one.
//
// The collector is stopped with SIGTERM, as a restart by an orchestrator
// does: it drains its own queue on the way down. (SIGKILL would lose what
// the collector had accepted and not yet passed on, the collector's loss,
// not ortel's: its sending queue is in memory.)
func TestFaults(t *testing.T) {
	h := newHarness(t, "faults")
	root := h.root
	var err error // set inside the steps below

	ortel := filepath.Join(root, "bin", "ortel")
	if _, err := os.Stat(ortel); err != nil {
		t.Fatalf("the ortel CLI is not built (%v): run make build", err)
	}
	var collectorBin string
	h.step("build the collector", buildTimeout, func(ctx context.Context) error {
		collectorBin, err = h.script(ctx, "build-collector", filepath.Join(root, stack.BuildScript))
		return err
	})

	// The collector, with the test's receiver behind its traces pipeline
	// (and standing in for Jaeger). The receivers live in this process and
	// outlive every collector fault.
	var tap, jaeger *otlptest.Receiver
	var ports CollectorPorts
	var env, argv []string
	var col *Process
	start := func(ctx context.Context, name string) error {
		p, err := h.startProcess(name, env, argv...)
		if err != nil {
			return err
		}
		col = p
		return h.waitReady(ctx, p, func(ctx context.Context) error {
			return dial(ctx, "127.0.0.1:"+strconv.Itoa(ports.GRPC))
		})
	}
	h.step("start the receivers and the collector", startTimeout, func(ctx context.Context) error {
		if tap, err = otlptest.Start(otlptest.WithAddress("127.0.0.1:0")); err != nil {
			return err
		}
		t.Cleanup(func() { tap.Close() })
		if jaeger, err = otlptest.Start(otlptest.WithAddress("127.0.0.1:0")); err != nil {
			return err
		}
		t.Cleanup(func() { jaeger.Close() })
		p, err := FreePorts(5)
		if err != nil {
			return err
		}
		ports = CollectorPorts{GRPC: p[0], HTTP: p[1], Prometheus: p[2], Telemetry: p[3], Health: p[4]}
		base, err := stack.LoadCollector(filepath.Join(root, stack.CollectorConfig))
		if err != nil {
			return err
		}
		overlay, err := CollectorOverlay(base, tap.Endpoint())
		if err != nil {
			return err
		}
		env = CollectorEnv(ports, jaeger.Endpoint())
		argv = []string{collectorBin, "--config", filepath.Join(root, stack.CollectorConfig), "--config", h.write("collector-overlay.yaml", overlay)}
		return start(ctx, "collector")
	})

	out := t.TempDir()
	otelEnv := []string{
		"OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:" + strconv.Itoa(ports.GRPC),
		"OTEL_EXPORTER_OTLP_PROTOCOL=grpc",
		"OTEL_EXPORTER_OTLP_TIMEOUT=" + strconv.Itoa(int(faultExport.Milliseconds())),
		"OTEL_METRIC_EXPORT_INTERVAL=1000",
		"OTEL_BSP_SCHEDULE_DELAY=200",
	}
	var bench *Process
	h.step("start the bench", startTimeout, func(ctx context.Context) error {
		cmd := []string{ortel, "bench", "--duration", faultBench.String(), "--warmup", "0", "--profile-runs", "0", "--out", out, "silero-vad"}
		h.write("bench.cmd", []byte(strings.Join(append(otelEnv, cmd...), " ")+"\n"))
		if bench, err = h.startProcess("bench", otelEnv, cmd...); err != nil {
			return err
		}
		// The faults start once spans flow.
		return tap.WaitSpans(ctx, func(s []otlptest.Span) bool { return len(s) > 0 })
	})

	h.step("stop the collector for 7s, start it again", 2*startTimeout, func(ctx context.Context) error {
		if err := col.Stop(stopGrace); err != nil {
			return err
		}
		time.Sleep(faultDown) // the outage itself
		return start(ctx, "collector-restarted")
	})
	h.step("freeze the collector for 20s, thaw it", 2*startTimeout, func(ctx context.Context) error {
		if err := syscall.Kill(col.Pid(), syscall.SIGSTOP); err != nil {
			return err
		}
		time.Sleep(faultFrozen) // the freeze itself
		return syscall.Kill(col.Pid(), syscall.SIGCONT)
	})

	h.step("wait for the bench", workloadTimeout, func(ctx context.Context) error {
		err := bench.Wait(ctx)
		if err != nil && strings.Contains(err.Error(), "exit status 4") {
			// 4: telemetry spooled or lost; report.json says which.
			t.Logf("bench: %v (telemetry spooled or lost)", err)
			return nil
		}
		return err
	})
	tel, err := readTelemetry(filepath.Join(out, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	ended := tel.SpansExported + tel.SpansSpooled + tel.SpansDropped
	t.Logf("bench telemetry: %d spans ended: %d exported, %d spooled, %d dropped; %d metric exports failed, %d spooled (%s)",
		ended, tel.SpansExported, tel.SpansSpooled, tel.SpansDropped, tel.MetricExportsFailed, tel.MetricExportsSpooled, tel.SpoolDir)
	if tel.SpansDropped != 0 {
		t.Errorf("the bench dropped %d spans: report.json telemetry %+v", tel.SpansDropped, tel)
	}

	if tel.SpoolDir != "" {
		h.step("replay the spool", workloadTimeout, func(ctx context.Context) error {
			p, err := h.startProcess("replay", otelEnv, ortel, "replay", tel.SpoolDir)
			if err != nil {
				return err
			}
			return p.Wait(ctx)
		})
	}

	h.check("every span the bench ended left the collector", faultCheckLimit, func(ctx context.Context) error {
		// Wait for what ortel still held (exported or spooled); the
		// dropped ones can never arrive.
		held := tel.SpansExported + tel.SpansSpooled
		var got int
		err := tap.WaitSpans(ctx, func(s []otlptest.Span) bool {
			got = len(uniqueBenchSpans(s))
			return int64(got) >= held
		})
		all := tap.Spans()
		lost := ended - int64(got)
		t.Logf("the collector delivered %d spans, %d distinct ones of the bench; the bench ended %d: %d lost (%.1f%%)",
			len(all), got, ended, lost, 100*float64(lost)/float64(max(ended, 1)))
		if err != nil {
			return fmt.Errorf("%d of the %d spans the bench exported or spooled left the collector: %w", got, held, err)
		}
		if int64(got) != ended {
			return fmt.Errorf("%d distinct bench spans left the collector, the bench ended %d: %d lost", got, ended, lost)
		}
		return nil
	})

	// A command facing a frozen collector exits within its export timeout
	// (+faultExitSlack) of the time the same command takes with a live one.
	short := []string{ortel, "bench", "--runs", "20", "--warmup", "0", "--profile-runs", "0", "silero-vad"}
	var live time.Duration
	h.check("time a short bench with a live collector", workloadTimeout, func(ctx context.Context) error {
		live, err = h.timed(ctx, "short-live", otelEnv, append(short, "--out", t.TempDir()))
		return err
	})
	h.check("a short bench facing a frozen collector exits in time", workloadTimeout, func(ctx context.Context) error {
		if err := syscall.Kill(col.Pid(), syscall.SIGSTOP); err != nil {
			return err
		}
		defer syscall.Kill(col.Pid(), syscall.SIGCONT)
		frozen, err := h.timed(ctx, "short-frozen", otelEnv, append(short, "--out", t.TempDir()))
		t.Logf("short bench: %.2fs with a live collector, %.2fs with a frozen one (export timeout %s)", live.Seconds(), frozen.Seconds(), faultExport)
		if err != nil && !strings.Contains(err.Error(), "exit status 4") {
			return err // 4: telemetry spooled, the expected outcome
		}
		if limit := live + faultExport + faultExitSlack; frozen > limit {
			return fmt.Errorf("took %.2fs facing a frozen collector, more than %.2fs (live %.2fs + export timeout %s + %s)", frozen.Seconds(), limit.Seconds(), live.Seconds(), faultExport, faultExitSlack)
		}
		log, err := os.ReadFile(filepath.Join(h.logDir, "short-frozen.log"))
		if err != nil {
			return err
		}
		m := exitWait.FindSubmatch(log)
		if m == nil {
			return fmt.Errorf("the bench facing a frozen collector did not say how long it waited at exit:\n%s", log)
		}
		waited, _ := strconv.ParseFloat(string(m[1]), 64)
		t.Logf("short bench facing a frozen collector waited %.2fs at exit for its last exports (export timeout %s)", waited, faultExport)
		if waited > faultWaitLimit.Seconds() {
			return fmt.Errorf("waited %.2fs at exit for a frozen collector, more than %s (export timeout %s + shutdown margin and spool grace)", waited, faultWaitLimit, faultExport)
		}
		return nil
	})
}

// timed runs a command to its end and returns how long it took.
func (h *harness) timed(ctx context.Context, name string, env, argv []string) (time.Duration, error) {
	start := time.Now()
	p, err := h.startProcess(name, env, argv...)
	if err != nil {
		return 0, err
	}
	err = p.Wait(ctx)
	return time.Since(start), err
}

// uniqueBenchSpans returns the bench's spans by span id, each once.
func uniqueBenchSpans(spans []otlptest.Span) map[string]bool {
	ids := map[string]bool{}
	for _, s := range BenchSpans(spans) {
		ids[hex.EncodeToString(s.SpanId)] = true
	}
	return ids
}

func readTelemetry(path string) (telemetryReport, error) {
	var r struct {
		Telemetry telemetryReport `json:"telemetry"`
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return r.Telemetry, err
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return r.Telemetry, fmt.Errorf("parse %s: %w", path, err)
	}
	return r.Telemetry, nil
}

// telemetryReport is report.json's telemetry section (docs/report-schema.md).
type telemetryReport struct {
	SpansExported        int64  `json:"spans_exported"`
	SpansDropped         int64  `json:"spans_dropped"`
	SpansSpooled         int64  `json:"spans_spooled"`
	MetricExportsFailed  int64  `json:"metric_exports_failed"`
	MetricExportsSpooled int64  `json:"metric_exports_spooled"`
	SpoolDir             string `json:"spool_dir"`
}
