package telemetry

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"

	"github.com/ortel-dev/ortel/semconv"
	"github.com/ortel-dev/ortel/test/otlptest"
)

func deadAddr(t *testing.T) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := lis.Addr().String()
	lis.Close()
	return addr
}

// TestSpoolThenReplayExactlyOnce: with the collector down, spans and
// metrics go to the spool, not lost; replay sends every record to a live
// receiver (traces over gRPC, metrics over HTTP), and a second replay, or
// one after a failed attempt, sends nothing twice.
func TestSpoolThenReplayExactlyOnce(t *testing.T) {
	cleanEnv(t)
	t.Setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "300")
	spoolDir := filepath.Join(t.TempDir(), "spool")
	ctx := testContext(t)
	tel, err := Setup(ctx, Config{OutputDir: t.TempDir(), Endpoint: "http://" + deadAddr(t), SpoolDir: spoolDir})
	if err != nil {
		t.Fatal(err)
	}
	parent, child := emit(t, tel)
	if err := tel.Shutdown(ctx); err != nil {
		t.Errorf("shutdown: %v", err)
	}
	st := tel.Stats()
	if st.SpansSpooled != 2 || st.SpansDropped != 0 || st.SpansExported != 0 || st.MetricExportsSpooled < 1 {
		t.Fatalf("stats = %+v, want 2 spans and the metrics spooled, nothing dropped", st)
	}
	if lost := st.Lost(); lost != nil {
		t.Errorf("Lost() = %q, want nothing: it is all in the spool", lost)
	}
	if sp := st.Spooled(); len(sp) != 2 {
		t.Errorf("Spooled() = %q, want a line per signal", sp)
	}
	files := tel.SpoolFiles()
	if len(files) != 2 {
		t.Fatalf("spool files = %v", files)
	}

	rcv := startBoth(t)
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://"+rcv.Endpoint())
	t.Setenv("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "http://"+rcv.HTTPEndpoint()+"/v1/metrics")
	t.Setenv("OTEL_EXPORTER_OTLP_METRICS_PROTOCOL", "http/protobuf")
	r, err := Resolve(Config{})
	if err != nil {
		t.Fatal(err)
	}
	// A collector that refuses: nothing is marked sent.
	rcv.SetFailure(codes.Unavailable)
	for _, f := range files {
		res, err := Replay(ctx, r, f)
		if err == nil || res.Sent != 0 {
			t.Fatalf("replay of %s to a refusing collector: sent %d, err %v; want an error and nothing sent", f, res.Sent, err)
		}
	}
	rcv.SetFailure(codes.OK)
	total := 0
	for _, f := range files {
		res, err := Replay(ctx, r, f)
		if err != nil {
			t.Fatal(err)
		}
		if res.Sent == 0 || res.Earlier != 0 {
			t.Errorf("%s: %+v, want every record sent now", f, res)
		}
		total += res.Sent
	}
	spans := rcv.Spans()
	checkParentage(t, spans, parent, child)
	if len(spans) != 2 || len(rcv.Metric("test.runs")) == 0 {
		t.Fatalf("received %d spans and %d test.runs metrics, want 2 and some", len(spans), len(rcv.Metric("test.runs")))
	}
	if _, m := rcv.HTTPAccepted(); m == 0 {
		t.Error("metrics did not arrive over HTTP")
	}
	// The outage is visible downstream once the spool is replayed.
	for _, name := range []string{semconv.OrtelTelemetrySpansSpooledName, semconv.OrtelTelemetryMetricExportsSpooledName} {
		if len(rcv.Metric(name)) == 0 {
			t.Errorf("the replayed metrics lack %s", name)
		}
	}
	// Again: nothing is sent twice.
	traces, metrics := len(rcv.TraceRequests()), len(rcv.ResourceMetrics())
	for _, f := range files {
		res, err := Replay(ctx, r, f)
		if err != nil {
			t.Fatal(err)
		}
		if res.Sent != 0 || res.Earlier == 0 {
			t.Errorf("second replay of %s: %+v, want nothing sent", f, res)
		}
	}
	if len(rcv.TraceRequests()) != traces || len(rcv.ResourceMetrics()) != metrics {
		t.Errorf("a second replay sent records again")
	}
	if total != traces+metrics {
		t.Errorf("replay said it sent %d records, the receiver got %d", total, traces+metrics)
	}
}

