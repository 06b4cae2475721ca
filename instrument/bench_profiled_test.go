package instrument

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	ort "github.com/yalue/onnxruntime_go"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/ortel-dev/ortel/instrument/internal/ortapi"
	"github.com/ortel-dev/ortel/instrument/spanbatch"
)

// BenchmarkProfiledRunVAD: what one profiled run of Silero VAD costs, with
// every run profiled. Sides, interleaved in blocks of 50 runs, on one ORT
// session: the unprofiled run; ORT alone profiling the run (run-level
// profiling to a file on /dev/shm, the file removed, nothing read); ortel
// profiling the run (the same, plus reading the profile and emitting its
// operator spans to a real SDK with a no-op exporter; the block waits for
// the emission, so its CPU is counted); ortel again with each emission
// finished before the next run (no overlap of ORT and the emission on the
// machine's cores). b.N is the number of rounds.
//
//	go test -run '^$' -bench ProfiledRunVAD -benchtime 20x ./instrument/
func BenchmarkProfiledRunVAD(b *testing.B) {
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spanbatch.New(noopExporter{}, spanbatch.WithMaxQueueSize(1<<16))))
	b.Cleanup(func() { tp.Shutdown(context.Background()) })
	plain, in, out := vadSession(b, WithTracerProvider(tp), WithMeterProvider(mp))
	if err := ortapi.RunProfiling(); err != nil {
		b.Skipf("per-run profiling: %v", err)
	}
	bare := plain.Unwrap()
	prof, err := WrapDynamic(bare, WithModelName("silero-vad"), WithTracerProvider(tp), WithMeterProvider(mp),
		WithProfiling(Profiling{EveryN: 1}))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { prof.Close(context.Background()) })
	dir := profileTempDir(b)
	ro, err := ort.NewRunOptions()
	if err != nil {
		b.Fatal(err)
	}
	defer ro.Destroy()
	prefix := filepath.Join(dir, "ort")
	ctx := context.Background()
	const block = 50
	res := interleaveCPU(b, 1, max(b.N, 5), []func(){
		func() {
			for range block {
				bare.Run(in, out)
			}
		},
		func() {
			for range block {
				if err := ortapi.EnableRunProfiling(ro, prefix); err != nil {
					b.Fatal(err)
				}
				bare.RunWithOptions(in, out, ro)
				ortapi.DisableRunProfiling(ro)
				files, _ := filepath.Glob(prefix + "_*.json")
				for _, f := range files {
					os.Remove(f)
				}
			}
		},
		func() {
			for range block {
				prof.Run(ctx, in, out)
			}
			prof.Flush(ctx)
		},
		func() { // the same, each emission done before the next run starts
			for range block {
				prof.Run(ctx, in, out)
				prof.Flush(ctx)
			}
		},
	})
	st := prof.ProfilingStats()
	if st.Selected != st.Emitted || st.Missed != 0 {
		b.Errorf("profiling stats %+v: every selected run should be emitted", st)
	}
	base := res[0]
	b.ReportMetric(base.cpu/block/1e3, "plain-cpu-us")
	b.ReportMetric(res[1].cpu/block/1e3, "ort-profiled-cpu-us")
	b.ReportMetric(res[2].cpu/block/1e3, "ortel-profiled-cpu-us")
	b.ReportMetric(res[1].cpu/base.cpu, "ort-profiled/plain")
	b.ReportMetric(res[2].cpu/base.cpu, "ortel-profiled/plain")
	b.ReportMetric((res[2].cpu-res[1].cpu)/block/1e3, "ortel-share-cpu-us")
	b.ReportMetric(res[2].wall/base.wall, "ortel-profiled/plain-wall")
	b.ReportMetric((res[3].cpu-res[1].cpu)/block/1e3, "ortel-share-serial-cpu-us")
	b.ReportMetric(float64(st.Spans)/float64(max(st.Emitted, 1)), "spans/run")
}

// BenchmarkORTProfiledRunVAD loops ORT's own run-level profiling of Silero
// VAD (no ortel), one run per op, file on /dev/shm removed after each run:
// the loop to put under perf to see where ORT's profiled run goes.
//
//	go test -c -o /tmp/inst.test ./instrument/
//	perf record -g /tmp/inst.test -test.run '^$' -test.bench ORTProfiledRunVAD -test.benchtime 3000x
func BenchmarkORTProfiledRunVAD(b *testing.B) {
	plain, in, out := vadSession(b)
	if err := ortapi.RunProfiling(); err != nil {
		b.Skipf("per-run profiling: %v", err)
	}
	bare := plain.Unwrap()
	dir := profileTempDir(b)
	ro, err := ort.NewRunOptions()
	if err != nil {
		b.Fatal(err)
	}
	defer ro.Destroy()
	prefix := filepath.Join(dir, "ort")
	profiled := os.Getenv("ORTEL_BENCH_UNPROFILED") == ""
	b.ReportAllocs()
	for b.Loop() {
		if profiled {
			if err := ortapi.EnableRunProfiling(ro, prefix); err != nil {
				b.Fatal(err)
			}
		}
		if err := bare.RunWithOptions(in, out, ro); err != nil {
			b.Fatal(err)
		}
		if profiled {
			ortapi.DisableRunProfiling(ro)
			files, _ := filepath.Glob(prefix + "_*.json")
			for _, f := range files {
				os.Remove(f)
			}
		}
	}
}

// profileTempDir is a folder for ORT's profile files where instrument puts
// its own (memoryTempRoot: /dev/shm on Linux), removed after the benchmark.
func profileTempDir(b *testing.B) string {
	b.Helper()
	dir, err := os.MkdirTemp(memoryTempRoot, "ortel-bench-")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}
