package instrument

import (
	"context"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	ort "github.com/yalue/onnxruntime_go"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/ortel-dev/ortel/instrument/spanbatch"
	"github.com/ortel-dev/ortel/test/otlptest"
	"github.com/ortel-dev/ortel/test/testenv"
)

// Real-model benchmarks (docs/ARCHITECTURE.md, "Budgets"). They run both sides in one
// invocation, interleaved in blocks, and report medians over the blocks:
//
//	go test -run '^$' -bench 'VAD|Det' -benchtime 200x ./instrument/
//
// CPU is the process's user+system time (getrusage), so it includes the
// span export goroutines and the in-process OTLP receiver, not only the
// caller's thread.

// cpuNow returns the CPU time the process has used.
func cpuNow() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// switches returns the process's voluntary context switches: a thread that
// goes to sleep waiting (a goroutine woken per span parks its thread again).
func switches() int64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Nvcsw
}

// rssBytes returns the resident set size from /proc/self/statm, or 0.
func rssBytes() int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0
	}
	pages, _ := strconv.ParseInt(f[1], 10, 64)
	return pages * int64(os.Getpagesize())
}

// otlpTracerProvider is a real SDK provider exporting over OTLP/gRPC to an
// in-process receiver, through the SDK's batcher or ortel's spanbatch.
func otlpTracerProvider(b *testing.B, endpoint string, ours bool) *sdktrace.TracerProvider {
	exp, err := otlptracegrpc.New(context.Background(), otlptracegrpc.WithEndpoint(endpoint), otlptracegrpc.WithInsecure())
	if err != nil {
		b.Fatal(err)
	}
	var proc sdktrace.SpanProcessor
	if ours {
		proc = spanbatch.New(exp, spanbatch.WithMaxQueueSize(1<<16))
	} else {
		proc = sdktrace.NewBatchSpanProcessor(exp, sdktrace.WithMaxQueueSize(1<<16))
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()), sdktrace.WithSpanProcessor(proc))
	b.Cleanup(func() { tp.Shutdown(context.Background()) })
	return tp
}

// tracedSides is one ORT session wrapped three ways: no-op providers, the
// SDK's BatchSpanProcessor and spanbatch, both exporting over OTLP/gRPC to
// one endpoint. Every side runs the same session (closed once): two
// sessions of one model differ by more than a span costs.
type tracedSides struct {
	bare            *ort.DynamicAdvancedSession
	noop, sdk, ours *DynamicSession
	tpSDK, tpOurs   *sdktrace.TracerProvider
	mp              *sdkmetric.MeterProvider
	in, out         []ort.Value
}

func newTracedSides(b *testing.B, open func(*testing.B, ...Option) (*DynamicSession, []ort.Value, []ort.Value), endpoint string) tracedSides {
	var sd tracedSides
	sd.mp = sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	sd.tpSDK = otlpTracerProvider(b, endpoint, false)
	sd.tpOurs = otlpTracerProvider(b, endpoint, true)
	sd.noop, sd.in, sd.out = open(b, WithTracerProvider(noop.NewTracerProvider()))
	sd.bare = sd.noop.Unwrap()
	name := WithModelName(sd.noop.ModelName())
	var err error
	if sd.sdk, err = WrapDynamic(sd.bare, name, WithTracerProvider(sd.tpSDK), WithMeterProvider(sd.mp)); err != nil {
		b.Fatal(err)
	}
	if sd.ours, err = WrapDynamic(sd.bare, name, WithTracerProvider(sd.tpOurs), WithMeterProvider(sd.mp)); err != nil {
		b.Fatal(err)
	}
	return sd
}

// vadSession opens Silero VAD, one intra-op thread, with its inputs.
func vadSession(b *testing.B, opts ...Option) (*DynamicSession, []ort.Value, []ort.Value) {
	testenv.RequireORT(b)
	path := testenv.Model(b, "silero_vad_v5.onnx")
	so, err := ort.NewSessionOptions()
	if err != nil {
		b.Fatal(err)
	}
	defer so.Destroy()
	so.SetIntraOpNumThreads(1)
	so.SetInterOpNumThreads(1)
	s, err := NewDynamicSession(context.Background(), path, []string{"input", "state", "sr"}, []string{"output", "stateN"}, so,
		append([]Option{WithModelName("silero-vad")}, opts...)...)
	if err != nil {
		b.Fatal(err)
	}
	audio := make([]float32, 512)
	for i := range audio {
		audio[i] = float32(i%37) / 100
	}
	in, _ := ort.NewTensor(ort.NewShape(1, 512), audio)
	st, _ := ort.NewTensor(ort.NewShape(2, 1, 128), make([]float32, 256))
	sr, _ := ort.NewScalar(int64(16000))
	o1, _ := ort.NewEmptyTensor[float32](ort.NewShape(1, 1))
	o2, _ := ort.NewEmptyTensor[float32](ort.NewShape(2, 1, 128))
	b.Cleanup(func() {
		s.Close(context.Background())
		for _, v := range []ort.Value{in, st, sr, o1, o2} {
			v.Destroy()
		}
	})
	return s, []ort.Value{in, st, sr}, []ort.Value{o1, o2}
}

