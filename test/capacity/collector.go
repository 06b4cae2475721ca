package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/grpc"

	"github.com/ortel-dev/ortel/test/e2e"
	"github.com/ortel-dev/ortel/test/helmcheck"
	"github.com/ortel-dev/ortel/test/stack"
)

// Gateway is the gateway collector as the Helm chart runs it, on loopback.
type Gateway struct {
	cmd                                 *exec.Cmd
	OTLP, Prometheus, Telemetry, Health string // host:port
	Env                                 []string
	ConfigDir                           string
	// MemoryMiB is what the memory limiter lets the collector hold before
	// it refuses data: the chart's limit less its spike headroom.
	MemoryMiB float64
	done      chan error
}

// StartGateway renders the chart (its default values) and starts the
// collector binary with the gateway's two config files (collector.yaml and
// the chart's gateway.yaml overlay) and the Deployment's environment, its
// listeners moved to free loopback ports and its traces exporter pointed
// at tracesEndpoint. gomaxprocs mirrors the container's CPU limit (the Go
// runtime reads the cgroup limit in a pod). The collector's log goes to
// logPath.
func StartGateway(ctx context.Context, root, bin, tracesEndpoint string, gomaxprocs int, dir, logPath string) (*Gateway, error) {
	ms, err := helmcheck.Render(filepath.Join(root, helmcheck.ChartDir), "capacity", "capacity")
	if err != nil {
		return nil, err
	}
	objs, err := helmcheck.Decode(ms)
	if err != nil {
		return nil, err
	}
	var cm map[string]string
	var env []string
	var args []string
	for _, o := range objs {
		switch {
		case o.ConfigMap != nil && strings.HasSuffix(o.Name, "-gateway"):
			cm = o.ConfigMap.Data
		case o.Deployment != nil && strings.HasSuffix(o.Name, "-gateway"):
			c := o.Deployment.Spec.Template.Spec.Containers[0]
			args = c.Args
			for _, e := range c.Env {
				if e.ValueFrom == nil {
					env = append(env, e.Name+"="+e.Value)
				}
			}
		}
	}
	if cm == nil || args == nil {
		return nil, errors.New("the chart rendered no gateway ConfigMap and Deployment")
	}
	var cmdArgs []string
	for _, a := range args {
		name, ok := strings.CutPrefix(a, "--config=/conf/")
		if !ok {
			return nil, fmt.Errorf("gateway arg %q is not a --config under /conf", a)
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(cm[name]), 0o644); err != nil {
			return nil, err
		}
		cmdArgs = append(cmdArgs, "--config", p)
	}
	ports, err := e2e.FreePorts(5)
	if err != nil {
		return nil, err
	}
	addr := func(p int) string { return "127.0.0.1:" + strconv.Itoa(p) }
	g := &Gateway{OTLP: addr(ports[0]), Prometheus: addr(ports[2]), Telemetry: addr(ports[3]), Health: addr(ports[4]), ConfigDir: dir}
	env = append(env,
		"OTELCOL_GRPC_ENDPOINT="+g.OTLP,
		"OTELCOL_HTTP_ENDPOINT="+addr(ports[1]),
		"OTELCOL_PROMETHEUS_ENDPOINT="+g.Prometheus,
		"OTELCOL_TELEMETRY_HOST=127.0.0.1",
		"OTELCOL_TELEMETRY_PORT="+strconv.Itoa(ports[3]),
		"OTELCOL_HEALTH_ENDPOINT="+g.Health,
		"OTELCOL_JAEGER_ENDPOINT="+tracesEndpoint,
		"GOMAXPROCS="+strconv.Itoa(gomaxprocs),
	)
	g.Env = env
	lim, spike := envInt(env, "OTELCOL_MEMORY_LIMIT_MIB"), envInt(env, "OTELCOL_MEMORY_SPIKE_LIMIT_MIB")
	if lim <= 0 {
		return nil, errors.New("the chart's gateway sets no OTELCOL_MEMORY_LIMIT_MIB")
	}
	g.MemoryMiB = float64(lim - spike)
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	g.cmd = exec.Command(bin, cmdArgs...)
	g.cmd.Env = append(os.Environ(), env...)
	g.cmd.Stdout, g.cmd.Stderr = logf, logf
	if err := g.cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("start the collector %s: %w", bin, err)
	}
	g.done = make(chan error, 1)
	go func() { g.done <- g.cmd.Wait(); logf.Close() }()
	// Ready when the health_check extension says so.
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get("http://" + g.Health + "/")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return g, nil
			}
		}
		select {
		case err := <-g.done:
			return nil, fmt.Errorf("the collector exited at start (%v); its log: %s", err, logPath)
		case <-ctx.Done():
			g.Stop()
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			g.Stop()
			return nil, fmt.Errorf("the collector's health endpoint %s did not answer 200 within 60s; its log: %s", g.Health, logPath)
		}
	}
}