// TestSpoolIsBounded: past SpoolMaxBytes, failed exports are dropped and
// counted, not written.
func TestSpoolIsBounded(t *testing.T) {
	cleanEnv(t)
	t.Setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "300")
	spoolDir := filepath.Join(t.TempDir(), "spool")
	ctx := testContext(t)
	tel, err := Setup(ctx, Config{OutputDir: t.TempDir(), Endpoint: "http://" + deadAddr(t), SpoolDir: spoolDir, SpoolMaxBytes: 16})
	if err != nil {
		t.Fatal(err)
	}
	emit(t, tel)
	_ = tel.Shutdown(ctx)
	st := tel.Stats()
	if st.SpansSpooled != 0 || st.SpansDropped != 2 {
		t.Errorf("stats = %+v, want the 2 spans dropped", st)
	}
	lost := strings.Join(st.Lost(), "\n")
	if !strings.Contains(lost, "the spool is full") {
		t.Errorf("Lost() does not say the spool was full:\n%s", lost)
	}
	if _, err := os.Stat(filepath.Join(spoolDir, TracesFileName)); err == nil {
		t.Error("a spool file was written past its bound")
	}
}

// TestSpoolFillsItsBound: batches are spooled until the next would pass
// the bound, then dropped and counted (spooled + met a full spool =
// ended), the folder never passes the bound, and replay sends exactly the
// spans counted as spooled. A second run into the same folder counts what
// the first left against the bound; once a replay sent it, the space is
// reclaimed and spooling goes on.
func TestSpoolFillsItsBound(t *testing.T) {
	cleanEnv(t)
	t.Setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "200")
	spoolDir := filepath.Join(t.TempDir(), "spool")
	ctx := testContext(t)
	const bound = 24 << 10
	dead := "http://" + deadAddr(t)
	outage := func(batches int) Stats {
		tel, err := Setup(ctx, Config{OutputDir: t.TempDir(), Endpoint: dead, SpoolDir: spoolDir, SpoolMaxBytes: bound, MetricInterval: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		tr := tel.TracerProvider.Tracer("bound")
		for range batches {
			for range 10 {
				_, s := tr.Start(ctx, "run")
				s.End()
			}
			_ = tel.TracerProvider.ForceFlush(ctx)
		}
		_ = tel.Shutdown(ctx)
		return tel.Stats()
	}
	spoolSize := func() int64 {
		var n int64
		for _, f := range []string{TracesFileName, MetricsFileName} {
			if st, err := os.Stat(filepath.Join(spoolDir, f)); err == nil {
				n += st.Size()
			}
		}
		return n
	}
	st := outage(40)
	if st.SpansSpooled == 0 || st.SpansSpoolFull == 0 || st.SpansSpooled+st.SpansSpoolFull != st.SpansEnded || st.SpansDropped != st.SpansSpoolFull {
		t.Fatalf("stats %+v: want some spooled, the rest counted as meeting a full spool, spooled + full spool = ended", st)
	}
	if lost := strings.Join(st.Lost(), "\n"); !strings.Contains(lost, fmt.Sprintf("%d met a full spool", st.SpansSpoolFull)) {
		t.Errorf("Lost() = %q, want the spans that met a full spool counted", lost)
	}
	if n := spoolSize(); n > bound {
		t.Errorf("the spool holds %d bytes, over its bound of %d", n, bound)
	}

	again := outage(40) // the first run's spool still fills the bound
	if again.SpansSpooled != 0 || again.SpansSpoolFull != again.SpansEnded {
		t.Errorf("second run before a replay: %+v, want nothing spooled: the folder is full", again)
	}

	rcv := startReceiver(t)
	r := replayTo(t, rcv)
	for _, f := range []string{TracesFileName, MetricsFileName} {
		if _, err := Replay(ctx, r, filepath.Join(spoolDir, f)); err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
	}
	if got := int64(len(rcv.Spans())); got != st.SpansSpooled {
		t.Errorf("replay sent %d spans, the run counted %d spooled", got, st.SpansSpooled)
	}
	// The replayed spool is reclaimed when it opens: a run that fits the
	// bound loses nothing, its first batch included.
	third := outage(5)
	if third.SpansSpooled != 50 || third.SpansSpoolFull != 0 {
		t.Errorf("third run after the replay: %+v, want its 50 spans spooled, none meeting a full spool", third)
	}
	if n := spoolSize(); n > bound {
		t.Errorf("the spool holds %d bytes, over its bound of %d", n, bound)
	}
}

func TestReplayBadInput(t *testing.T) {
	cleanEnv(t)
	dir := t.TempDir()
	r, err := resolve(Config{Endpoint: "http://127.0.0.1:1"}, mapEnv(nil))
	if err != nil {
		t.Fatal(err)
	}
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct{ path, want string }{
		{filepath.Join(dir, "missing.jsonl"), "no such file"},
		{write("other.jsonl", `{"hello": 1}`+"\n"), "is an OTLP/JSON traces or metrics request"},
	} {
		if _, err := Replay(t.Context(), r, tc.path); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Replay(%s) = %v, want %q", tc.path, err, tc.want)
		}
	}
	// A file with no record yet (the agent's traces.jsonl): nothing to send.
	if res, err := Replay(t.Context(), r, write("empty.jsonl", "\n\n")); err != nil || res.Sent != 0 || res.Signal != "" {
		t.Errorf("Replay of an empty file = %+v, %v; want nothing sent and no error", res, err)
	}
	fileMode, _ := resolve(Config{}, mapEnv(nil))
	p := write("traces.jsonl", `{"resourceSpans":[]}`+"\n")
	if _, err := Replay(t.Context(), fileMode, p); err == nil || !strings.Contains(err.Error(), "set OTEL_EXPORTER_OTLP_ENDPOINT") {
		t.Errorf("replay without an endpoint: %v", err)
	}
}

