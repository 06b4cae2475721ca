package liveview

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/ortel-dev/ortel/semconv"
)

// BenchmarkRunToStream measures the delay from a run's end (its duration
// recorded) to the first streamed snapshot that counts it, read by a real
// SSE client over HTTP with the view sampling at its default 12.5 Hz. The
// budget is 200 ms to the page; the page renders a frame in a few ms more.
func BenchmarkRunToStream(b *testing.B) {
	reader := NewReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer func() { _ = mp.Shutdown(context.Background()) }()
	h, err := semconv.NewOnnxruntimeRunDuration(mp.Meter("bench"))
	if err != nil {
		b.Fatal(err)
	}
	v := New(reader, Config{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go v.Run(ctx)
	srv := httptest.NewServer(v.Handler(""))
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/api/v1/stream")
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	type frame struct {
		total uint64
		at    time.Time
	}
	frames := make(chan frame, 64)
	go func() {
		br := bufio.NewReader(resp.Body)
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				close(frames)
				return
			}
			if data, ok := strings.CutPrefix(line, "data: "); ok {
				var s Snapshot
				if json.Unmarshal([]byte(data), &s) == nil {
					frames <- frame{s.Runs.Total, time.Now()}
				}
			}
		}
	}()
	var delays []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		h.Record(ctx, 0.001)
		for f := range frames {
			if f.total >= uint64(i+1) {
				delays = append(delays, f.at.Sub(start))
				break
			}
		}
	}
	b.StopTimer()
	sort.Slice(delays, func(i, j int) bool { return delays[i] < delays[j] })
	b.ReportMetric(float64(delays[len(delays)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(delays[len(delays)*99/100].Microseconds())/1000, "p99-ms")
	b.ReportMetric(float64(delays[len(delays)-1].Microseconds())/1000, "max-ms")
}
