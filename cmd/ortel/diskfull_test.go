package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	colmetricspb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"

	"github.com/ortel-dev/ortel/internal/report"
	"github.com/ortel-dev/ortel/internal/telemetry/otlpjson"
	"github.com/ortel-dev/ortel/test/otlptest"
	"github.com/ortel-dev/ortel/test/testenv"
)

// waitFor waits until cond holds, failing the test after a minute: the
// conditions are events a command makes happen (a record written, an error
// printed), far sooner on any machine.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting: %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// records counts the whole records of an OTLP/JSON metrics file, failing
// the test on a damaged one.
func metricRecords(t *testing.T, path string) int {
	t.Helper()
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := 0
	if err := otlpjson.ReadMetrics(f, func(*colmetricspb.ExportMetricsServiceRequest) error { n++; return nil }); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return n
}

// fileSize is path's size, 0 when it does not exist.
func fileSize(path string) int64 {
	st, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return st.Size()
}

// replaySpans replays a spool file into a new receiver and returns how
// many spans it received.
func replaySpans(t *testing.T, path string) int {
	t.Helper()
	t.Setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "60000") // a live receiver on a loaded machine
	rcv, err := otlptest.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer rcv.Close()
	if code, o, e := ortel(t, "replay", "--otlp-endpoint", "http://"+rcv.Endpoint(), path); code != exitOK {
		t.Fatalf("replay: exit %d\n%s%s", code, o, e)
	}
	return len(rcv.Spans())
}

// noRepeatedLines fails when a line of out is printed twice: each distinct
// error is printed once, with a count.
func noRepeatedLines(t *testing.T, out string) {
	t.Helper()
	seen := map[string]bool{}
	for _, l := range strings.Split(out, "\n") {
		if l != "" && seen[l] {
			t.Errorf("line printed more than once: %s\n%s", l, out)
		}
		seen[l] = true
	}
}

// TestAgentRecoversFromAFullDisk runs the agent writing its metrics to
// files on a small real file system, fills it, waits until an export met
// the full disk, frees it: the agent writes again (it never stops after
// one ENOSPC), and the file holds only whole records.
func TestAgentRecoversFromAFullDisk(t *testing.T) {
	t.Setenv("ORTEL_HOST_ROOT", hostRoot(t, false))
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	dir := testenv.Tmpfs(t, 1<<20)
	out := filepath.Join(dir, "agent")
	metrics := filepath.Join(out, "metrics.jsonl")
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var stderr testenv.SyncBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, &env{stdout: io.Discard, stderr: &stderr}, []string{"agent", "--interval", "20ms", "--rotate-mb", "0", "--out", out})
	}()
	waitFor(t, "the agent's first export", func() bool { return fileSize(metrics) > 0 })
	fill := testenv.Fill(t, dir)
	waitFor(t, "an export to meet the full disk", func() bool { return strings.Contains(stderr.String(), "no space left on device") })
	before := metricRecords(t, metrics)
	if err := os.Remove(fill); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the agent to write again once space was freed", func() bool { return metricRecords(t, metrics) >= before+3 })
	cancel()
	if code := <-done; code != exitOK {
		t.Errorf("agent: exit %d, want 0 (its last exports went out)\n%s", code, stderr.String())
	}
	metricRecords(t, metrics) // every record whole
}

// TestRestartedAgentRepairsItsFile: an agent killed in the middle of a
// write leaves a cut last record; the next agent removes it (and says so)
// instead of appending its records to the cut line, and ortel replay then
// sends every record, none of them damaged.
func TestRestartedAgentRepairsItsFile(t *testing.T) {
	t.Setenv("ORTEL_HOST_ROOT", hostRoot(t, false))
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "")
	out := t.TempDir()
	agent := func() string {
		code, _, stderr := ortel(t, "agent", "--interval", "50ms", "--duration", "200ms", "--out", out)
		if code != exitOK {
			t.Fatalf("agent: exit %d\n%s", code, stderr)
		}
		return stderr
	}
	agent()
	metrics := filepath.Join(out, "metrics.jsonl")
	b, err := os.ReadFile(metrics)
	if err != nil {
		t.Fatal(err)
	}
	first := metricRecords(t, metrics)
	// The kill: half of a record, no line end.
	lines := bytes.SplitAfter(b, []byte("\n"))
	cut := lines[0][:len(lines[0])/2]
	f, err := os.OpenFile(metrics, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(cut); err != nil {
		t.Fatal(err)
	}
	f.Close()

	stderr := agent()
	if want := metrics + ": removed an incomplete last record of " + strconv.Itoa(len(cut)) + " bytes"; !strings.Contains(stderr, want) {
		t.Errorf("the restarted agent does not say it removed the cut record (%q):\n%s", want, stderr)
	}
	total := metricRecords(t, metrics) // fails on a damaged record
	if total <= first {
		t.Fatalf("%d records after the restart, %d before", total, first)
	}
	rcv, err := otlptest.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer rcv.Close()
	code, stdout, rstderr := ortel(t, "replay", "--otlp-endpoint", "http://"+rcv.Endpoint(), metrics)
	if _, got := rcv.Requests(); code != exitOK || got != total || strings.Contains(rstderr, "damaged") {
		t.Errorf("replay: exit %d, %d of %d records sent\n%s%s", code, got, total, stdout, rstderr)
	}
}