// detSession opens PaddleOCR det on a 640x640 image.
func detSession(b *testing.B, opts ...Option) (*DynamicSession, []ort.Value, []ort.Value) {
	testenv.RequireORT(b)
	path := testenv.Model(b, "ch_PP-OCRv4_det_infer.onnx")
	s, err := NewDynamicSession(context.Background(), path, []string{"x"}, []string{"sigmoid_0.tmp_0"}, nil,
		append([]Option{WithModelName("paddleocr-det")}, opts...)...)
	if err != nil {
		b.Fatal(err)
	}
	img := make([]float32, 3*640*640)
	for i := range img {
		img[i] = float32(i%251) / 251
	}
	in, _ := ort.NewTensor(ort.NewShape(1, 3, 640, 640), img)
	out, _ := ort.NewEmptyTensor[float32](ort.NewShape(1, 1, 640, 640))
	b.Cleanup(func() {
		s.Close(context.Background())
		in.Destroy()
		out.Destroy()
	})
	return s, []ort.Value{in}, []ort.Value{out}
}

// blockStats are the medians over blocks of one call's wall and CPU time
// and voluntary context switches.
type blockStats struct{ wall, cpu, csw float64 }

// interleaveCPU runs each function in turn, in blocks of block calls, for
// rounds rounds (in a shuffled order each round), and returns the median
// wall and CPU ns of one call.
func interleaveCPU(b *testing.B, block, rounds int, fns []func()) []blockStats {
	walls := make([][]float64, len(fns))
	cpus := make([][]float64, len(fns))
	csws := make([][]float64, len(fns))
	for _, fn := range fns { // warm up
		for j := 0; j < block; j++ {
			fn()
		}
	}
	b.ResetTimer()
	// Each round runs the sides in a new order (seeded), so that no side
	// always follows the same one: a side's background work (an export
	// finishing, the collector digesting a batch) spills into whichever
	// block comes next, and would otherwise always land on the same peer.
	rng := rand.New(rand.NewPCG(1, 2))
	order := make([]int, len(fns))
	for i := range order {
		order[i] = i
	}
	for r := 0; r < rounds; r++ {
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		for _, i := range order {
			fn := fns[i]
			sw, c, t := switches(), cpuNow(), time.Now()
			for j := 0; j < block; j++ {
				fn()
			}
			walls[i] = append(walls[i], float64(time.Since(t).Nanoseconds())/float64(block))
			cpus[i] = append(cpus[i], float64((cpuNow()-c).Nanoseconds())/float64(block))
			csws[i] = append(csws[i], float64(switches()-sw)/float64(block))
		}
	}
	out := make([]blockStats, len(fns))
	for i := range fns {
		slices.Sort(walls[i])
		slices.Sort(cpus[i])
		slices.Sort(csws[i])
		m := len(walls[i]) / 2
		out[i] = blockStats{walls[i][m], cpus[i][m], csws[i][m]}
	}
	return out
}

// BenchmarkTracedRunVAD: Silero VAD, one thread, every Run traced, spans
// exported over OTLP to the in-process receiver. Sides, interleaved: the bare
// Run; ortel with no-op providers (ortel's own code); ortel with the SDK's
// batcher; ortel with spanbatch; the SDK floor (a bare span + Record after
// the bare Run) with each processor. b.N is the number of blocks of 200.
func BenchmarkTracedRunVAD(b *testing.B) { tracedRun(b, vadSession, 200, max(b.N, 9)) }

// BenchmarkTracedRunDet is BenchmarkTracedRunVAD on PaddleOCR det, in
// blocks of 2 runs.
func BenchmarkTracedRunDet(b *testing.B) { tracedRun(b, detSession, 2, max(b.N, 3)) }

