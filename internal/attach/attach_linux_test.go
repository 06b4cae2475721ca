//go:build linux

package attach

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/ortel-dev/ortel/semconv"
	"github.com/ortel-dev/ortel/test/testenv"
)

// sinks are an in-memory span recorder and metric reader.
type sinks struct {
	spans  *tracetest.SpanRecorder
	reader *sdkmetric.ManualReader
	cfg    Config
}

func newSinks() *sinks {
	s := &sinks{spans: tracetest.NewSpanRecorder(), reader: sdkmetric.NewManualReader()}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(s.spans))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(s.reader))
	s.cfg = Config{TracerProvider: tp, MeterProvider: mp}
	return s
}

// library is the Config that attaches to the library file at path and
// sends what it sees to s.
func (s *sinks) library(path string) Config {
	c := s.cfg
	c.Library = path
	return c
}

// pids is the Config that attaches to pids and sends what it sees to s.
func (s *sinks) pids(pids ...int) Config {
	c := s.cfg
	c.PIDs = pids
	return c
}

// runSpans returns the ended spans whose name starts with "run".
func (s *sinks) runSpans() []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
	for _, sp := range s.spans.Ended() {
		if sp.Name() == "run" || strings.HasPrefix(sp.Name(), "run ") {
			out = append(out, sp)
		}
	}
	return out
}

func (s *sinks) metrics(t *testing.T) map[string]metricdata.Aggregation {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := s.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	out := map[string]metricdata.Aggregation{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			out[m.Name] = m.Data
		}
	}
	return out
}

func attr(kv []attribute.KeyValue, k attribute.Key) (string, bool) {
	for _, a := range kv {
		if a.Key == k {
			return a.Value.String(), true
		}
	}
	return "", false
}

// histCount sums the counts of a histogram's points whose attributes
// have model (any model when model is "").
func histCount(t *testing.T, agg metricdata.Aggregation, model string) uint64 {
	t.Helper()
	h, ok := agg.(metricdata.Histogram[float64])
	if !ok {
		t.Fatalf("want a float64 histogram, got %T", agg)
	}
	var n uint64
	for _, p := range h.DataPoints {
		if v, _ := p.Attributes.Value(semconv.OnnxruntimeModelNameKey); model == "" || v.AsString() == model {
			n += p.Count
		}
	}
	return n
}

func sumInt(t *testing.T, agg metricdata.Aggregation) int64 {
	t.Helper()
	s, ok := agg.(metricdata.Sum[int64])
	if !ok {
		t.Fatalf("want an int64 sum, got %T", agg)
	}
	var n int64
	for _, p := range s.DataPoints {
		n += p.Value
	}
	return n
}

// testModel returns the Silero VAD model, or skips (locally) / fails (CI).
func testModel(t testing.TB) string {
	t.Helper()
	return testenv.Model(t, "silero_vad_v5.onnx")
}