// TestBenchOnAFullDisk: a bench whose output folder is on a full disk,
// facing a dead collector, so neither the spool nor report.json can be
// written. It still prints its report, leaves no empty report.json, says
// why the file is missing and what became of the telemetry, each line
// once, and exits 1.
func TestBenchOnAFullDisk(t *testing.T) {
	model := chainModel(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	t.Setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "300")
	dir := testenv.Tmpfs(t, 1<<20)
	out := filepath.Join(dir, "bench")
	if err := os.Mkdir(out, 0o755); err != nil {
		t.Fatal(err)
	}
	testenv.Fill(t, dir)
	code, stdout, stderr := ortel(t, "bench", model, "--runs", "300", "--warmup", "0", "--profile-runs", "0", "--no-hardware", "--quiet",
		"--out", out, "--otlp-endpoint", "http://"+closedPort(t))
	if code != exitFailure {
		t.Errorf("exit %d, want %d (the report file could not be written)", code, exitFailure)
	}
	if !strings.Contains(stdout, "latency     300 runs") || !strings.Contains(stdout, "report      not written") {
		t.Errorf("stdout lacks the report, or does not say report.json is missing:\n%s", stdout)
	}
	report := filepath.Join(out, "report.json")
	if _, err := os.Stat(report); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s exists after a failed write (an empty report.json is what must not be left): %v", report, err)
	}
	for _, want := range []string{
		"ortel bench: write report \"" + report + "\"",
		"no space left on device",
		"ortel bench: telemetry lost: traces: ",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	noRepeatedLines(t, stderr)
	spool := filepath.Join(out, "spool")
	for _, f := range []string{"traces.jsonl", "metrics.jsonl"} {
		if b, err := os.ReadFile(filepath.Join(spool, f)); err == nil && len(b) > 0 && b[len(b)-1] != '\n' {
			t.Errorf("%s ends in a cut record", f)
		}
	}
}

// spooledLine reads "telemetry spooled: traces: N of M spans" from stderr.
var spooledLine = regexp.MustCompile(`telemetry spooled: traces: (\d+) of (\d+) spans`)

// TestBenchInterruptedFacingADeadCollector: SIGTERM (a real signal, to
// this process, caught as main catches it) during a bench whose collector
// is dead: the bench stops, says it was stopped and that no report was
// written, how many spans and metric exports it spooled and how to send
// them, and exits 1; ortel replay then delivers exactly the spans it said
// it spooled.
func TestBenchInterruptedFacingADeadCollector(t *testing.T) {
	model := chainModel(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	t.Setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "300")
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "100")
	out := t.TempDir()
	spool := filepath.Join(out, "spool")
	ctx, stop := signal.NotifyContext(t.Context(), syscall.SIGTERM)
	defer stop()
	ended := make(chan struct{})
	go func() {
		deadline := time.Now().Add(time.Minute)
		for fileSize(filepath.Join(spool, "traces.jsonl")) == 0 {
			select {
			case <-ended:
				return
			case <-time.After(10 * time.Millisecond):
			}
			if time.Now().After(deadline) {
				return
			}
		}
		_ = syscall.Kill(os.Getpid(), syscall.SIGTERM)
	}()
	var stdout, stderr bytes.Buffer
	code := run(ctx, &env{stdout: &stdout, stderr: &stderr}, []string{"bench", model, "--duration", "5m", "--warmup", "0", "--profile-runs", "0",
		"--no-hardware", "--quiet", "--out", out, "--otlp-endpoint", "http://" + closedPort(t)})
	close(ended)
	errs := stderr.String()
	if code != exitFailure {
		t.Errorf("exit %d, want %d", code, exitFailure)
	}
	for _, want := range []string{
		"ortel bench: stopped by a signal (terminated signal received) before the bench finished, so no report was written",
		"ortel bench: telemetry spooled: traces: ",
		"ortel bench: send the spooled telemetry when the collector is back: ortel replay " + spool,
	} {
		if !strings.Contains(errs, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errs)
		}
	}
	noRepeatedLines(t, errs)
	m := spooledLine.FindStringSubmatch(errs)
	if m == nil {
		t.Fatalf("no spooled count in:\n%s", errs)
	}
	spooled, _ := strconv.Atoi(m[1])

	if got := replaySpans(t, filepath.Join(spool, "traces.jsonl")); got != spooled {
		t.Errorf("replay delivered %d spans, the bench said it spooled %d", got, spooled)
	}
}