func tracedRun(b *testing.B, open func(*testing.B, ...Option) (*DynamicSession, []ort.Value, []ort.Value), block, rounds int) {
	r, err := otlptest.Start()
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { r.Close() })
	sd := newTracedSides(b, open, r.Endpoint())
	bare, in, out := sd.bare, sd.in, sd.out
	flSDK := newFloor(b, sd.tpSDK, sd.mp, sd.sdk)
	flOurs := newFloor(b, sd.tpOurs, sd.mp, sd.ours)
	ctx := context.Background()
	res := interleaveCPU(b, block, rounds, []func(){
		func() { bare.Run(in, out) },
		func() { sd.noop.Run(ctx, in, out) },
		func() { sd.sdk.Run(ctx, in, out) },
		func() { sd.ours.Run(ctx, in, out) },
		func() { bare.Run(in, out); flSDK.once(ctx) },
		func() { bare.Run(in, out); flOurs.once(ctx) },
	})
	base := res[0]
	pct := func(x blockStats) float64 { return 100 * (x.cpu - base.cpu) / base.cpu }
	b.ReportMetric(base.wall, "bare-wall-ns")
	b.ReportMetric(base.cpu, "bare-cpu-ns")
	b.ReportMetric(pct(res[1]), "noop-cpu-%")
	b.ReportMetric(pct(res[2]), "sdkbatch-cpu-%")
	b.ReportMetric(pct(res[3]), "spanbatch-cpu-%")
	b.ReportMetric(pct(res[4]), "floor-sdkbatch-cpu-%")
	b.ReportMetric(pct(res[5]), "floor-spanbatch-cpu-%")
	b.ReportMetric(res[2].wall-base.wall, "sdkbatch-wall-added-ns")
	b.ReportMetric(res[3].wall-base.wall, "spanbatch-wall-added-ns")
	b.ReportMetric(base.csw, "bare-csw/run")
	b.ReportMetric(res[2].csw, "sdkbatch-csw/run")
	b.ReportMetric(res[3].csw, "spanbatch-csw/run")
}

// BenchmarkTracedRunVADCollector is the library's budget as a service
// sees it: Silero VAD, one intra-op thread, every Run traced through the
// public instrument API, spans exported over OTLP/gRPC to the real
// OpenTelemetry Collector (scripts/build-collector.sh) running as another
// process. Sides, interleaved in blocks of 200 Runs on one ORT session
// (shuffled each round): the bare Run, no-op providers, the public
// spanbatch processor, the SDK's BatchSpanProcessor, and spanbatch
// discarding its batches in-process. The load average is logged before
// and after.
func BenchmarkTracedRunVADCollector(b *testing.B) {
	sd := newTracedSides(b, vadSession, startCollector(b))
	ctx := context.Background()
	// A fourth traced side that stops at the processor: spanbatch handing
	// its batches to an exporter that discards them, so no encoding, no
	// gRPC and no collector digesting them next door. What it costs over
	// bare is the span and the Record themselves.
	tpDiscard := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()),
		sdktrace.WithSpanProcessor(spanbatch.New(noopExporter{}, spanbatch.WithMaxQueueSize(1<<16))))
	b.Cleanup(func() { tpDiscard.Shutdown(context.Background()) })
	discard, err := WrapDynamic(sd.bare, WithModelName(sd.noop.ModelName()), WithTracerProvider(tpDiscard), WithMeterProvider(sd.mp))
	if err != nil {
		b.Fatal(err)
	}
	sides := []func(){
		func() { sd.bare.Run(sd.in, sd.out) },
		func() { sd.noop.Run(ctx, sd.in, sd.out) },
		func() { sd.ours.Run(ctx, sd.in, sd.out) },
		func() { sd.sdk.Run(ctx, sd.in, sd.out) },
		func() { discard.Run(ctx, sd.in, sd.out) },
	}
	// A service calls Run from whatever goroutine serves the request; an
	// inference worker pool may lock each worker to its OS thread. Both
	// are measured: when the runtime moves the calling goroutine to another
	// thread (more likely with exporter goroutines waking beside it), ONNX
	// Runtime's Run starts cold on that thread and core.
	for _, locked := range []bool{false, true} {
		name := "goroutine"
		if locked {
			name = "locked-thread"
		}
		b.Run(name, func(b *testing.B) {
			if locked {
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
			}
			load0 := loadAverage()
			res := interleaveCPU(b, 200, max(b.N, 9), sides)
			b.Logf("load average before %s, after %s", load0, loadAverage())
			base := res[0]
			pct := func(x blockStats) float64 { return 100 * (x.cpu - base.cpu) / base.cpu }
			b.ReportMetric(base.cpu, "bare-cpu-ns")
			b.ReportMetric(pct(res[1]), "noop-cpu-%")
			b.ReportMetric(pct(res[4]), "discard-cpu-%")
			b.ReportMetric(pct(res[2]), "spanbatch-cpu-%")
			b.ReportMetric(pct(res[3]), "sdkbatch-cpu-%")
			b.ReportMetric(base.csw, "bare-csw/run")
			b.ReportMetric(res[2].csw, "spanbatch-csw/run")
			b.ReportMetric(res[3].csw, "sdkbatch-csw/run")
		})
	}
}