// TestSpoolWhenShutdownGivesUp: a frozen collector (accepts, never
// answers) and a shutdown bound shorter than the export timeout: the
// export in flight is abandoned and what is still queued is not tried, and
// all of it goes to the spool, however long writing the spool takes.
//
// A spool written slowly is a loaded machine: encoding a batch as OTLP/JSON
// costs about 0.1 ms a span here (0.6 ms under -race), and a bench with a
// busy CPU (load 10-20) took 5.6 s to spool its last 512 spans. Shutdown's
// bound is for the collector; the spool is local work, bounded by the
// queue, so Shutdown waits for it instead of dropping what a fixed grace
// did not see written. The slow case holds the first trace batch's write
// back for 3 s, far longer than the shutdown bound plus the 1 s grace a
// spool once had; a machine slower than this test expects only makes the
// write later, never the outcome different. The last case calls Shutdown
// with a context that has already ended: it must return all the same, with
// both spans spooled.
func TestSpoolWhenShutdownGivesUp(t *testing.T) {
	for _, tc := range []struct {
		name     string
		slow     time.Duration // how long the first trace batch takes to reach the spool
		canceled bool          // Shutdown's context has ended before the call
	}{
		{"spool written at once", 0, false},
		{"spool written slower than any grace", 3 * time.Second, false},
		// The SDK then never calls the span processor's Shutdown: nothing
		// would drain the queue nor close the exporter Shutdown waits for.
		{"context ended before Shutdown", 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cleanEnv(t)
			t.Setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "30000")
			t.Setenv("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", "1") // two batches: one in flight, one queued
			var once sync.Once
			testSpoolHook = func(m proto.Message) {
				if _, traces := m.(*coltracepb.ExportTraceServiceRequest); traces {
					once.Do(func() { time.Sleep(tc.slow) })
				}
			}
			t.Cleanup(func() { testSpoolHook = nil })
			rcv := startBoth(t)
			rcv.SetDelay(time.Hour)
			ctx := testContext(t)
			tel, err := Setup(ctx, Config{OutputDir: t.TempDir(), Endpoint: "http://" + rcv.Endpoint(), SpoolDir: t.TempDir(), ShutdownTimeout: 300 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			emit(t, tel)
			shutdownCtx, cancel := context.WithCancel(ctx)
			if tc.canceled {
				cancel()
			}
			defer cancel()
			returned := make(chan struct{})
			go func() {
				defer close(returned)
				_ = tel.Shutdown(shutdownCtx)
			}()
			select {
			case <-returned:
			case <-ctx.Done():
				t.Fatal("Shutdown has not returned in 60s: it waits for an exporter nothing shuts down")
			}
			if st := tel.Stats(); st.SpansSpooled != 2 || st.SpansDropped != 0 {
				t.Errorf("stats = %+v, want both spans spooled", st)
			}
			if tc.slow > 0 && tel.ShutdownTook() < tc.slow {
				t.Errorf("Shutdown returned after %s, before the spool was written (%s)", tel.ShutdownTook(), tc.slow)
			}
		})
	}
}

