// Command http-service is a Go HTTP service that serves text detection
// (PaddleOCR det) and traces every request with ortel, as a service would
// adopt it: net/http + otelhttp, the service's own OpenTelemetry SDK setup,
// two pipeline stages around the model, operator profiling of sampled runs
// and of the runs after a slow one, and a graceful shutdown under load.
//
// It imports only public packages, so it builds when copied out of the ortel
// repository. Run it with a collector listening (OTEL_EXPORTER_OTLP_ENDPOINT,
// default localhost:4317):
//
//	go run ./examples/http-service -addr 127.0.0.1:8080
//	curl '127.0.0.1:8080/detect?seed=3'
//	curl -X POST 127.0.0.1:8080/debug/profile   # profile the next 5 runs
//
// A trace reads: GET /detect → preprocess → detect → run paddleocr-det →
// one span per operator (for profiled runs) → postprocess.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	ort "github.com/yalue/onnxruntime_go"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"

	"github.com/ortel-dev/ortel/instrument"
	"github.com/ortel-dev/ortel/instrument/ortlib"
	"github.com/ortel-dev/ortel/instrument/spanbatch"
)

// config is what the flags set.
type config struct {
	addr         string
	model        string
	size         int           // image side in pixels, a multiple of 32
	profileEvery int           // profile every Nth run; 0 = off
	slowRun      time.Duration // profile the next runs after a slower one; 0 = off
	grace        time.Duration // how long shutdown waits for requests and runs
}

func main() {
	var cfg config
	flag.StringVar(&cfg.addr, "addr", "127.0.0.1:8080", "listen address")
	flag.StringVar(&cfg.model, "model", filepath.Join(ortlib.CacheDir(), "models", "ch_PP-OCRv4_det_infer.onnx"), "PaddleOCR det model file")
	flag.IntVar(&cfg.size, "size", 640, "image side in pixels (a multiple of 32)")
	flag.IntVar(&cfg.profileEvery, "profile-every", 100, "profile every Nth run's operators (0 = off)")
	flag.DurationVar(&cfg.slowRun, "slow-run", time.Second, "profile the next 5 runs after a run slower than this (0 = off)")
	flag.DurationVar(&cfg.grace, "grace", 10*time.Second, "shutdown grace period")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	lis, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		log.Fatal(err)
	}
	log.Printf("listening on %s", lis.Addr())
	if err := run(ctx, lis, cfg); err != nil {
		log.Fatal(err)
	}
}

// setupOTel is the service's own SDK setup: OTLP exporters (gRPC, or
// http/protobuf when OTEL_EXPORTER_OTLP_PROTOCOL says so) configured by the
// standard OTEL_EXPORTER_OTLP_* variables, batched spans, periodic
// metrics, W3C trace context. ortel uses whatever providers it is given.
func setupOTel(ctx context.Context) (*sdktrace.TracerProvider, *sdkmetric.MeterProvider, error) {
	res, err := newResource("http-service")
	if err != nil {
		return nil, nil, err
	}
	spanExp, metricExp, err := newExporters(ctx)
	if err != nil {
		return nil, nil, err
	}
	// spanbatch instead of sdktrace.WithBatcher: the SDK's batcher wakes a
	// goroutine for every ended span, which next to a short Run costs more
	// CPU than the span itself; spanbatch wakes once per batch and reads
	// the same OTEL_BSP_* variables.
	tp := sdktrace.NewTracerProvider(sdktrace.WithResource(res), sdktrace.WithSpanProcessor(spanbatch.New(spanExp)))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithResource(res), sdkmetric.WithReader(sdkmetric.NewPeriodicReader(metricExp)))
	otel.SetTracerProvider(tp)
	otel.SetMeterProvider(mp)
	otel.SetTextMapPropagator(propagation.TraceContext{})
	return tp, mp, nil
}

// service holds the model session and the pipeline marks.
type service struct {
	sess     *instrument.DynamicSession
	pipeline *instrument.Pipeline
	size     int
}

// run serves on lis until ctx ends, then shuts down in order: stop taking
// requests and wait for those in flight, close the session (waits for its
// runs and emits pending operator spans), then flush and stop the providers.
func run(ctx context.Context, lis net.Listener, cfg config) error {
	if cfg.size <= 0 || cfg.size%32 != 0 {
		return fmt.Errorf("-size %d: want a positive multiple of 32", cfg.size)
	}
	if _, err := ortlib.Init(); err != nil {
		return err
	}
	tp, mp, err := setupOTel(ctx)
	if err != nil {
		return fmt.Errorf("OpenTelemetry setup: %w", err)
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), cfg.grace)
		defer cancel()
		tp.Shutdown(sctx)
		mp.Shutdown(sctx)
	}()

	so, err := ort.NewSessionOptions()
	if err != nil {
		return err
	}
	defer so.Destroy()
	so.SetIntraOpNumThreads(1) // one thread per request: requests run side by side
	sess, err := instrument.NewDynamicSession(ctx, cfg.model, []string{"x"}, []string{"sigmoid_0.tmp_0"}, so,
		instrument.WithModelName("paddleocr-det"),
		instrument.WithProfiling(instrument.Profiling{EveryN: cfg.profileEvery, SlowRun: cfg.slowRun}))
	if err != nil {
		return err
	}
	svc := &service{sess: sess, pipeline: instrument.NewPipeline("ocr"), size: cfg.size}

	mux := http.NewServeMux()
	mux.HandleFunc("GET /detect", svc.detect)
	mux.HandleFunc("POST /debug/profile", svc.profile)
	srv := &http.Server{
		Handler:           otelhttp.NewHandler(mux, "http-service"),
		ReadHeaderTimeout: 5 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(lis) }()

	select {
	case err := <-served:
		sess.Close(context.Background())
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), cfg.grace)
	defer cancel()
	var errs []error
	if err := srv.Shutdown(sctx); err != nil {
		errs = append(errs, fmt.Errorf("stop serving: %w", err))
	}
	// Handlers still running after the grace period keep their runs: Close
	// waits for them (bounded by sctx) and never destroys the session under
	// one. Close before the providers stop, or operator spans are lost.
	if err := sess.Close(sctx); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// detect makes a synthetic page (seeded), runs the detector on it and