// A Node.js process already running when attach starts, which then opens
// a Silero VAD session and runs it 200 times (and once with a bad input):
// exactly 200 successful run spans and one failed, each carrying the
// model name from CreateSession, and histogram counts to match.
func TestAttachNodeNewSession(t *testing.T) {
	requireEBPF(t)
	model := testenv.Model(t, "silero_vad_v5.onnx")
	for _, version := range []string{"1.24.3", "1.30.0"} {
		t.Run(version, func(t *testing.T) {
			c := startNode(t, version)
			s := newSinks()
			tr, err := Start(s.pids(c.pid()))
			if err != nil {
				t.Fatal(err)
			}
			defer tr.Close()
			if libs := tr.Libraries(); len(libs) != 1 || libs[0].Version != version {
				t.Errorf("libraries %+v, want one of version %s", libs, version)
			}
			stop := runTracer(t, tr)
			c.do("create " + model)
			if got := c.do("run 200"); !strings.HasPrefix(got, "ran 200 ") {
				t.Fatalf("client: %q", got)
			}
			if got := c.do("bad"); got != "failed" {
				t.Fatalf("client bad run: %q", got)
			}
			if r := stop(); r != StoppedByContext {
				t.Errorf("stop reason %v", r)
			}

			var ok, failed int
			ids := map[string]bool{}
			for _, sp := range s.runSpans() {
				if sp.Name() != "run silero_vad_v5" {
					t.Fatalf("run span named %q", sp.Name())
				}
				if m, _ := attr(sp.Attributes(), semconv.OnnxruntimeModelNameKey); m != "silero_vad_v5" {
					t.Fatalf("run span model %q", m)
				}
				id, _ := attr(sp.Attributes(), semconv.OnnxruntimeSessionIDKey)
				ids[id] = true
				if pid, _ := attr(sp.Attributes(), "process.pid"); pid != fmt.Sprint(c.pid()) {
					t.Fatalf("run span process.pid %q, want %d", pid, c.pid())
				}
				if !sp.EndTime().After(sp.StartTime()) {
					t.Fatalf("run span ends at %v, not after its start %v", sp.EndTime(), sp.StartTime())
				}
				if sp.Status().Code == codes.Error {
					failed++
					if et, _ := attr(sp.Attributes(), "error.type"); et != "invalid_argument" {
						t.Errorf("failed run's error.type %q, want invalid_argument", et)
					}
				} else {
					ok++
				}
			}
			if ok != 200 || failed != 1 {
				t.Errorf("run spans: %d ok and %d failed, want 200 and 1", ok, failed)
			}
			if len(ids) != 1 {
				t.Errorf("session ids %v, want one", ids)
			}
			var creates int
			for _, sp := range s.spans.Ended() {
				if sp.Name() == "create_session silero_vad_v5" {
					creates++
				}
			}
			if creates != 1 {
				t.Errorf("%d create_session spans, want 1", creates)
			}
			m := s.metrics(t)
			if n := histCount(t, m["onnxruntime.run.duration"], "silero_vad_v5"); n != 201 {
				t.Errorf("onnxruntime.run.duration count %d, want 201", n)
			}
			if n := sumInt(t, m["onnxruntime.runs"]); n != 201 {
				t.Errorf("onnxruntime.runs %d, want 201", n)
			}
			if n := sumInt(t, m["onnxruntime.run.errors"]); n != 1 {
				t.Errorf("onnxruntime.run.errors %d, want 1", n)
			}
			if n := sumInt(t, m["onnxruntime.run.active"]); n != 0 {
				t.Errorf("onnxruntime.run.active %d after the runs, want 0", n)
			}
			if n := histCount(t, m["onnxruntime.session.creation.duration"], "silero_vad_v5"); n != 1 {
				t.Errorf("onnxruntime.session.creation.duration count %d, want 1", n)
			}
			if st := tr.Stats(); st.Runs != 201 || st.Errors != 1 || st.Sessions != 1 || st.Bad != 0 || st.Lost != 0 {
				t.Errorf("stats %+v", st)
			}
			progs := programIDs(t, tr)
			if err := tr.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
			requireDetached(t, progs)
		})
	}
}

// A session created before attach: exactly the runs made after attach
// become spans, all with the session's identity; its model cannot be
// known (CreateSession was not seen), so the spans are named "run" and
// carry no model name.
func TestAttachNodeExistingSession(t *testing.T) {
	requireEBPF(t)
	model := testenv.Model(t, "silero_vad_v5.onnx")
	c := startNode(t, "1.30.0")
	c.do("create " + model)
	c.do("run 25") // before attach: not seen
	s := newSinks()
	// The process named twice is probed once: its runs are not doubled.
	tr, err := Start(s.pids(c.pid(), c.pid()))
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	stop := runTracer(t, tr)
	c.do("run 60")
	stop()
	spans := s.runSpans()
	if len(spans) != 60 {
		t.Fatalf("%d run spans, want the 60 runs made after attach", len(spans))
	}
	ids := map[string]bool{}
	for _, sp := range spans {
		id, ok := attr(sp.Attributes(), semconv.OnnxruntimeSessionIDKey)
		if !ok || !strings.HasPrefix(id, fmt.Sprintf("%d:0x", c.pid())) {
			t.Fatalf("session id %q, want PID:0xADDRESS", id)
		}
		ids[id] = true
		if m, ok := attr(sp.Attributes(), semconv.OnnxruntimeModelNameKey); ok {
			t.Fatalf("model %q on a session created before attach", m)
		}
	}
	if len(ids) != 1 {
		t.Errorf("session ids %v, want one", ids)
	}
}

// When the only target exits, Run returns by itself and Close leaves no
// probe behind.
func TestAttachTargetExit(t *testing.T) {
	requireEBPF(t)
	c := startNode(t, "1.24.3")
	s := newSinks()
	tr, err := Start(s.pids(c.pid()))
	if err != nil {
		t.Fatal(err)
	}
	ids := programIDs(t, tr)
	c.stdin.Write([]byte("exit\n"))
	c.cmd.Wait()
	r, err := tr.Run(context.Background())
	if err != nil || r != TargetsExited {
		t.Errorf("Run = %v, %v; want TargetsExited", r, err)
	}
	if err := tr.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	requireDetached(t, ids)
}

func TestStartRefusesProcessWithoutORT(t *testing.T) {
	requireEBPF(t)
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	_, err := Start(Config{PIDs: []int{cmd.Process.Pid}})
	if err == nil || !strings.Contains(err.Error(), "no ONNX Runtime library loaded") {
		t.Fatalf("Start on sleep: %v, want a refusal naming the missing library", err)
	}
}