// loadAverage is the first three fields of /proc/loadavg.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	return strings.Join(f[:min(3, len(f))], " ")
}

// startCollector runs the project's collector binary with an OTLP/gRPC
// receiver on a free loopback port and a debug exporter that only counts,
// and returns the receiver's address once it accepts connections.
func startCollector(b *testing.B) string {
	out, err := exec.Command("../scripts/build-collector.sh", "--path").Output()
	bin := strings.TrimSpace(string(out))
	if err != nil || bin == "" {
		testenv.Missing(b, "the collector's path: %v", err)
	}
	if _, err := os.Stat(bin); err != nil {
		testenv.Missing(b, "the collector is not built (make collector): %v", err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	addr := lis.Addr().String()
	lis.Close()
	cfg := filepath.Join(b.TempDir(), "collector.yaml")
	yaml := `receivers:
  otlp:
    protocols:
      grpc:
        endpoint: ` + addr + `
exporters:
  debug:
    verbosity: basic
    sampling_initial: 1
    sampling_thereafter: 1000
service:
  telemetry:
    metrics:
      level: none
    logs:
      level: error
  pipelines:
    traces:
      receivers: [otlp]
      exporters: [debug]
`
	if err := os.WriteFile(cfg, []byte(yaml), 0o644); err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(bin, "--config", cfg)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = cmd.Process.Signal(syscall.SIGTERM); _ = cmd.Wait() })
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return addr
		}
		if time.Now().After(deadline) {
			b.Fatalf("the collector did not listen on %s: %v", addr, err)
		}
		time.Sleep(50 * time.Millisecond) // polling a port that is coming up
	}
}

