package profimport

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/sdk/instrumentation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/resource"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc/codes"

	"github.com/ortel-dev/ortel/instrument"
	"github.com/ortel-dev/ortel/internal/telemetry/otlpjson"
	"github.com/ortel-dev/ortel/test/otlptest"
	"github.com/ortel-dev/ortel/test/testenv"
)

var testScope = instrumentation.Scope{Name: instrument.ScopeName, Version: instrument.Version()}

// realProfile returns the bytes of one of the real profile excerpts kept by
// package profile.
func realProfile(tb testing.TB, name string) []byte {
	tb.Helper()
	return testenv.Gunzip(tb, filepath.Join("..", "..", "instrument", "profile", "testdata", name))
}

// synth makes a profile of about size bytes from a real excerpt.
func synth(tb testing.TB, name string, size int64, noRuns bool) ([]byte, SynthCounts) {
	tb.Helper()
	var buf bytes.Buffer
	c, err := Synthesize(&buf, bytes.NewReader(realProfile(tb, name)), SynthOptions{Bytes: size, NoRuns: noRuns})
	if err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes(), c
}

// readSpans decodes OTLP/JSON lines written by a FileSink.
func readSpans(tb testing.TB, b []byte) []*tracepb.Span {
	tb.Helper()
	var spans []*tracepb.Span
	err := otlpjson.ReadTraces(bytes.NewReader(b), func(req *coltracepb.ExportTraceServiceRequest) error {
		for _, rs := range req.ResourceSpans {
			if v, _ := otlptest.AttrString(rs.GetResource().GetAttributes(), "service.name"); v != "ortel-test" {
				tb.Errorf("resource service.name %q", v)
			}
			for _, ss := range rs.ScopeSpans {
				if ss.GetScope().GetName() != instrument.ScopeName {
					tb.Errorf("scope %q", ss.GetScope().GetName())
				}
				spans = append(spans, ss.Spans...)
			}
		}
		return nil
	})
	if err != nil {
		tb.Fatalf("the written file does not read back as OTLP/JSON: %v", err)
	}
	return spans
}

func testResource() *resource.Resource {
	return resource.NewSchemaless(otlpjsonServiceName("ortel-test"))
}

// TestImportRealNested imports one real run of Silero VAD from ONNX Runtime
// 1.24.3 and 1.30.0 to a file and reads it back: every operator is a span,
// subgraph nodes are children of the If span that ran them and inside its
// interval, the 1.30 mem_* args are attributes. It catches a flat tree,
// lost or extra spans, and a file the collector could not read.
func TestImportRealNested(t *testing.T) {
	for _, v := range []string{"1.24.3", "1.30.0"} {
		t.Run(v, func(t *testing.T) {
			var out bytes.Buffer
			sink := NewFileSink(&out, "test", testResource(), testScope)
			origin := time.Date(2026, 11, 22, 1, 5, 14, 0, time.UTC)
			st, err := Import(context.Background(), bytes.NewReader(realProfile(t, "vad_ort"+v+".json.gz")), sink,
				Config{Origin: origin, Model: "vad", BatchSize: 7})
			if err != nil {
				t.Fatal(err)
			}
			spans := readSpans(t, out.Bytes())
			if st.Runs != 1 || st.Other != 2 || st.Nodes != st.NodeEvents || int64(len(spans)) != st.Spans() {
				t.Fatalf("stats %+v, %d spans read back", st, len(spans))
			}
			byID := map[string]*tracepb.Span{}
			for _, s := range spans {
				byID[otlptest.HexID(s.SpanId)] = s
			}
			nested, mem := 0, 0
			for _, s := range spans {
				node, ok := otlptest.AttrString(s.Attributes, "onnxruntime.node.name")
				if !ok {
					continue
				}
				p := byID[otlptest.HexID(s.ParentSpanId)]
				if p == nil {
					t.Fatalf("%s: parent not written", node)
				}
				if !bytes.Equal(p.TraceId, s.TraceId) || s.StartTimeUnixNano < p.StartTimeUnixNano || s.EndTimeUnixNano > p.EndTimeUnixNano {
					t.Errorf("%s lies outside its parent %s", node, p.Name)
				}
				if strings.Contains(node, "_Inline_") != (p.Name == "If") {
					t.Errorf("%s: parent %q", node, p.Name)
				}
				if p.Name == "If" {
					nested++
				}
				if _, ok := otlptest.AttrInt(s.Attributes, "onnxruntime.node.memory.arena_held"); ok {
					mem++
				}
			}
			if nested == 0 {
				t.Error("no nested operator span")
			}
			if want := map[string]int64{"1.24.3": 0, "1.30.0": st.Nodes}[v]; int64(mem) != want {
				t.Errorf("%d spans with memory attributes, want %d", mem, want)
			}
		})
	}
}