// TestOutageLosesNothingAfterReplay: a collector that goes away mid-run
// and comes back on the same address, over gRPC and over HTTP. Spans sent
// before the outage arrive at once, those of the outage are spooled, those
// after arrive again; after a replay of the spool every ended span was
// received exactly once.
func TestOutageLosesNothingAfterReplay(t *testing.T) {
	for _, protocol := range []string{ProtocolGRPC, ProtocolHTTP} {
		t.Run(protocol, func(t *testing.T) {
			cleanEnv(t)
			t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", protocol)
			// An export to the live receiver that outlived this timeout
			// would be spooled although received, and received twice
			// after the replay: 2s is far beyond a healthy local export
			// on a loaded machine. (Over gRPC one export of the outage
			// waits it out, so it is not longer.)
			t.Setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "2000")
			ctx := testContext(t)
			rcv := startBoth(t)
			grpcAddr, httpAddr := rcv.Endpoint(), rcv.HTTPEndpoint()
			addr := grpcAddr
			if protocol == ProtocolHTTP {
				addr = httpAddr
			}
			spoolDir := t.TempDir()
			tel, err := Setup(ctx, Config{OutputDir: t.TempDir(), Endpoint: "http://" + addr, SpoolDir: spoolDir, MetricInterval: time.Hour})
			if err != nil {
				t.Fatal(err)
			}
			tr := tel.TracerProvider.Tracer("outage")
			ended := map[string]bool{}
			phase := func(n int) {
				for range n {
					_, s := tr.Start(ctx, "run")
					s.End()
					ended[s.SpanContext().SpanID().String()] = true
				}
				_ = tel.TracerProvider.ForceFlush(ctx)
			}
			phase(50) // collector up
			_ = rcv.Close()
			phase(70) // collector down: spooled
			rcv2, err := otlptest.Start(otlptest.WithAddress(grpcAddr), otlptest.WithHTTP(httpAddr))
			if err != nil {
				t.Skipf("cannot listen again on the same port: %v", err)
			}
			t.Cleanup(func() { _ = rcv2.Close() })
			phase(30) // collector back
			if err := tel.Shutdown(ctx); err != nil {
				t.Errorf("shutdown: %v", err)
			}
			st := tel.Stats()
			if st.SpansDropped != 0 || st.SpansSpooled == 0 || st.SpansEnded != 150 {
				t.Fatalf("stats = %+v, want 150 ended, some spooled, none dropped", st)
			}
			r, err := Resolve(Config{Endpoint: "http://" + addr})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := Replay(ctx, r, filepath.Join(spoolDir, TracesFileName)); err != nil {
				t.Fatal(err)
			}
			got := map[string]int{}
			for _, s := range append(rcv.Spans(), rcv2.Spans()...) {
				got[s.SpanID()]++
			}
			for id := range ended {
				if got[id] != 1 {
					t.Errorf("span %s received %d times, want once", id, got[id])
				}
			}
			if len(got) != len(ended) {
				t.Errorf("received %d distinct spans, %d ended", len(got), len(ended))
			}
		})
	}
}

// FuzzReplay: any file content, and any progress file beside it, makes
// Replay send or fail with an error naming the file, never panic; the
// progress file it leaves never counts more records than the file holds
// past where it started.
func FuzzReplay(f *testing.F) {
	f.Add([]byte(`{"resourceSpans":[]}`+"\n"), []byte(nil))
	f.Add([]byte(`{"resourceMetrics":[{}]}`+"\n"+`{"resourceMetrics":`), []byte("1\n"))
	f.Add([]byte("\xef\xbb\xbf\n\n{\"resourceSpans\":[{\"scopeSpans\":[{}]}]}\r\n"), []byte(`{"version":2,"records":1,"offset":3}`))
	f.Add([]byte(`{"hello":1}`), []byte(`{"version":2,"first_record_sha256":"x","records":-1}`))
	f.Fuzz(func(t *testing.T, body, prog []byte) {
		dir := t.TempDir()
		p := filepath.Join(dir, "x.jsonl")
		if err := os.WriteFile(p, body, 0o644); err != nil {
			t.Fatal(err)
		}
		if prog != nil {
			if err := os.WriteFile(p+ProgressSuffix, prog, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		before, _ := readProgress(p)
		r, err := resolve(Config{Endpoint: "http://127.0.0.1:1", ExportTimeout: time.Millisecond}, mapEnv(nil))
		if err != nil {
			t.Fatal(err)
		}
		res, err := Replay(t.Context(), r, p)
		if err != nil && !strings.Contains(err.Error(), p) && !strings.Contains(err.Error(), "send to") {
			t.Fatalf("error does not name the file: %v", err)
		}
		after, _ := readProgress(p)
		if after == nil || before != nil && *after == *before {
			return // no progress written now
		}
		if after.Records != res.Earlier+res.Sent+res.Damaged || after.Offset > int64(len(body)) {
			t.Fatalf("progress %+v after %+v of a %d-byte file", after, res, len(body))
		}
	})
}
