package main

import (
	"context"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	colmetricspb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
)

// Fleet is the simulated nodes: each node's agent exports its metrics
// every interval (at a random phase, as agents started at different
// times do) and its sampled run spans every spanBatch, over gRPC to the
// gateway, as the agent's OTLP exporter does.
type Fleet struct {
	tmpl      *colmetricspb.ExportMetricsServiceRequest
	endpoint  string
	interval  time.Duration
	spanBatch time.Duration
	maxConns  int
	start     uint64

	shape atomic.Pointer[Shape]

	mu      sync.Mutex
	conns   []*grpc.ClientConn
	nodes   []*Node
	cancels []context.CancelFunc
	wg      sync.WaitGroup

	stats fleetStats
}

// fleetStats is what the senders saw in the current measurement window.
type fleetStats struct {
	mu sync.Mutex
	w  window
}

// window is the senders' record of one measurement window.
type window struct {
	latencies     []time.Duration // metric exports
	metricExports int
	spanExports   int
	pointsSent    int64
	spansSent     int64
	errors        map[string]int // by gRPC code
}

func (s *fleetStats) record(metric bool, d time.Duration, n int, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	w := &s.w
	if err != nil {
		if w.errors == nil {
			w.errors = map[string]int{}
		}
		w.errors[status.Code(err).String()]++
		return
	}
	if metric {
		w.metricExports++
		w.latencies = append(w.latencies, d)
		w.pointsSent += int64(n)
	} else {
		w.spanExports++
		w.spansSent += int64(n)
	}
}

// take returns the window so far and starts a new one.
func (s *fleetStats) take() window {
	s.mu.Lock()
	defer s.mu.Unlock()
	w := s.w
	s.w = window{}
	return w
}

func (w window) quantile(q float64) time.Duration {
	if len(w.latencies) == 0 {
		return 0
	}
	l := slices.Clone(w.latencies)
	slices.Sort(l)
	return l[min(len(l)-1, int(q*float64(len(l))))]
}

func (w window) errorCount() int {
	n := 0
	for _, c := range w.errors {
		n += c
	}
	return n
}

// NewFleet prepares a fleet sending to endpoint (host:port, plaintext
// gRPC). Nodes share at most maxConns connections.
func NewFleet(tmpl *colmetricspb.ExportMetricsServiceRequest, endpoint string, interval, spanBatch time.Duration, maxConns int, shape Shape) *Fleet {
	f := &Fleet{tmpl: tmpl, endpoint: endpoint, interval: interval, spanBatch: spanBatch, maxConns: maxConns, start: uint64(time.Now().UnixNano())}
	f.shape.Store(&shape)
	return f
}

// SetSpanRate changes the sampled run spans per second of every node.
func (f *Fleet) SetSpanRate(perNode float64) {
	s := *f.shape.Load()
	s.SpansPerSec = perNode
	f.shape.Store(&s)
}

// Grow starts nodes until there are n.
func (f *Fleet) Grow(ctx context.Context, n int) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for len(f.nodes) < n {
		id := len(f.nodes)
		node, err := NewNode(f.tmpl, id, *f.shape.Load(), f.start)
		if err != nil {
			return err
		}
		var conn *grpc.ClientConn
		if len(f.conns) < f.maxConns {
			conn, err = grpc.NewClient(f.endpoint, grpc.WithTransportCredentials(insecure.NewCredentials()))
			if err != nil {
				return err
			}
			f.conns = append(f.conns, conn)
		} else {
			conn = f.conns[id%f.maxConns]
		}
		nctx, cancel := context.WithCancel(ctx)
		f.nodes = append(f.nodes, node)
		f.cancels = append(f.cancels, cancel)
		f.wg.Add(2)
		go f.runMetrics(nctx, node, colmetricspb.NewMetricsServiceClient(conn))
		go f.runSpans(nctx, node, coltracepb.NewTraceServiceClient(conn))
	}
	return nil
}

// Nodes is the number of running nodes; PointsPerExport the data points
// of one node's export.
func (f *Fleet) Nodes() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.nodes)
}

// PointsPerExport is the data points in one export of the first node
// (every node has the same shape).
func (f *Fleet) PointsPerExport() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.nodes) == 0 {
		return 0
	}
	return f.nodes[0].Points()
}

// Stop ends every node and closes the connections.
func (f *Fleet) Stop() {
	f.mu.Lock()
	for _, c := range f.cancels {
		c()
	}
	f.mu.Unlock()
	f.wg.Wait()
	for _, c := range f.conns {
		_ = c.Close()
	}
}

func (f *Fleet) runMetrics(ctx context.Context, n *Node, client colmetricspb.MetricsServiceClient) {
	defer f.wg.Done()
	rng := rand.New(rand.NewPCG(uint64(n.ID), 7))
	if !sleep(ctx, time.Duration(rng.Int64N(int64(f.interval)))) {
		return
	}
	last := time.Now()
	t := time.NewTicker(f.interval)
	defer t.Stop()
	for {
		now := time.Now()
		n.Tick(uint64(now.UnixNano()), now.Sub(last).Seconds(), *f.shape.Load())
		last = now
		ectx, cancel := context.WithTimeout(ctx, 10*time.Second) // the agent's export timeout
		_, err := client.Export(ectx, n.Metrics)
		cancel()
		if ctx.Err() != nil {
			return
		}
		f.stats.record(true, time.Since(now), n.Points(), err)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (f *Fleet) runSpans(ctx context.Context, n *Node, client coltracepb.TraceServiceClient) {
	defer f.wg.Done()
	if len(n.pods) == 0 {
		return
	}
	rng := rand.New(rand.NewPCG(uint64(n.ID), 11))
	if !sleep(ctx, time.Duration(rng.Int64N(int64(f.spanBatch)))) {
		return
	}
	t := time.NewTicker(f.spanBatch)
	defer t.Stop()
	owed := 0.0
	for {
		owed += f.shape.Load().SpansPerSec * f.spanBatch.Seconds()
		if k := int(owed); k > 0 {
			owed -= float64(k)
			now := time.Now()
			ectx, cancel := context.WithTimeout(ctx, 10*time.Second)
			_, err := client.Export(ectx, n.Spans(k, uint64(now.UnixNano()), rng))
			cancel()
			if ctx.Err() != nil {
				return
			}
			f.stats.record(false, time.Since(now), k, err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// sleep waits d or until ctx ends; false when ctx ended.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
