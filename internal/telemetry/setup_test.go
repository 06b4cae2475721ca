package telemetry

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/trace"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/grpc/codes"

	"github.com/ortel-dev/ortel/internal/telemetry/otlpjson"
	"github.com/ortel-dev/ortel/semconv"
	"github.com/ortel-dev/ortel/test/otlptest"
)

// cleanEnv unsets every OTEL_* variable of the test process for the test,
// so the machine's environment cannot change what the test checks.
func cleanEnv(t *testing.T) {
	t.Helper()
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "OTEL_") {
			t.Setenv(k, "")
		}
	}
}

func startReceiver(t *testing.T) *otlptest.Receiver {
	t.Helper()
	r, err := otlptest.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	return r
}

// readSpansFile returns every span of a traces.jsonl file, flattened.
func readSpansFile(t *testing.T, path string) (spans []otlptest.Span, lines int) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	err = otlpjson.ReadTraces(f, func(req *coltracepb.ExportTraceServiceRequest) error {
		lines++
		for _, rs := range req.GetResourceSpans() {
			for _, ss := range rs.GetScopeSpans() {
				for _, s := range ss.GetSpans() {
					spans = append(spans, otlptest.Span{Resource: rs.GetResource(), Scope: ss.GetScope(), Span: s})
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	return spans, lines
}

// emit ends a parent and a child span and adds 5 to a counter.
func emit(t *testing.T, tel *Telemetry) (parent, child trace.Span) {
	t.Helper()
	ctx := t.Context()
	tr := tel.TracerProvider.Tracer("github.com/ortel-dev/ortel/internal/telemetry/test")
	pctx, parent := tr.Start(ctx, "ortel.stage")
	_, child = tr.Start(pctx, "onnxruntime.run")
	child.End()
	parent.End()
	c, err := tel.MeterProvider.Meter("test").Int64Counter("test.runs", metric.WithUnit("{run}"))
	if err != nil {
		t.Fatal(err)
	}
	c.Add(ctx, 5)
	return parent, child
}

// checkParentage checks the two spans of emit arrived, linked.
func checkParentage(t *testing.T, spans []otlptest.Span, parent, child trace.Span) {
	t.Helper()
	p, ok := otlptest.SpanByID(spans, parent.SpanContext().SpanID().String())
	if !ok {
		t.Fatalf("parent span missing from %d spans", len(spans))
	}
	c, ok := otlptest.SpanByID(spans, child.SpanContext().SpanID().String())
	if !ok {
		t.Fatalf("child span missing from %d spans", len(spans))
	}
	if c.ParentSpanID() != p.SpanID() || c.TraceID() != p.TraceID() {
		t.Errorf("child parent/trace = %s/%s, want %s/%s", c.ParentSpanID(), c.TraceID(), p.SpanID(), p.TraceID())
	}
	if p.ParentSpanID() != "" {
		t.Errorf("parent has a parent: %s", p.ParentSpanID())
	}
	if p.GetName() != "ortel.stage" || c.GetName() != "onnxruntime.run" {
		t.Errorf("names = %q, %q", p.GetName(), c.GetName())
	}
}

func TestSetupFileMode(t *testing.T) {
	cleanEnv(t)
	t.Setenv("OTEL_RESOURCE_ATTRIBUTES", "deployment.environment.name=test")
	ctx := testContext(t)
	dir := filepath.Join(t.TempDir(), "out")
	tel, err := Setup(ctx, Config{OutputDir: dir, ServiceName: "svc-file", ServiceVersion: "1.2.3"})
	if err != nil {
		t.Fatal(err)
	}
	if tel.Resolved.Mode != ModeFile {
		t.Fatalf("mode = %s, want file", tel.Resolved.Mode)
	}
	wantFiles := []string{filepath.Join(dir, "traces.jsonl"), filepath.Join(dir, "metrics.jsonl")}
	if got := tel.Files(); !slices.Equal(got, wantFiles) {
		t.Errorf("Files() = %v, want %v", got, wantFiles)
	}
	parent, child := emit(t, tel)
	if err := tel.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}

	spans, _ := readSpansFile(t, wantFiles[0])
	if len(spans) != 2 {
		t.Fatalf("traces file holds %d spans, want 2", len(spans))
	}
	checkParentage(t, spans, parent, child)
	res := spans[0].Resource.GetAttributes()
	strAttrs := map[string]string{
		"service.name":                "svc-file",
		"service.version":             "1.2.3",
		"deployment.environment.name": "test",
		"host.arch":                   map[string]string{"amd64": "amd64", "arm64": "arm64"}[runtime.GOARCH],
		"os.type":                     runtime.GOOS,
		"process.runtime.name":        "go",
		"process.runtime.version":     runtime.Version(),
		"telemetry.sdk.language":      "go",
		"telemetry.sdk.name":          "opentelemetry",
	}
	for k, want := range strAttrs {
		if got, ok := otlptest.AttrString(res, k); !ok || (want != "" && got != want) {
			t.Errorf("resource %s = %q (present %v), want %q", k, got, ok, want)
		}
	}
	for _, k := range []string{"host.name", "os.description", "process.executable.name", "telemetry.sdk.version"} {
		if v, ok := otlptest.AttrString(res, k); !ok || v == "" {
			t.Errorf("resource lacks %s", k)
		}
	}
	if pid, ok := otlptest.AttrInt(res, "process.pid"); !ok || pid != int64(os.Getpid()) {
		t.Errorf("process.pid = %d, want %d", pid, os.Getpid())
	}
	for _, k := range []string{"process.command_args", "process.command_line", "process.owner"} {
		if _, ok := otlptest.Attr(res, k); ok {
			t.Errorf("resource has %s, which can hold credentials", k)
		}
	}

	metrics := readMetricsFile(t, wantFiles[1])
	var runs int64 = -1
	for _, req := range metrics {
		for _, rm := range req.GetResourceMetrics() {
			if v, _ := otlptest.AttrString(rm.GetResource().GetAttributes(), "service.name"); v != "svc-file" {
				t.Errorf("metrics resource service.name = %q", v)
			}
			for _, sm := range rm.GetScopeMetrics() {
				for _, m := range sm.GetMetrics() {
					if m.GetName() == "test.runs" {
						runs = m.GetSum().GetDataPoints()[0].GetAsInt()
						if m.GetSum().GetAggregationTemporality() != 2 {
							t.Errorf("temporality = %v, want cumulative", m.GetSum().GetAggregationTemporality())
						}
					}
				}
			}
		}
	}
	if runs != 5 {
		t.Errorf("test.runs = %d, want 5", runs)
	}

	st := tel.Stats()
	if st.SpansEnded != 2 || st.SpansExported != 2 || st.SpansDropped != 0 || st.SpansPending != 0 {
		t.Errorf("Stats spans = %+v, want 2 ended, 2 exported", st)
	}
	if st.MetricExports < 1 || st.MetricExportFailures != 0 || st.LastError != nil {
		t.Errorf("Stats metrics = %+v", st)
	}
}

func TestSetupFileModeAppends(t *testing.T) {
	cleanEnv(t)
	ctx := testContext(t)
	dir := t.TempDir()
	var ids []string
	for range 2 {
		tel, err := Setup(ctx, Config{OutputDir: dir})
		if err != nil {
			t.Fatal(err)
		}
		p, _ := emit(t, tel)
		ids = append(ids, p.SpanContext().SpanID().String())
		if err := tel.Shutdown(ctx); err != nil {
			t.Fatal(err)
		}
	}
	spans, _ := readSpansFile(t, filepath.Join(dir, TracesFileName))
	if len(spans) != 4 {
		t.Fatalf("got %d spans after two runs, want 4 (the second run must append)", len(spans))
	}
	for _, id := range ids {
		if _, ok := otlptest.SpanByID(spans, id); !ok {
			t.Errorf("span %s of a run is missing", id)
		}
	}
}

func TestSetupFileModeBadOutputDir(t *testing.T) {
	cleanEnv(t)
	file := filepath.Join(t.TempDir(), "a-file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Setup(t.Context(), Config{OutputDir: file})
	if err == nil || !strings.Contains(err.Error(), file) {
		t.Fatalf("Setup with a file as OutputDir = %v, want an error naming it", err)
	}
}

func TestSetupOTLPMode(t *testing.T) {
	cert, _ := writeCert(t)
	tests := []struct {
		name string
		env  map[string]string
	}{
		{"plain", nil},
		{"gzip and headers", map[string]string{"OTEL_EXPORTER_OTLP_COMPRESSION": "gzip", "OTEL_EXPORTER_OTLP_HEADERS": "x-tenant=acme"}},
		// Setup passes every setting explicitly, so variables the exporters
		// would read on their own cannot redirect or re-secure them: left
		// alone, the exporters would send to the variables' endpoints, and
		// would use TLS because a certificate is set.
		{"exporters do not read the environment behind Setup's back", map[string]string{
			"OTEL_EXPORTER_OTLP_ENDPOINT":         "http://127.0.0.1:1",
			"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT":  "http://127.0.0.1:2",
			"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": "http://127.0.0.1:3",
			"OTEL_EXPORTER_OTLP_CERTIFICATE":      cert,
			"OTEL_EXPORTER_OTLP_TRACES_INSECURE":  "false",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cleanEnv(t)
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			r := startReceiver(t)
			ctx := testContext(t)
			tel, err := Setup(ctx, Config{Endpoint: "http://" + r.Endpoint(), ServiceName: "svc-otlp", MetricInterval: time.Hour})
			if err != nil {
				t.Fatal(err)
			}
			if tel.Resolved.Mode != ModeOTLP || tel.Files() != nil {
				t.Fatalf("mode %s, files %v", tel.Resolved.Mode, tel.Files())
			}
			parent, child := emit(t, tel)
			if err := tel.TracerProvider.ForceFlush(ctx); err != nil {
				t.Fatal(err)
			}
			if err := tel.MeterProvider.ForceFlush(ctx); err != nil {
				t.Fatal(err)
			}
			if err := r.WaitSpans(ctx, otlptest.HasSpans(2)); err != nil {
				t.Fatal(err)
			}
			if err := r.WaitMetrics(ctx, otlptest.HasMetric("test.runs")); err != nil {
				t.Fatal(err)
			}
			spans := r.Spans()
			checkParentage(t, spans, parent, child)
			if got := spans[0].ServiceName(); got != "svc-otlp" {
				t.Errorf("service.name = %q", got)
			}
			if got := r.Metric("test.runs")[0].GetSum().GetDataPoints()[0].GetAsInt(); got != 5 {
				t.Errorf("test.runs = %d", got)
			}
			if want := tt.env["OTEL_EXPORTER_OTLP_HEADERS"]; want != "" {
				if got := r.Headers().Get("x-tenant"); len(got) != 1 || got[0] != "acme" {
					t.Errorf("x-tenant header = %v", got)
				}
			}
			if err := tel.Shutdown(ctx); err != nil {
				t.Fatalf("Shutdown: %v", err)
			}
			if st := tel.Stats(); st.SpansEnded != 2 || st.SpansExported != 2 || st.SpansDropped != 0 || st.MetricExports < 1 {
				t.Errorf("Stats = %+v", st)
			}
		})
	}
}

// TestCollectorHangs: a collector that never answers must not slow
// span.End, must not stop Shutdown from returning on time, and every lost
// span must be counted. The collector hangs for an hour and the export
// timeout is an hour too, so only ShutdownTimeout can end Shutdown: that
// it returns is the check (a hang fails the test by its deadline), not how
// long it took.
func TestCollectorHangs(t *testing.T) {
	cleanEnv(t)
	t.Setenv("OTEL_BSP_MAX_QUEUE_SIZE", "256")
	t.Setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "3600000")
	r := startReceiver(t)
	r.SetDelay(time.Hour)
	ctx := testContext(t)
	const shutdownTimeout = 500 * time.Millisecond
	reader := sdkmetric.NewManualReader() // ortel's own telemetry metrics
	tel, err := Setup(ctx, Config{Endpoint: "http://" + r.Endpoint(), ShutdownTimeout: shutdownTimeout, MetricInterval: time.Hour,
		Readers: []sdkmetric.Reader{reader}})
	if err != nil {
		t.Fatal(err)
	}
	tr := tel.TracerProvider.Tracer("test")
	const n = 20000
	lat := make([]time.Duration, n)
	for i := range n {
		_, s := tr.Start(ctx, "op")
		start := time.Now()
		s.End()
		lat[i] = time.Since(start)
	}
	slices.Sort(lat)
	p50, p99, worst := lat[n/2], lat[n*99/100], lat[n-1]
	t.Logf("span.End with the collector hung: p50 %v, p99 %v, max %v over %d spans", p50, p99, worst, n)
	// A blocking queue would hold End for the export timeout (an hour)
	// once 256 spans are queued, and drop nothing; a dropping one never
	// waits on the exporter: the queue-full drops below show which.

	st := tel.Stats()
	if st.SpansEnded != n || st.SpansExported != 0 {
		t.Errorf("before Shutdown: %+v", st)
	}
	// At most the queue (256) and one batch in flight (256) are held.
	if st.SpansQueueFull < n-2*256 || st.SpansDropped != st.SpansQueueFull {
		t.Errorf("before Shutdown: %d queue-full drops, want >= %d (%+v)", st.SpansQueueFull, n-2*256, st)
	}
	if st.SpansEnded != st.SpansExported+st.SpansDropped+st.SpansPending {
		t.Errorf("counts do not add up: %+v", st)
	}
	// The same drops, exported as ortel.telemetry.spans.dropped{error.type=
	// queue_full}; with no spool, nothing is said to be spooled.
	self := selfMetrics(t, reader)
	if d := self[semconv.OrtelTelemetrySpansDroppedName]; d["queue_full"] != st.SpansQueueFull || d["export_failed"] != st.SpansDropped-st.SpansQueueFull {
		t.Errorf("%s = %v, want queue_full %d, export_failed %d (Stats %+v)", semconv.OrtelTelemetrySpansDroppedName, d, st.SpansQueueFull, st.SpansDropped-st.SpansQueueFull, st)
	}
	for _, name := range []string{semconv.OrtelTelemetrySpansSpooledName, semconv.OrtelTelemetryMetricExportsSpooledName} {
		if _, ok := self[name]; ok {
			t.Errorf("%s exported with no spool", name)
		}
	}

	if d := tel.ShutdownTook(); d != 0 {
		t.Errorf("ShutdownTook before Shutdown = %v, want 0", d)
	}
	start := time.Now()
	err = tel.Shutdown(ctx)
	t.Logf("Shutdown with the collector hung took %v (timeout %v): %v", time.Since(start), shutdownTimeout, err)
	// Only the shutdown deadline ends this Shutdown: it took at least that.
	if d := tel.ShutdownTook(); d < shutdownTimeout || d > time.Since(start) {
		t.Errorf("ShutdownTook = %v, want between the %v deadline and the %v Shutdown took", d, shutdownTimeout, time.Since(start))
	}
	if err == nil || !strings.Contains(err.Error(), strconv.Itoa(n)+" of "+strconv.Itoa(n)+" spans were dropped") {
		t.Errorf("Shutdown error = %v, want it to report %d of %d spans dropped", err, n, n)
	}
	st = tel.Stats()
	if st.SpansDropped != n || st.SpansExported != 0 || st.SpansPending != 0 {
		t.Errorf("after Shutdown: %+v, want all %d dropped", st, n)
	}
	if err2 := tel.Shutdown(ctx); err2 != err {
		t.Errorf("second Shutdown = %v, want the first's result", err2)
	}
}

// TestCollectorFailures: a collector that refuses, or is not there, makes
// exports fail; the failures are counted, the caller is not slowed, and a
// collector that comes back receives what follows.
func TestCollectorFailures(t *testing.T) {
	tests := []struct {
		name  string
		setup func(r *otlptest.Receiver)
		heal  bool
	}{
		{"refusing", func(r *otlptest.Receiver) { r.SetFailure(codes.Unavailable) }, true},
		{"down", func(r *otlptest.Receiver) { _ = r.Close() }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cleanEnv(t)
			// Give up retrying after 1s. The export after the collector
			// healed must succeed within it: 300ms was tight on a loaded
			// machine for a healthy export, and more only lengthens the
			// failing flushes, which retry until it passes.
			t.Setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "1000")
			r := startReceiver(t)
			tt.setup(r)
			ctx := testContext(t)
			tel, err := Setup(ctx, Config{Endpoint: "http://" + r.Endpoint(), ShutdownTimeout: 5 * time.Second, MetricInterval: time.Hour})
			if err != nil {
				t.Fatalf("Setup with the collector %s: %v", tt.name, err)
			}
			emit(t, tel)
			if err := tel.TracerProvider.ForceFlush(ctx); err == nil {
				t.Error("ForceFlush succeeded against a failing collector")
			}
			if err := tel.MeterProvider.ForceFlush(ctx); err == nil {
				t.Error("metric ForceFlush succeeded against a failing collector")
			}
			st := tel.Stats()
			if st.SpansEnded != 2 || st.SpansDropped != 2 || st.SpansExported != 0 || st.SpansQueueFull != 0 {
				t.Errorf("Stats spans = %+v, want 2 ended and dropped", st)
			}
			if st.MetricExportFailures != 1 || st.LastError == nil {
				t.Errorf("Stats metrics = %+v, want 1 failure and a last error", st)
			}
			wantErr := "2 of 2 spans were dropped"
			if tt.heal {
				r.SetFailure(codes.OK)
				emit(t, tel)
				if err := tel.TracerProvider.ForceFlush(ctx); err != nil {
					t.Fatalf("after the collector healed: %v", err)
				}
				if st := tel.Stats(); st.SpansExported != 2 || st.SpansDropped != 2 {
					t.Errorf("after healing: %+v", st)
				}
				wantErr = "2 of 4 spans were dropped"
			}
			err = tel.Shutdown(ctx)
			if err == nil || !strings.Contains(err.Error(), wantErr) || !strings.Contains(err.Error(), "metric exports failed") {
				t.Errorf("Shutdown error = %v, want %q and the metric failures", err, wantErr)
			}
			// Lost says what was lost per signal: the spans, and the
			// metrics only when the final export failed too (metrics are
			// cumulative: a later success delivers what a failure missed).
			lost := tel.Stats().Lost()
			wantLines := 2
			if tt.heal {
				wantLines = 1
			}
			if len(lost) != wantLines || !strings.HasPrefix(lost[0], "traces: "+strings.TrimSuffix(wantErr, " dropped")+" not delivered") {
				t.Errorf("Lost() = %q, want %d lines, the first %q", lost, wantLines, wantErr)
			}
			if !tt.heal && !strings.HasPrefix(lost[len(lost)-1], "metrics: the last export failed") {
				t.Errorf("Lost() = %q, want a metrics line", lost)
			}
		})
	}
}

func TestShutdownTwice(t *testing.T) {
	cleanEnv(t)
	ctx := testContext(t)
	tel, err := Setup(ctx, Config{OutputDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	emit(t, tel)
	if err := tel.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if err := tel.Shutdown(ctx); err != nil {
		t.Errorf("second Shutdown = %v", err)
	}
	// Spans after Shutdown go nowhere and are not counted.
	_, s := tel.TracerProvider.Tracer("late").Start(ctx, "late")
	s.End()
	if st := tel.Stats(); st.SpansEnded != 2 || st.SpansDropped != 0 {
		t.Errorf("Stats after a late span = %+v", st)
	}
}

func TestSetupDisabled(t *testing.T) {
	cleanEnv(t)
	t.Setenv("OTEL_SDK_DISABLED", "true")
	ctx := testContext(t)
	dir := filepath.Join(t.TempDir(), "out")
	tel, err := Setup(ctx, Config{OutputDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if tel.Resolved.Mode != ModeDisabled || tel.Files() != nil {
		t.Errorf("mode %s, files %v", tel.Resolved.Mode, tel.Files())
	}
	_, s := tel.TracerProvider.Tracer("x").Start(ctx, "x")
	if s.IsRecording() {
		t.Error("span records with the SDK disabled")
	}
	s.End()
	if err := tel.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("output folder created with the SDK disabled: %v", err)
	}
}

func TestSpanCountingConcurrentSafe(t *testing.T) {
	cleanEnv(t)
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "5")
	ctx := testContext(t)
	tel, err := Setup(ctx, Config{OutputDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	const goroutines, each = 8, 500
	var wg sync.WaitGroup
	for range goroutines {
		wg.Go(func() {
			tr := tel.TracerProvider.Tracer("c")
			for range each {
				_, s := tr.Start(ctx, "s")
				s.End()
			}
		})
	}
	wg.Go(func() {
		for range 100 {
			st := tel.Stats()
			if st.SpansExported+st.SpansDropped > st.SpansEnded {
				t.Errorf("more spans accounted than ended: %+v", st)
				return
			}
		}
	})
	wg.Wait()
	if err := tel.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	st := tel.Stats()
	if st.SpansEnded != goroutines*each || st.SpansExported != goroutines*each {
		t.Errorf("Stats = %+v, want %d ended and exported", st, goroutines*each)
	}
	spans, _ := readSpansFile(t, tel.Files()[0])
	if len(spans) != goroutines*each {
		t.Errorf("file holds %d spans, want %d", len(spans), goroutines*each)
	}
}

// TestShutdownHonoursCallerContext: the collector hangs for an hour, and
// the shutdown and export timeouts are an hour: only the caller's 200ms
// context can end Shutdown, so that it returns is the check.
func TestShutdownHonoursCallerContext(t *testing.T) {
	cleanEnv(t)
	t.Setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "3600000")
	r := startReceiver(t)
	r.SetDelay(time.Hour)
	tel, err := Setup(t.Context(), Config{Endpoint: "http://" + r.Endpoint(), ShutdownTimeout: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	emit(t, tel)
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	err = tel.Shutdown(ctx)
	if err == nil {
		t.Error("Shutdown reported success with a hung collector")
	}
}
