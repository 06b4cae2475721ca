package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/ortel-dev/ortel/test/otlptest"
	"github.com/ortel-dev/ortel/test/testenv"
)

// TestServiceShutsDownUnderLoad sends requests from four clients, shuts the
// service down while they are still sending, and checks that nothing failed
// with a server error, the service stopped cleanly (no crash: the session
// was closed with runs in flight), and every trace reads
// request → detect → run, with operator spans under every 3rd run.
func TestServiceShutsDownUnderLoad(t *testing.T) {
	testenv.RequireORT(t)
	model := testenv.Model(t, "ch_PP-OCRv4_det_infer.onnx")
	r, err := otlptest.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://"+r.Endpoint())
	t.Setenv("OTEL_EXPORTER_OTLP_INSECURE", "true")

	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, lis, config{model: model, size: 96, profileEvery: 3, grace: time.Minute})
	}()

	url := "http://" + lis.Addr().String() + "/detect?seed="
	var ok, unavailable, refused atomic.Int64
	var wg sync.WaitGroup
	bad := make(chan string, 64)
	stop := make(chan struct{})
	client := &http.Client{Timeout: time.Minute}
	for c := 0; c < 4; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				resp, err := client.Get(fmt.Sprint(url, c*1000+i))
				if err != nil {
					refused.Add(1) // the listener is closed: shutting down
					return
				}
				resp.Body.Close()
				switch resp.StatusCode {
				case http.StatusOK:
					ok.Add(1)
				case http.StatusServiceUnavailable:
					unavailable.Add(1)
				default:
					bad <- resp.Status
				}
			}
		}()
	}
	for ok.Load() < 12 {
		select {
		case err := <-done:
			t.Fatalf("service stopped early: %v", err)
		case <-time.After(10 * time.Millisecond):
		}
	}
	cancel() // shut down with the four clients still sending
	if err := <-done; err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	close(stop)
	wg.Wait()
	close(bad)
	for s := range bad {
		t.Errorf("a request failed with %s", s)
	}
	t.Logf("%d requests served, %d refused with 503, %d after the listener closed", ok.Load(), unavailable.Load(), refused.Load())

	spans := r.Spans()
	byID := map[string]otlptest.Span{}
	for _, s := range spans {
		byID[s.SpanID()] = s
	}
	parentName := func(s otlptest.Span) (otlptest.Span, string) {
		p, found := byID[s.ParentSpanID()]
		if !found {
			return p, ""
		}
		return p, p.GetName()
	}
	kids := map[string]int{}
	for _, s := range spans {
		kids[s.ParentSpanID()]++
	}
	runs := otlptest.SpansNamed(spans, "run paddleocr-det")
	if len(runs) < int(ok.Load()) {
		t.Fatalf("%d run spans for %d served requests", len(runs), ok.Load())
	}
	profiled := 0
	for _, run := range runs {
		stage, name := parentName(run)
		if name != "detect" {
			t.Fatalf("a run's parent is %q, want the detect stage", name)
		}
		if server, _ := parentName(stage); server.GetKind() != tracepb.Span_SPAN_KIND_SERVER {
			t.Fatalf("the detect stage's parent is %q (%v), want the HTTP server span", server.GetName(), server.GetKind())
		}
		if p, _ := otlptest.AttrBool(run.GetAttributes(), "onnxruntime.run.profiled"); p {
			profiled++
			if kids[run.SpanID()] == 0 {
				t.Errorf("profiled run %s has no operator spans", run.SpanID())
			}
		}
	}
	if want := len(runs) / 3; profiled != want {
		t.Errorf("%d of %d runs profiled, want every 3rd: %d", profiled, len(runs), want)
	}
	if len(otlptest.SpansNamed(spans, "preprocess")) == 0 || len(otlptest.SpansNamed(spans, "postprocess")) == 0 {
		t.Error("preprocess/postprocess stage spans missing")
	}
}

func TestBadSize(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer lis.Close()
	err = run(context.Background(), lis, config{size: 100})
	if err == nil || errors.Is(err, context.Canceled) {
		t.Fatalf("size 100 accepted: %v", err)
	}
}
