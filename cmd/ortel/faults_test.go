package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ortel-dev/ortel/internal/report"
	"github.com/ortel-dev/ortel/test/otlptest"
	"github.com/ortel-dev/ortel/test/testenv"
)

// TestBenchOnVADLosesNothingInAnOutage runs a Silero VAD bench exporting
// over gRPC to a receiver that is killed, restarted on the same port, then
// frozen, while the bench runs. The fault's timing only shapes the outage;
// what is asserted does not depend on it: no span dropped, the outage's
// spans spooled, and after `ortel replay` every span the bench ended was
// received.
func TestBenchOnVADLosesNothingInAnOutage(t *testing.T) {
	testenv.RequireORT(t)
	testenv.Model(t, "silero_vad_v5.onnx")
	rcv, err := otlptest.Start()
	if err != nil {
		t.Fatal(err)
	}
	addr := rcv.Endpoint()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
	t.Setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "1000")
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "200")
	t.Setenv("OTEL_METRIC_EXPORT_INTERVAL", "500")

	// The fault, driven from the first export that arrives.
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	restarted := make(chan *otlptest.Receiver, 1)
	faultDone := make(chan struct{})
	go func() {
		defer close(faultDone)
		defer close(restarted)
		if rcv.WaitRequests(ctx, 1, 0) != nil {
			return
		}
		pause := func(d time.Duration) bool {
			select {
			case <-time.After(d):
				return true
			case <-ctx.Done():
				return false
			}
		}
		pause(500 * time.Millisecond)
		_ = rcv.Close() // killed
		if !pause(1500 * time.Millisecond) {
			return
		}
		r2, err := otlptest.Start(otlptest.WithAddress(addr))
		if err != nil {
			t.Errorf("restart the receiver on %s: %v", addr, err)
			return
		}
		restarted <- r2
		pause(500 * time.Millisecond)
		r2.SetDelay(time.Hour) // frozen
		pause(1500 * time.Millisecond)
		r2.SetDelay(0)
	}()

	out := t.TempDir()
	code, stdout, stderr := ortel(t, "bench", "silero-vad", "--duration", "6s", "--warmup", "20", "--profile-runs", "2",
		"--no-hardware", "--quiet", "--out", out, "--otlp-endpoint", "http://"+addr)
	cancel()
	<-faultDone
	var rcv2 *otlptest.Receiver
	for r := range restarted {
		rcv2 = r
		t.Cleanup(func() { _ = r.Close() })
	}
	if code != exitTelemetryLost && code != exitOK {
		t.Fatalf("bench: exit %d\n%s\n%s", code, stdout, stderr)
	}
	rep, err := report.Read(filepath.Join(out, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	tel := rep.Telemetry
	if tel.SpansDropped != 0 {
		t.Errorf("%d spans dropped in the outage, want 0 (spooled instead):\n%s", tel.SpansDropped, stderr)
	}
	if tel.SpansSpooled == 0 || rcv2 == nil {
		t.Fatalf("the outage did not happen during the bench (spooled %d): the test proves nothing\n%s", tel.SpansSpooled, stderr)
	}
	// The 1s export timeout above bounds how long the bench waits for the
	// frozen receiver; the replay sends to a live one, and each of its
	// requests (up to 512 spans, encoded and decoded under -race in this
	// process) took over 1s on a loaded machine: its own timeout, far
	// above that, keeps the replay about what it sends.
	code, stdout, stderr = ortel(t, "replay", "--export-timeout", "2m", "--otlp-endpoint", "http://"+addr, filepath.Join(out, "spool"))
	if code != 0 {
		t.Fatalf("replay: exit %d\n%s%s", code, stdout, stderr)
	}
	seen := map[string]int{}
	for _, s := range append(rcv.Spans(), rcv2.Spans()...) {
		if s.ServiceName() == "ortel" {
			seen[s.SpanID()]++
		}
	}
	ended := tel.SpansExported + tel.SpansSpooled
	if int64(len(seen)) != ended {
		t.Errorf("received %d distinct spans after replay, the bench ended %d (%d exported, %d spooled)", len(seen), ended, tel.SpansExported, tel.SpansSpooled)
	}
	dup := 0
	for _, n := range seen {
		dup += n - 1
	}
	t.Logf("%d spans ended, %d spooled during the outage, all received after replay (%d received twice: sent, then their answer lost to the kill)",
		ended, tel.SpansSpooled, dup)
	if !strings.Contains(stdout, "traces.jsonl: sent ") {
		t.Errorf("replay output:\n%s", stdout)
	}
}