// TestImportLosslessWithSpill imports a synthetic profile of many real det
// runs with a tiny in-memory limit, so that events go through the spill
// file, and in small batches: every operator event becomes a span.
func TestImportLosslessWithSpill(t *testing.T) {
	data, c := synth(t, "det_ort1.30.0.json.gz", 4<<20, false)
	var out bytes.Buffer
	st, err := Import(context.Background(), bytes.NewReader(data), NewFileSink(&out, "test", testResource(), testScope),
		Config{BatchSize: 100, MaxPending: 150})
	if err != nil {
		t.Fatal(err)
	}
	if st.Spilled == 0 {
		t.Fatal("nothing spilled: the test does not reach the spill path")
	}
	if st.Nodes != c.NodeEvents || st.Runs != c.Runs || st.Other != c.Other || st.Outside != 0 {
		t.Fatalf("wrote %+v, profile holds %+v", st, c)
	}
	if n := int64(len(readSpans(t, out.Bytes()))); n != st.Spans() {
		t.Fatalf("%d spans in the file, %d counted", n, st.Spans())
	}
}

// TestImportNoRuns: operator events without any model_run are an error
// naming why, and nothing claims success; so is a JSON array with no ORT
// event.
func TestImportNoRuns(t *testing.T) {
	data, c := synth(t, "vad_ort1.30.0.json.gz", 200<<10, true)
	st, err := Import(context.Background(), bytes.NewReader(data), NewFileSink(io.Discard, "test", nil, testScope),
		Config{MaxPending: 500})
	if !errors.Is(err, ErrNoRuns) || st.Nodes != 0 || st.Outside != c.NodeEvents {
		t.Fatalf("got %+v, %v; want ErrNoRuns with %d events outside", st, err, c.NodeEvents)
	}
	_, err = Import(context.Background(), strings.NewReader(`[{"a":1}]`), NewFileSink(io.Discard, "test", nil, testScope), Config{})
	if !errors.Is(err, ErrNoEvents) {
		t.Fatalf("got %v, want ErrNoEvents", err)
	}
}

// failingSink takes ok batches, then fails.
type failingSink struct {
	ok, spans int
}

func (s *failingSink) Write(_ context.Context, b []Span) error {
	if s.ok == 0 {
		return errors.New("disk full")
	}
	s.ok--
	s.spans += len(b)
	return nil
}
func (s *failingSink) Close() error { return nil }

// TestImportSinkFailure: when the sink fails for good, Import stops and
// counts only the spans the sink took.
func TestImportSinkFailure(t *testing.T) {
	data, _ := synth(t, "det_ort1.24.3.json.gz", 1<<20, false)
	sink := &failingSink{ok: 3}
	st, err := Import(context.Background(), bytes.NewReader(data), sink, Config{BatchSize: 50})
	if err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("error %v, want the sink's", err)
	}
	if st.Spans() != int64(sink.spans) || sink.spans != 150 {
		t.Fatalf("counted %d spans, the sink took %d (want 150)", st.Spans(), sink.spans)
	}
}