// envInt is the whole number NAME=... of env holds (last wins), else 0.
func envInt(env []string, name string) int {
	v := 0
	for _, kv := range env {
		if val, ok := strings.CutPrefix(kv, name+"="); ok {
			v, _ = strconv.Atoi(val)
		}
	}
	return v
}

// PID is the collector's process id.
func (g *Gateway) PID() int { return g.cmd.Process.Pid }

// Stop ends the collector (SIGTERM, then SIGKILL after 10 s).
func (g *Gateway) Stop() {
	_ = g.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-g.done:
	case <-time.After(10 * time.Second):
		_ = g.cmd.Process.Kill()
		<-g.done
	}
}

// Exited reports whether the collector has exited (crashed) already.
func (g *Gateway) Exited() bool { return g.cmd.ProcessState != nil }

// Scrape reads a Prometheus text endpoint (the collector's own metrics or
// its exporter), returning what it holds, its size and how long it took.
func Scrape(ctx context.Context, hostPort string) (Exposition, int64, time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	start := time.Now()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+hostPort+"/metrics", nil)
	if err != nil {
		return Exposition{}, 0, 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return Exposition{}, 0, 0, fmt.Errorf("scrape %s: %w", hostPort, err)
	}
	defer resp.Body.Close()
	cr := &countingReader{r: resp.Body}
	e, err := ParseExposition(cr)
	if err != nil {
		return e, cr.n, time.Since(start), fmt.Errorf("scrape %s: %w", hostPort, err)
	}
	return e, cr.n, time.Since(start), nil
}

type countingReader struct {
	r interface{ Read([]byte) (int, error) }
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// SpanSink stands for the traces backend (Jaeger): an OTLP/gRPC trace
// receiver that counts spans and keeps nothing.
type SpanSink struct {
	coltracepb.UnimplementedTraceServiceServer
	srv   *grpc.Server
	lis   net.Listener
	spans atomic.Int64
}

// StartSpanSink listens on a free loopback port.
func StartSpanSink() (*SpanSink, error) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &SpanSink{srv: grpc.NewServer(), lis: lis}
	coltracepb.RegisterTraceServiceServer(s.srv, s)
	go func() { _ = s.srv.Serve(lis) }()
	return s, nil
}

// Export counts the spans of one request.
func (s *SpanSink) Export(_ context.Context, req *coltracepb.ExportTraceServiceRequest) (*coltracepb.ExportTraceServiceResponse, error) {
	n := 0
	for _, rs := range req.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			n += len(ss.Spans)
		}
	}
	s.spans.Add(int64(n))
	return &coltracepb.ExportTraceServiceResponse{}, nil
}

// Endpoint is the sink's host:port; Spans the spans received so far.
func (s *SpanSink) Endpoint() string { return s.lis.Addr().String() }
func (s *SpanSink) Spans() int64     { return s.spans.Load() }

// Close stops the sink.
func (s *SpanSink) Close() { s.srv.Stop() }

// procStats reads a process's CPU time (user+system) and resident memory
// from /proc.
func procStats(pid int) (cpu time.Duration, rss int64, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0, err
	}
	// The command name may hold spaces: fields start after the last ')'.
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 22 {
		return 0, 0, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f))
	}
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	pages, _ := strconv.ParseInt(f[21], 10, 64)
	const hz = 100 // USER_HZ on Linux
	return time.Duration(utime+stime) * time.Second / hz, pages * int64(os.Getpagesize()), nil
}

// repoRoot is the ortel checkout above the working directory.
func repoRoot() (string, error) { return stack.RepoRoot(".") }
