package spanbatch

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// blockingExporter records what it exports; when gate is set, each export
// signals entered and waits for gate.
type blockingExporter struct {
	mu      sync.Mutex
	batches []int
	names   map[string]int
	entered chan struct{}
	gate    chan struct{}
	shut    bool
}

func (e *blockingExporter) ExportSpans(_ context.Context, spans []sdktrace.ReadOnlySpan) error {
	if e.gate != nil {
		e.entered <- struct{}{}
		<-e.gate
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.batches = append(e.batches, len(spans))
	for _, s := range spans {
		e.names[s.Name()]++
	}
	return nil
}

func (e *blockingExporter) Shutdown(context.Context) error {
	e.mu.Lock()
	e.shut = true
	e.mu.Unlock()
	return nil
}

func newExporter() *blockingExporter { return &blockingExporter{names: map[string]int{}} }

func TestExportsEverySpanOnceConcurrentSafe(t *testing.T) {
	exp := newExporter()
	p := New(exp, WithMaxQueueSize(1<<14), WithMaxExportBatchSize(64), WithBatchTimeout(time.Hour))
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(p))
	tr := tp.Tracer("t")
	const workers, each = 4, 500
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				_, s := tr.Start(context.Background(), fmt.Sprintf("w%d-%d", w, i))
				s.End()
			}
		}()
	}
	wg.Wait()
	if err := tp.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	exp.mu.Lock()
	defer exp.mu.Unlock()
	if len(exp.names) != workers*each {
		t.Fatalf("exported %d distinct spans, want %d", len(exp.names), workers*each)
	}
	for n, c := range exp.names {
		if c != 1 {
			t.Fatalf("span %s exported %d times", n, c)
		}
	}
	for _, b := range exp.batches {
		if b > 64 {
			t.Fatalf("a batch of %d spans, want at most 64", b)
		}
	}
	if !exp.shut {
		t.Error("Shutdown did not shut the exporter down")
	}
	if p.Dropped() != 0 {
		t.Errorf("dropped %d with room to spare", p.Dropped())
	}
}

// TestFullQueueDropsAndCounts: with the exporter stuck, spans beyond the
// queue are dropped, counted, and End never blocks.
func TestFullQueueDropsAndCounts(t *testing.T) {
	exp := newExporter()
	exp.entered, exp.gate = make(chan struct{}), make(chan struct{})
	p := New(exp, WithMaxQueueSize(5), WithMaxExportBatchSize(5), WithBatchTimeout(time.Hour))
	tr := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(p)).Tracer("t")
	end := func(n int) {
		for i := 0; i < n; i++ {
			_, s := tr.Start(context.Background(), "s")
			s.End()
		}
	}
	end(5)        // a full batch wakes the exporter...
	<-exp.entered // ...which now holds those 5 and is stuck
	end(5)        // the queue fills again
	end(3)        // no room: dropped
	if got := p.Dropped(); got != 3 {
		t.Fatalf("Dropped = %d, want 3", got)
	}
	close(exp.gate)
	go func() {
		for range exp.entered {
		}
	}()
	if err := p.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	exp.mu.Lock()
	defer exp.mu.Unlock()
	if exp.names["s"] != 10 {
		t.Errorf("exported %d spans, want the 10 queued", exp.names["s"])
	}
}

func TestForceFlushAndEndAfterShutdown(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	p := New(exp, WithBatchTimeout(time.Hour))
	tr := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(p)).Tracer("t")
	_, s := tr.Start(context.Background(), "a")
	s.End()
	if err := p.ForceFlush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := len(exp.GetSpans()); n != 1 {
		t.Fatalf("after ForceFlush %d spans exported, want 1", n)
	}
	if err := p.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	_, s = tr.Start(context.Background(), "late")
	s.End()
	if p.Dropped() != 1 {
		t.Errorf("a span ended after Shutdown: Dropped = %d, want 1", p.Dropped())
	}
}

// TestShutdownPastItsDeadlineStillHandsOverTheQueue: an export hangs past
// Shutdown's deadline; Shutdown returns the deadline's error, and once the
// export returns, the spans still queued are handed to the exporter and
// the exporter is shut down (ortel's exporter spools what it is handed
// then). A Shutdown that gave up for good lost the queue.
func TestShutdownPastItsDeadlineStillHandsOverTheQueue(t *testing.T) {
	exp := newExporter()
	exp.entered = make(chan struct{}, 4)
	exp.gate = make(chan struct{})
	p := New(exp, WithMaxQueueSize(16), WithMaxExportBatchSize(1), WithBatchTimeout(time.Hour))
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(p))
	tr := tp.Tracer("t")
	_, s := tr.Start(context.Background(), "in flight")
	s.End() // a full batch: the loop exports it and hangs
	<-exp.entered
	_, s = tr.Start(context.Background(), "queued")
	s.End()
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // the deadline has passed
	if err := p.Shutdown(ctx); err == nil {
		t.Fatal("Shutdown past its deadline returned nil")
	}
	close(exp.gate) // the hung export returns; the queued one passes the open gate
	deadline := time.Now().Add(time.Minute)
	for {
		exp.mu.Lock()
		got, shut := exp.names["queued"], exp.shut
		exp.mu.Unlock()
		if got == 1 && shut {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("queued span handed over %d times, exporter shut down %v; want 1 and true", got, shut)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestConfigFromEnvThenOptions(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		opts []Option
		want config
	}{
		{name: "defaults", want: config{2048, 512, 5 * time.Second, 30 * time.Second}},
		{name: "environment", env: map[string]string{EnvMaxQueueSize: "100", EnvMaxExportBatchSize: "10", EnvScheduleDelay: "250", EnvExportTimeout: "1500"},
			want: config{100, 10, 250 * time.Millisecond, 1500 * time.Millisecond}},
		{name: "options win", env: map[string]string{EnvMaxQueueSize: "100", EnvScheduleDelay: "250"},
			opts: []Option{WithMaxQueueSize(300), WithBatchTimeout(time.Second)},
			want: config{300, 300, time.Second, 30 * time.Second}},
		{name: "bad values use the default", env: map[string]string{EnvMaxQueueSize: "-1", EnvMaxExportBatchSize: "x", EnvScheduleDelay: "0", EnvExportTimeout: "1e3"},
			want: config{2048, 512, 5 * time.Second, 30 * time.Second}},
		{name: "batch never larger than the queue", env: map[string]string{EnvMaxQueueSize: "8"}, want: config{8, 8, 5 * time.Second, 30 * time.Second}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := newConfig(func(k string) string { return tt.env[k] }, tt.opts)
			if got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}