// returns the share of pixels that look like text.
func (s *service) detect(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	seed, _ := strconv.Atoi(r.URL.Query().Get("seed"))

	_, pre := s.pipeline.StartStage(ctx, "preprocess")
	img := syntheticPage(s.size, seed)
	in, err := ort.NewTensor(ort.NewShape(1, 3, int64(s.size), int64(s.size)), img)
	pre.End(err)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	defer in.Destroy()

	dctx, det := s.pipeline.StartStage(ctx, "detect")
	outs := []ort.Value{nil}
	err = s.sess.Run(dctx, []ort.Value{in}, outs)
	det.End(err)
	if errors.Is(err, instrument.ErrClosed) {
		http.Error(w, "shutting down", http.StatusServiceUnavailable)
		return
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	defer outs[0].Destroy()

	_, post := s.pipeline.StartStage(ctx, "postprocess")
	prob := outs[0].(*ort.Tensor[float32]).GetData()
	text := 0
	for _, p := range prob {
		if p > 0.3 {
			text++
		}
	}
	post.End(nil)
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"seed": seed, "text_ratio": float64(text) / float64(len(prob))})
}

// profile profiles the operators of the next runs, at most once per 10s.
func (s *service) profile(w http.ResponseWriter, _ *http.Request) {
	switch err := s.sess.TriggerProfiling(0); {
	case errors.Is(err, instrument.ErrRateLimited):
		http.Error(w, err.Error(), http.StatusTooManyRequests)
	case err != nil:
		http.Error(w, err.Error(), http.StatusInternalServerError)
	default:
		w.WriteHeader(http.StatusAccepted)
	}
}

// syntheticPage draws dark text-like bars on a light background.
func syntheticPage(size, seed int) []float32 {
	img := make([]float32, 3*size*size)
	for i := range img {
		img[i] = 0.9
	}
	for line := 0; line < size/32; line++ {
		y0 := line*32 + 8 + seed%8
		for y := y0; y < min(y0+10, size); y++ {
			for x := 16; x < size-16-(line*37+seed)%(size/2); x++ {
				if (x/6)%5 == 4 {
					continue // gaps between words
				}
				for c := 0; c < 3; c++ {
					img[c*size*size+y*size+x] = 0.1
				}
			}
		}
	}
	return img
}

// otlpProtocol is the OTLP transport of a signal ("TRACES" or "METRICS"):
// OTEL_EXPORTER_OTLP_<SIGNAL>_PROTOCOL, else OTEL_EXPORTER_OTLP_PROTOCOL,
// else grpc (as ortel's own commands; the spec's default is http/protobuf).
func otlpProtocol(signal string) string {
	if p := os.Getenv("OTEL_EXPORTER_OTLP_" + signal + "_PROTOCOL"); p != "" {
		return p
	}
	if p := os.Getenv("OTEL_EXPORTER_OTLP_PROTOCOL"); p != "" {
		return p
	}
	return "grpc"
}

// newExporters returns OTLP span and metric exporters over each signal's
// protocol; both read the standard OTEL_EXPORTER_OTLP_* variables.
func newExporters(ctx context.Context) (sdktrace.SpanExporter, sdkmetric.Exporter, error) {
	var spanExp sdktrace.SpanExporter
	var err error
	if otlpProtocol("TRACES") == "grpc" {
		spanExp, err = otlptracegrpc.New(ctx)
	} else {
		spanExp, err = otlptracehttp.New(ctx)
	}
	if err != nil {
		return nil, nil, err
	}
	var metricExp sdkmetric.Exporter
	if otlpProtocol("METRICS") == "grpc" {
		metricExp, err = otlpmetricgrpc.New(ctx)
	} else {
		metricExp, err = otlpmetrichttp.New(ctx)
	}
	if err != nil {
		return nil, nil, errors.Join(err, spanExp.Shutdown(ctx))
	}
	return spanExp, metricExp, nil
}

// newResource names the service, letting OTEL_SERVICE_NAME and
// OTEL_RESOURCE_ATTRIBUTES override the name given in code.
func newResource(service string) (*resource.Resource, error) {
	res, err := resource.Merge(resource.Default(), resource.NewSchemaless(semconv.ServiceName(service)))
	if err != nil {
		return nil, err
	}
	return resource.Merge(res, resource.Environment())
}