// profilingCost compares, interleaved, blocks of 100 runs of an unprofiled
// session with blocks of 100 runs of a session profiling 1 run in 100, and
// of one profiling 1 run in 100 capped at 2% CPU (Profiling.MaxCPUShare).
// It reports each side's CPU delta, the p99 of the unprofiled runs, the
// RSS growth over the profiled runs, and a profiled run's latency over the
// median unprofiled one.
func profilingCost(b *testing.B, open func(*testing.B, ...Option) (*DynamicSession, []ort.Value, []ort.Value), blocks int) {
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spanbatch.New(noopExporter{}, spanbatch.WithMaxQueueSize(1<<16))))
	b.Cleanup(func() { tp.Shutdown(context.Background()) })
	// Every side runs the same ORT session (wrapped, closed once): two
	// sessions of one model differ by more than what is measured here.
	plain, in, out := open(b, WithTracerProvider(tp), WithMeterProvider(mp))
	wrap := func(p Profiling) *DynamicSession {
		s, err := WrapDynamic(plain.Unwrap(), WithModelName(plain.ModelName()), WithTracerProvider(tp), WithMeterProvider(mp), WithProfiling(p))
		if err != nil {
			b.Skipf("profiling a wrapped session needs ONNX Runtime 1.25 or later: %v", err)
		}
		b.Cleanup(func() { // not Close: that would destroy the shared session
			s.Flush(context.Background())
			if s.prof.ownDir {
				os.RemoveAll(s.prof.dir)
			}
		})
		return s
	}
	prof := wrap(Profiling{EveryN: 100})
	capped := wrap(Profiling{EveryN: 100, MaxCPUShare: 0.02})
	ctx := context.Background()
	const block = 100
	type side struct {
		s               *DynamicSession
		lat, profiled   []float64
		cpu             time.Duration
		blocks          []float64 // CPU of each measured block
		measureProfiled bool
	}
	sides := []*side{{s: plain}, {s: prof, measureProfiled: true}, {s: capped, measureProfiled: true}}
	runBlock := func(sd *side, keep bool) {
		c := cpuNow()
		for j := 0; j < block; j++ {
			before := sd.s.ProfilingStats().Profiled
			t := time.Now()
			if err := sd.s.Run(ctx, in, out); err != nil {
				b.Fatal(err)
			}
			d := float64(time.Since(t).Nanoseconds())
			if !keep {
				continue
			}
			if sd.measureProfiled && sd.s.ProfilingStats().Profiled != before {
				sd.profiled = append(sd.profiled, d)
			} else {
				sd.lat = append(sd.lat, d)
			}
		}
		// The block's profiles are emitted in the background: wait for them
		// so that their CPU counts in this block, not in the next side's.
		sd.s.Flush(ctx)
		if keep {
			d := cpuNow() - c
			sd.cpu += d
			sd.blocks = append(sd.blocks, float64(d))
		}
	}
	// Warm all up (the first profiled run pays one-time costs).
	for _, sd := range sides {
		runBlock(sd, false)
		sd.s.Flush(ctx)
	}
	rss0 := rssBytes()
	b.ResetTimer()
	for i := 0; i < blocks; i++ {
		// Rotate which side goes first: a block right after another runs
		// with warmer caches.
		for k := range sides {
			runBlock(sides[(i+k)%len(sides)], true)
		}
	}
	for _, sd := range sides {
		sd.s.Flush(ctx)
	}
	rss1 := rssBytes()
	b.StopTimer()
	pctl := func(v []float64, q float64) float64 {
		slices.Sort(v)
		if len(v) == 0 {
			return 0
		}
		return v[min(len(v)-1, int(q*float64(len(v))))]
	}
	p50 := pctl(sides[0].lat, 0.5)
	pct := func(sd *side) float64 { return 100 * (float64(sd.cpu) - float64(sides[0].cpu)) / float64(sides[0].cpu) }
	// The median over rounds of a side's block against the plain block of
	// the same round: a burst of another process on the shared machine
	// moves the sums above, not this.
	medPct := func(sd *side) float64 {
		r := make([]float64, len(sd.blocks))
		for i := range r {
			r[i] = 100 * (sd.blocks[i] - sides[0].blocks[i]) / sides[0].blocks[i]
		}
		return pctl(r, 0.5)
	}
	b.ReportMetric(pct(sides[1]), "cpu-delta-%")
	b.ReportMetric(pct(sides[2]), "capped-cpu-delta-%")
	b.ReportMetric(medPct(sides[1]), "median-block-cpu-delta-%")
	b.ReportMetric(medPct(sides[2]), "capped-median-block-cpu-delta-%")
	b.ReportMetric(pctl(sides[0].lat, 0.99)/1e3, "p99-plain-us")
	b.ReportMetric(pctl(sides[1].lat, 0.99)/1e3, "p99-unprofiled-of-profiling-us")
	b.ReportMetric(pctl(sides[2].lat, 0.99)/1e3, "p99-unprofiled-of-capped-us")
	b.ReportMetric(pctl(sides[1].profiled, 0.5)/p50, "profiled/unprofiled")
	b.ReportMetric(float64(len(sides[1].profiled)), "profiled-runs")
	b.ReportMetric(float64(len(sides[2].profiled)), "capped-profiled-runs")
	b.ReportMetric(float64(rss1-rss0)/(1<<20), "rss-growth-MB")
	b.ReportMetric(float64(rss1)/(1<<20), "rss-MB")
	for _, sd := range sides[1:] {
		st := sd.s.ProfilingStats()
		if st.Selected != st.Emitted || st.Missed != 0 {
			b.Errorf("profiling stats %+v: every selected run should be emitted", st)
		}
	}
	st := capped.ProfilingStats()
	b.ReportMetric(st.EffectiveEveryN, "capped-every-n")
	b.ReportMetric(100*st.CPUShare, "capped-measured-%")
}

type noopExporter struct{}

func (noopExporter) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (noopExporter) Shutdown(context.Context) error                             { return nil }

// BenchmarkProfilingCostVAD: 1 run in 100 profiled, b.N blocks of 100 runs
// per side (200 gives the 20,000 runs of the budget).
func BenchmarkProfilingCostVAD(b *testing.B) { profilingCost(b, vadSession, max(b.N, 10)) }

// BenchmarkProfilingCostDet: PaddleOCR det, b.N blocks of 100 runs per side
// (4 gives the 400 runs of the budget).
func BenchmarkProfilingCostDet(b *testing.B) { profilingCost(b, detSession, max(b.N, 1)) }