// TestImportIntoADeadCollectorGivesUpInTime: `ortel import` into a
// collector that accepts and never answers gives up on the spans after the
// export timeout, and then does not wait it out a second time for its
// metrics: they go to the spool at once (exit 1, the spans are its work).
func TestImportIntoADeadCollectorGivesUpInTime(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	t.Setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "4000")
	profile := gunzipTo(t, "../../instrument/profile/testdata/cls_2runs.json.gz", filepath.Join(t.TempDir(), "onnxruntime_profile__2026-11-22_10-31-07.json"))
	code, stdout, stderr := ortel(t, "import", "--out", t.TempDir(), "--otlp-endpoint", "http://"+blackHole(t), profile)
	if code != exitFailure {
		t.Fatalf("exit %d, want %d\n%s%s", code, exitFailure, stdout, stderr)
	}
	m := exitWait.FindStringSubmatch(stderr)
	if m == nil || !strings.Contains(stderr, "telemetry spooled: metrics:") || !strings.Contains(stderr, "ortel replay ") {
		t.Fatalf("stderr does not say the metrics were spooled, how to send them and how long the import waited at exit:\n%s", stderr)
	}
	// Spooling without a try takes milliseconds, trying again the whole
	// 4s: half of it is far above the first on any machine.
	if waited, _ := strconv.ParseFloat(m[1], 64); waited > 2 {
		t.Errorf("waited %.2fs at exit for a collector the spans already found dead (export timeout 4s): it tried again", waited)
	}
}

// exitWait reads "waited Xs at exit for the last exports".
var exitWait = regexp.MustCompile(`waited (\d+\.\d+)s at exit for the last exports`)

// TestSpoolMaxMB: bench with --spool-max-mb 1 facing a dead collector
// spools spans until the folder's bound, then drops and counts the rest:
// the spool never passes 1 MiB, spooled + dropped = ended in report.json
// (some of the dropped may also be what the exit had no time left to
// spool: the tiny model ends spans far faster than a loaded machine writes
// them), stderr says how many met the full spool, and replay delivers
// exactly the spooled ones. A bound of 0 is a usage error.
func TestSpoolMaxMB(t *testing.T) {
	model := chainModel(t)
	if code, _, stderr := ortel(t, "bench", model, "--spool-max-mb", "0", "--out", t.TempDir()); code != exitUsage || !strings.Contains(stderr, "--spool-max-mb") {
		t.Errorf("--spool-max-mb 0: exit %d, want %d naming the flag\n%s", code, exitUsage, stderr)
	}
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	t.Setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "300")
	t.Setenv("OTEL_METRIC_EXPORT_INTERVAL", "3600000")
	out := t.TempDir()
	code, stdout, stderr := ortel(t, "bench", model, "--runs", "8000", "--warmup", "0", "--profile-runs", "0", "--no-hardware", "--quiet",
		"--spool-max-mb", "1", "--out", out, "--otlp-endpoint", "http://"+closedPort(t))
	if code != exitTelemetryLost {
		t.Fatalf("exit %d, want %d\n%s%s", code, exitTelemetryLost, stdout, stderr)
	}
	spool := filepath.Join(out, "spool")
	if n := fileSize(filepath.Join(spool, "traces.jsonl")) + fileSize(filepath.Join(spool, "metrics.jsonl")); n > 1<<20 || n == 0 {
		t.Errorf("the spool holds %d bytes, want some and at most 1 MiB", n)
	}
	b, err := os.ReadFile(filepath.Join(out, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rep struct{ Telemetry report.Telemetry }
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	tel := rep.Telemetry
	if tel.SpansSpooled == 0 || tel.SpansDropped == 0 || tel.SpansExported != 0 {
		t.Fatalf("report telemetry %+v, want spans spooled up to the bound and the rest dropped", tel)
	}
	m := spooledLine.FindStringSubmatch(stderr)
	if m == nil {
		t.Fatalf("no spooled count in:\n%s", stderr)
	}
	ended, _ := strconv.ParseInt(m[2], 10, 64)
	if tel.SpansSpooled+tel.SpansDropped != ended {
		t.Errorf("%d spooled + %d dropped != %d spans ended", tel.SpansSpooled, tel.SpansDropped, ended)
	}
	if !strings.Contains(stderr, " met a full spool") {
		t.Errorf("stderr does not say how many dropped spans met a full spool:\n%s", stderr)
	}
	if got := int64(replaySpans(t, filepath.Join(spool, "traces.jsonl"))); got != tel.SpansSpooled {
		t.Errorf("replay delivered %d spans, report.json counts %d spooled", got, tel.SpansSpooled)
	}
}