// TestImportOTLPReceiver sends a synthetic profile to the in-process OTLP
// receiver in bounded batches: every span arrives, acknowledged.
func TestImportOTLPReceiver(t *testing.T) {
	rcv, err := otlptest.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer rcv.Close()
	data, c := synth(t, "vad_ort1.30.0.json.gz", 1<<20, false)
	ctx := context.Background()
	sink, err := NewClientSink(ctx, grpcClient(rcv.Endpoint()), rcv.Endpoint(), testResource(), testScope)
	if err != nil {
		t.Fatal(err)
	}
	st, err := Import(ctx, bytes.NewReader(data), sink, Config{BatchSize: 500})
	if cerr := sink.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	got := rcv.Spans()
	if st.Nodes != c.NodeEvents || int64(len(got)) != st.Spans() {
		t.Fatalf("stats %+v, receiver holds %d spans, profile %+v", st, len(got), c)
	}
}

// TestImportConcurrentRuns: two threads ran the session at once, so run B's
// first node lies inside run A's interval and is still held when A closes;
// the thread ids keep it in B. Also through the spill file (one event held
// in memory). It catches nodes given to the wrong run by time alone.
func TestImportConcurrentRuns(t *testing.T) {
	ev := func(cat, name string, tid, ts, dur int64) string {
		args := `{}`
		if cat == "Node" {
			args = `{"op_name":"Op","provider":"CPUExecutionProvider"}`
		}
		return fmt.Sprintf(`{"cat":%q,"name":%q,"ph":"X","pid":1,"tid":%d,"ts":%d,"dur":%d,"args":%s}`, cat, name, tid, ts, dur, args)
	}
	prof := "[" + strings.Join([]string{
		ev("Node", "a1_kernel_time", 1, 10, 10),
		ev("Node", "b1_kernel_time", 2, 60, 10),
		ev("Node", "a2_kernel_time", 1, 75, 20),
		ev("Session", "SequentialExecutor::Execute", 1, 5, 93),
		ev("Session", "model_run", 1, 0, 100),
		ev("Node", "b2_kernel_time", 2, 110, 30),
		ev("Session", "SequentialExecutor::Execute", 2, 55, 90),
		ev("Session", "model_run", 2, 50, 100),
	}, ",") + "]"
	for _, pending := range []int{0, 1} {
		var out bytes.Buffer
		st, err := Import(context.Background(), strings.NewReader(prof), NewFileSink(&out, "test", testResource(), testScope),
			Config{MaxPending: pending, SpillDir: t.TempDir()})
		if err != nil || st.Runs != 2 || st.Nodes != 4 {
			t.Fatalf("pending %d: %+v, %v", pending, st, err)
		}
		spans := readSpans(t, out.Bytes())
		runOf := map[string]string{} // span id -> run start
		for _, s := range spans {
			if strings.HasPrefix(s.Name, "run ") {
				runOf[otlptest.HexID(s.SpanId)] = fmt.Sprint(s.StartTimeUnixNano)
			}
		}
		got := map[string]string{}
		for _, s := range spans {
			if n, ok := otlptest.AttrString(s.Attributes, "onnxruntime.node.name"); ok {
				got[n] = runOf[otlptest.HexID(s.ParentSpanId)]
			}
		}
		want := map[string]string{"a1": "0", "a2": "0", "b1": "50000", "b2": "50000"}
		for n, w := range want {
			if got[n] != w {
				t.Errorf("pending %d: %s in the run starting at %q ns, want %q", pending, n, got[n], w)
			}
		}
	}
}