// --lib: every process mapping the library is traced, the one running
// before attach and the one started after, each run with its own process.
// The library is the test's own copy: on the shared one, a Node.js client
// of another package's tests running at the same time (go test runs
// packages in parallel) added its 822 runs to the count.
func TestAttachLibrary(t *testing.T) {
	requireEBPF(t)
	model := testModel(t)
	mods := privateNodeModules(t, "1.24.3")
	lib := filepath.Join(mods, "onnxruntime-node", "bin", "napi-v6", "linux", "x64", "libonnxruntime.so.1")
	before := startNodeIn(t, mods)
	s := newSinks()
	tr, err := Start(s.library(lib))
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	stop := runTracer(t, tr)
	after := startNodeIn(t, mods)
	before.do("create " + model)
	after.do("create " + model)
	before.do("run 20")
	after.do("run 30")
	stop()
	byPID := map[string]int{}
	for _, sp := range s.runSpans() {
		pid, _ := attr(sp.Attributes(), "process.pid")
		byPID[pid]++
	}
	want := map[string]int{fmt.Sprint(before.pid()): 20, fmt.Sprint(after.pid()): 30}
	if fmt.Sprint(byPID) != fmt.Sprint(want) {
		t.Errorf("run spans by process %v, want %v", byPID, want)
	}
	ids := programIDs(t, tr)
	if err := tr.Close(); err != nil {
		t.Fatal(err)
	}
	requireDetached(t, ids)
}

// A C client: CreateSessionFromArray (no path, so the model is named
// "model", as instrument names a session made from bytes), 40 runs through
// Run and 40 through RunWithBinding: 80 run spans, all of one session.
func TestAttachCClientRunWithBinding(t *testing.T) {
	requireEBPF(t)
	model := testModel(t)
	lib := ortLibrary(t, "1.24.3")
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		testenv.Missing(t, "needs gcc for the C client: %v", err)
	}
	hdr, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/yalue/onnxruntime_go").Output()
	if err != nil {
		t.Fatalf("find onnxruntime_c_api.h (in github.com/yalue/onnxruntime_go): %v", err)
	}
	bin := filepath.Join(t.TempDir(), "cclient")
	build := exec.Command(gcc, "-O1", "-I"+strings.TrimSpace(string(hdr)), "testdata/cclient.c", "-o", bin, lib, "-Wl,-rpath,"+filepath.Dir(lib))
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build the C client: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, model, "40")
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	out := bufio.NewScanner(stdout)
	if !out.Scan() || out.Text() != "ready" {
		t.Fatalf("C client: %q", out.Text())
	}
	s := newSinks()
	tr, err := Start(s.pids(cmd.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	stdin.Write([]byte("go\n"))
	if !out.Scan() || out.Text() != "done" {
		t.Fatalf("C client: %q", out.Text())
	}
	cmd.Wait()
	if r, err := tr.Run(context.Background()); err != nil || r != TargetsExited {
		t.Fatalf("Run = %v, %v", r, err)
	}
	spans := s.runSpans()
	ids := map[string]bool{}
	for _, sp := range spans {
		if sp.Name() != "run model" {
			t.Fatalf("run span %q, want \"run model\"", sp.Name())
		}
		id, _ := attr(sp.Attributes(), semconv.OnnxruntimeSessionIDKey)
		ids[id] = true
	}
	if len(spans) != 80 || len(ids) != 1 {
		t.Errorf("%d run spans of %d sessions, want 80 (40 Run + 40 RunWithBinding) of 1", len(spans), len(ids))
	}
	if st := tr.Stats(); st.Sessions != 1 {
		t.Errorf("%d sessions created, want 1 (CreateSessionFromArray)", st.Sessions)
	}
}

// A ring buffer too small for the runs: the events that do not fit are
// counted as lost, never silently missing: spans + lost = runs.
func TestAttachCountsLostEvents(t *testing.T) {
	requireEBPF(t)
	defer func(n int) { ringSize = n }(ringSize)
	ringSize = os.Getpagesize() // holds ~56 run events
	model := testModel(t)
	c := startNode(t, "1.30.0")
	c.do("create " + model)
	s := newSinks()
	tr, err := Start(s.pids(c.pid()))
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	c.do("run 100") // nothing reads the ring meanwhile
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := tr.Run(ctx); err != nil { // drains what the ring holds
		t.Fatal(err)
	}
	st := tr.Stats()
	spans := len(s.runSpans())
	if st.Lost == 0 || int64(spans)+st.Lost != 100 {
		t.Errorf("%d run spans + %d lost, want some lost and 100 in all", spans, st.Lost)
	}
	tr.Close()
	if tr.Stats().Lost != st.Lost {
		t.Errorf("lost count after Close %d, want %d", tr.Stats().Lost, st.Lost)
	}
}