// TestImportOTLPRejected: a collector that refuses the spans for good
// stops the import with its error, and nothing is counted as written.
func TestImportOTLPRejected(t *testing.T) {
	rcv, err := otlptest.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer rcv.Close()
	rcv.SetFailure(codes.InvalidArgument) // not retryable
	ctx := context.Background()
	sink, err := NewClientSink(ctx, grpcClient(rcv.Endpoint()), rcv.Endpoint(), testResource(), testScope)
	if err != nil {
		t.Fatal(err)
	}
	defer sink.Close()
	st, err := Import(ctx, bytes.NewReader(realProfile(t, "vad_ort1.30.0.json.gz")), sink, Config{BatchSize: 10})
	if err == nil || !strings.Contains(err.Error(), rcv.Endpoint()) {
		t.Fatalf("error %v, want the collector's refusal naming it", err)
	}
	if st.Spans() != 0 || len(rcv.Spans()) != 0 {
		t.Fatalf("counted %d spans written, receiver holds %d", st.Spans(), len(rcv.Spans()))
	}
}

// TestImportRejectsImpossibleTimes: events whose ts or dur is negative,
// not finite or out of range (1e308, int64's largest) are skipped, counted
// and named, never turned into a span that ends before it starts or a
// node duration of centuries; every other event is written, and Import
// fails at the end saying how many it skipped.
func TestImportRejectsImpossibleTimes(t *testing.T) {
	ev := func(cat, name, ts, dur string) string {
		args := `{}`
		if cat == "Node" {
			args = `{"op_name":"Op","provider":"CPUExecutionProvider"}`
		}
		return fmt.Sprintf(`{"cat":%q,"name":%q,"ph":"X","pid":1,"tid":1,"ts":%s,"dur":%s,"args":%s}`, cat, name, ts, dur, args)
	}
	prof := "[" + strings.Join([]string{
		ev("Node", "good_kernel_time", "10", "10"),
		ev("Node", "huge_kernel_time", "20", "1e308"),
		ev("Node", "negative_kernel_time", "30", "-5"),
		ev("Node", "late_kernel_time", "9223372036854775807", "1"),
		ev("Node", "infinite_kernel_time", "40", `"1e999"`),
		ev("Session", "model_run", "0", "100"),
		ev("Session", "model_loading_uri", "-7", "3"),
	}, ",") + "]"
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	var out bytes.Buffer
	st, err := Import(context.Background(), strings.NewReader(prof), NewFileSink(&out, "test", testResource(), testScope), Config{MeterProvider: mp})
	if !errors.Is(err, ErrImpossibleTimes) || !strings.Contains(err.Error(), "5 events were skipped") {
		t.Fatalf("error %v, want ErrImpossibleTimes counting 5", err)
	}
	if st.RejectedCount != 5 || len(st.Rejected) != 5 || st.Runs != 1 || st.Nodes != 1 || st.Other != 0 {
		t.Fatalf("stats %+v, want 5 rejected, the run and its good node written", st)
	}
	for i, want := range []string{`"huge_kernel_time": dur 9223372036854775807`, `"negative_kernel_time": dur -5`, `"late_kernel_time": ts 9223372036854775807`, `"infinite_kernel_time": dur 9223372036854775807`, `"model_loading_uri": ts -7`} {
		if !strings.Contains(st.Rejected[i].Msg, want) || !strings.Contains(st.Rejected[i].Msg, "skipped") {
			t.Errorf("rejection %d: %q, want it to say %q and that the event was skipped", i, st.Rejected[i].Msg, want)
		}
	}
	for _, s := range readSpans(t, out.Bytes()) {
		if s.EndTimeUnixNano < s.StartTimeUnixNano {
			t.Errorf("span %s ends before it starts: %d < %d", s.Name, s.EndTimeUnixNano, s.StartTimeUnixNano)
		}
	}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if h, ok := m.Data.(metricdata.Histogram[float64]); ok {
				for _, dp := range h.DataPoints {
					if dp.Sum > 1 {
						t.Errorf("%s sums %g s for a 100 µs run", m.Name, dp.Sum)
					}
				}
			}
		}
	}
}
