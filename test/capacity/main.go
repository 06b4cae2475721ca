// Command capacity measures how many nodes one gateway collector of the
// Helm chart serves: it runs the real collector (otelcol-ortel, built from
// otelcol-config/builder-config.yaml) with the chart's gateway
// configuration (otelcol-config/collector.yaml plus the chart's
// gateway.yaml overlay, its environment and its memory limits, GOMAXPROCS
// as its CPU limit), and drives it over loopback from simulated node
// agents: each node exports, every interval, the metrics of a real `ortel
// agent` run (its resource, scopes and attribute sets, read from the run's
// metrics.jsonl) widened to the node's CPUs and inference pods (process
// readings with k8s.pod.uid and container.id, and the run metrics of each
// pod), and sends sampled run spans as `ortel attach` makes them. A
// Prometheus scrape of the gateway's exporter runs at the ServiceMonitor's
// interval, as in a cluster.
//
// Two sweeps, each on a fresh collector: nodes (at a fixed span rate), then
// spans per second (at a fixed node count). Each step runs one interval to
// settle and then measures: points and spans the collector accepted (its
// own metrics on :8888), refused or failed, the collector's CPU time and
// resident memory (/proc), the series and size of the exporter's /metrics,
// and the senders' export latency and errors. A sweep stops at its knee:
// the first step where anything is refused, fails or times out, the
// collector's CPU reaches 90% of its limit, or exports slow past 2 s.
//
//	go run ./test/capacity -collector $(scripts/build-collector.sh) -template out/capacity/agent/metrics.jsonl
//
// `make capacity` runs it with a fresh agent run and writes
// out/capacity/results.md and results.json.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

type config struct {
	collector, template, out string
	nodes                    []int
	spanRates                []float64
	spanNodes                int
	shape                    Shape
	interval, spanBatch      time.Duration
	scrapeEvery              time.Duration
	measure                  int
	gomaxprocs, conns        int
	memMiB                   float64 // the gateway's memory limiter, set by the first sweep
}

func main() {
	var c config
	var nodes, rates string
	flag.StringVar(&c.collector, "collector", "", "the collector binary (scripts/build-collector.sh prints it)")
	flag.StringVar(&c.template, "template", "", "metrics.jsonl of a real `ortel agent` run: the node payload")
	flag.StringVar(&c.out, "out", "out/capacity", "where results.md, results.json and the collector logs go")
	flag.StringVar(&nodes, "nodes", "25,50,100,200,400,800,1600,3200", "node counts of the node sweep, ascending")
	flag.StringVar(&rates, "span-rates", "5,20,50,100,200,400", "sampled run spans per second per node, of the span sweep, ascending")
	flag.IntVar(&c.spanNodes, "span-nodes", 50, "nodes of the span sweep")
	flag.IntVar(&c.shape.CPUs, "cpus", 32, "logical CPUs per node (the cpu receiver reports each)")
	flag.IntVar(&c.shape.Pods, "pods", 4, "inference pods per node (one process each)")
	flag.Float64Var(&c.shape.SpansPerSec, "spans", 2, "sampled run spans per second per node, in the node sweep")
	flag.Float64Var(&c.shape.RunsPerSec, "runs", 100, "runs per second per pod, counted in the run metrics")
	flag.BoolVar(&c.shape.NoInstanceID, "no-instance-id", false, "leave service.instance.id off the agents' resource (as the chart did before 0.1.0)")
	flag.DurationVar(&c.interval, "interval", 15*time.Second, "the agents' export interval (the chart's agent.interval)")
	flag.DurationVar(&c.spanBatch, "span-batch", 5*time.Second, "how often an agent exports its spans")
	flag.DurationVar(&c.scrapeEvery, "scrape", 30*time.Second, "Prometheus' scrape interval of the gateway (the chart's serviceMonitor.interval)")
	flag.IntVar(&c.measure, "measure", 2, "intervals measured per step, after one to settle")
	flag.IntVar(&c.gomaxprocs, "gomaxprocs", 1, "the collector's GOMAXPROCS: the gateway's CPU limit in the chart (1)")
	flag.IntVar(&c.conns, "conns", 1024, "most gRPC connections the nodes open (beyond, nodes share them)")
	flag.Parse()
	var err error
	if c.nodes, err = parseInts(nodes); err != nil {
		fail(2, "-nodes: %v", err)
	}
	if c.spanRates, err = parseFloats(rates); err != nil {
		fail(2, "-span-rates: %v", err)
	}
	if c.collector == "" || c.template == "" {
		fail(2, "-collector and -template are required")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, c, os.Stderr); err != nil {
		fail(1, "%v", err)
	}
}

func fail(code int, format string, args ...any) {
	fmt.Fprintf(os.Stderr, "capacity: "+format+"\n", args...)
	os.Exit(code)
}

// Row is one measured step.
type Row struct {
	Sweep            string  `json:"sweep"`
	Nodes            int     `json:"nodes"`
	SpansPerNode     float64 `json:"spans_per_s_per_node"`
	PointsPerExport  int     `json:"points_per_node_export"`
	PointsPerSec     float64 `json:"points_accepted_per_s"`
	SpansPerSec      float64 `json:"spans_accepted_per_s"`
	SpansOut         float64 `json:"spans_exported_per_s"`
	Cores            float64 `json:"collector_cores"`
	PointsPerCoreSec float64 `json:"points_per_core_s"`
	SpansPerCoreSec  float64 `json:"spans_per_core_s"`
	RSSMiB           float64 `json:"collector_rss_mib_max"`
	Series           int     `json:"exporter_series"`
	ScrapeMiB        float64 `json:"scrape_mib"`
	ScrapeSec        float64 `json:"scrape_s"`
	Refused          float64 `json:"refused"`
	Failed           float64 `json:"failed"`
	ClientErrors     int     `json:"sender_errors"`
	ErrorsByCode     string  `json:"sender_errors_by_code,omitempty"`
	ExportP50ms      float64 `json:"export_p50_ms"`
	ExportP99ms      float64 `json:"export_p99_ms"`
	Load1            string  `json:"loadavg_1m"`
	Knee             string  `json:"knee,omitempty"`
}

func run(ctx context.Context, c config, log io.Writer) error {
	root, err := repoRoot()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(c.out, 0o755); err != nil {
		return err
	}
	if _, err := LoadTemplate(c.template); err != nil {
		return err
	}
	started := time.Now()
	var rows []Row
	nodeRows, err := sweep(ctx, &c, root, log, "nodes", func(ctx context.Context, f *Fleet, step int) (bool, error) {
		if step >= len(c.nodes) {
			return false, nil
		}
		return true, f.Grow(ctx, c.nodes[step])
	})
	rows = append(rows, nodeRows...)
	if err != nil {
		return err
	}
	spanShape := c
	spanShape.shape.SpansPerSec = c.spanRates[0]
	spanRows, err := sweep(ctx, &spanShape, root, log, "spans", func(ctx context.Context, f *Fleet, step int) (bool, error) {
		if step >= len(c.spanRates) {
			return false, nil
		}
		f.SetSpanRate(c.spanRates[step])
		return true, f.Grow(ctx, c.spanNodes)
	})
	rows = append(rows, spanRows...)
	if err != nil {
		return err
	}
	c.memMiB = spanShape.memMiB
	return writeResults(c, rows, time.Since(started), log)
}

// sweep starts a fresh collector and fleet and runs steps until next says
// there are none or a step reaches the knee.
func sweep(ctx context.Context, c *config, root string, log io.Writer, name string, next func(context.Context, *Fleet, int) (bool, error)) ([]Row, error) {
	sink, err := StartSpanSink()
	if err != nil {
		return nil, err
	}
	defer sink.Close()
	dir := filepath.Join(c.out, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	g, err := StartGateway(ctx, root, c.collector, sink.Endpoint(), c.gomaxprocs, dir, filepath.Join(dir, "collector.log"))
	if err != nil {
		return nil, err
	}
	defer g.Stop()
	c.memMiB = g.MemoryMiB
	t, err := LoadTemplate(c.template)
	if err != nil {
		return nil, err
	}
	f := NewFleet(t, g.OTLP, c.interval, c.spanBatch, c.conns, c.shape)
	defer f.Stop()
	fmt.Fprintf(log, "capacity: %s sweep: collector pid %d (GOMAXPROCS=%d), OTLP %s, spans to %s\n", name, g.PID(), c.gomaxprocs, g.OTLP, sink.Endpoint())
	var rows []Row
	for step := 0; ; step++ {
		more, err := next(ctx, f, step)
		if err != nil {
			return rows, err
		}
		if !more {
			return rows, nil
		}
		row, err := measure(ctx, *c, g, f, sink)
		if err != nil {
			return rows, fmt.Errorf("%s sweep, step %d: %w", name, step+1, err)
		}
		row.Sweep = name
		rows = append(rows, row)
		fmt.Fprintf(log, "capacity: %s\n", row.line())
		if row.Knee != "" {
			return rows, nil
		}
	}
}

// measure settles for one interval, then measures c.measure intervals.
func measure(ctx context.Context, c config, g *Gateway, f *Fleet, sink *SpanSink) (Row, error) {
	if !sleep(ctx, c.interval) {
		return Row{}, ctx.Err()
	}
	before, _, _, err := Scrape(ctx, g.Telemetry)
	if err != nil {
		return Row{}, err
	}
	cpu0, _, err := procStats(g.PID())
	if err != nil {
		return Row{}, fmt.Errorf("the collector: %w", err)
	}
	spans0 := sink.Spans()
	f.stats.take()
	t0 := time.Now()
	window := time.Duration(c.measure) * c.interval
	var rss int64
	var series int
	var scrapeBytes int64
	var scrapeTime time.Duration
	nextScrape := t0
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for time.Since(t0) < window {
		if time.Now().After(nextScrape) || time.Now().Equal(nextScrape) {
			// Prometheus scraping the gateway, as the ServiceMonitor does.
			e, n, d, err := Scrape(ctx, g.Prometheus)
			if err != nil {
				return Row{}, err
			}
			series, scrapeBytes, scrapeTime = e.Series, n, max(scrapeTime, d)
			nextScrape = nextScrape.Add(c.scrapeEvery)
		}
		if _, r, err := procStats(g.PID()); err == nil {
			rss = max(rss, r)
		} else {
			return Row{}, fmt.Errorf("the collector is gone: %w", err)
		}
		select {
		case <-ctx.Done():
			return Row{}, ctx.Err()
		case <-tick.C:
		}
	}
	dt := time.Since(t0).Seconds()
	sent := f.stats.take()
	after, _, _, err := Scrape(ctx, g.Telemetry)
	if err != nil {
		return Row{}, err
	}
	cpu1, _, err := procStats(g.PID())
	if err != nil {
		return Row{}, err
	}
	d := func(name string) float64 { return after.Sums[name] - before.Sums[name] }
	shape := f.shape.Load()
	row := Row{
		Nodes: f.Nodes(), SpansPerNode: shape.SpansPerSec, PointsPerExport: f.PointsPerExport(),
		PointsPerSec: d("otelcol_receiver_accepted_metric_points") / dt,
		SpansPerSec:  d("otelcol_receiver_accepted_spans") / dt,
		SpansOut:     float64(sink.Spans()-spans0) / dt,
		Cores:        (cpu1 - cpu0).Seconds() / dt,
		RSSMiB:       float64(rss) / (1 << 20),
		Series:       series, ScrapeMiB: float64(scrapeBytes) / (1 << 20), ScrapeSec: scrapeTime.Seconds(),
		Refused: d("otelcol_receiver_refused_metric_points") + d("otelcol_receiver_refused_spans"),
		Failed: d("otelcol_receiver_failed_metric_points") + d("otelcol_receiver_failed_spans") +
			d("otelcol_exporter_send_failed_spans") + d("otelcol_exporter_send_failed_metric_points") +
			d("otelcol_exporter_enqueue_failed_spans") + d("otelcol_exporter_enqueue_failed_metric_points"),
		ClientErrors: sent.errorCount(),
		ExportP50ms:  float64(sent.quantile(0.5).Microseconds()) / 1000,
		ExportP99ms:  float64(sent.quantile(0.99).Microseconds()) / 1000,
		Load1:        loadavg(),
	}
	if len(sent.errors) > 0 {
		b, _ := json.Marshal(sent.errors)
		row.ErrorsByCode = string(b)
	}
	if cpu := (cpu1 - cpu0).Seconds(); cpu > 0 {
		row.PointsPerCoreSec = d("otelcol_receiver_accepted_metric_points") / cpu
		row.SpansPerCoreSec = d("otelcol_receiver_accepted_spans") / cpu
	}
	switch {
	case row.Refused > 0:
		row.Knee = fmt.Sprintf("the collector refused %.0f points/spans (memory limiter)", row.Refused)
	case row.Failed > 0:
		row.Knee = fmt.Sprintf("%.0f points/spans failed or could not be queued", row.Failed)
	case row.ClientErrors > 0:
		row.Knee = fmt.Sprintf("%d exports failed at the senders %s", row.ClientErrors, row.ErrorsByCode)
	case row.Cores >= 0.9*float64(c.gomaxprocs):
		row.Knee = fmt.Sprintf("the collector used %.2f cores of its %d", row.Cores, c.gomaxprocs)
	case row.ScrapeSec > 10:
		row.Knee = fmt.Sprintf("a scrape of the exporter took %.1f s, over Prometheus' default 10 s scrape timeout", row.ScrapeSec)
	case row.ExportP99ms > 2000:
		row.Knee = fmt.Sprintf("export p99 %.0f ms", row.ExportP99ms)
	}
	return row, nil
}

func (r Row) line() string {
	s := fmt.Sprintf("%d nodes, %g spans/s/node: %.0f points/s, %.0f spans/s in (%.0f out), collector %.2f cores, %.0f points/core-s, RSS %.0f MiB, %d series (%.1f MiB, %.2f s scrape), refused %.0f, failed %.0f, sender errors %d, export p50/p99 %.1f/%.1f ms, load %s",
		r.Nodes, r.SpansPerNode, r.PointsPerSec, r.SpansPerSec, r.SpansOut, r.Cores, r.PointsPerCoreSec, r.RSSMiB, r.Series, r.ScrapeMiB, r.ScrapeSec, r.Refused, r.Failed, r.ClientErrors, r.ExportP50ms, r.ExportP99ms, r.Load1)
	if r.Knee != "" {
		s += "; KNEE: " + r.Knee
	}
	return s
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Fields(string(b))[0]
}

func parseInts(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || len(out) > 0 && n <= out[len(out)-1] {
			return nil, fmt.Errorf("%q: want ascending whole numbers above 0, comma-separated", s)
		}
		out = append(out, n)
	}
	return out, nil
}

func parseFloats(s string) ([]float64, error) {
	var out []float64
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || v <= 0 || len(out) > 0 && v <= out[len(out)-1] {
			return nil, fmt.Errorf("%q: want ascending numbers above 0, comma-separated", s)
		}
		out = append(out, v)
	}
	return out, nil
}

// writeResults prints the rows as a Markdown table and writes them to
// results.md and results.json under c.out.
func writeResults(c config, rows []Row, took time.Duration, log io.Writer) error {
	if len(rows) == 0 {
		return errors.New("no step was measured")
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Gateway: otelcol-ortel with the chart's configuration, GOMAXPROCS=%d; nodes: %d CPUs, %d inference pods, %g runs/s per pod, export every %s, spans in batches every %s; Prometheus scrape every %s; %d intervals measured per step; %s in all.\n\n",
		c.gomaxprocs, c.shape.CPUs, c.shape.Pods, c.shape.RunsPerSec, c.interval, c.spanBatch, c.scrapeEvery, c.measure, took.Round(time.Second))
	b.WriteString("| sweep | nodes | spans/s/node | points/export | points/s in | spans/s in | collector cores | points/core-s | spans/core-s | RSS MiB | series | scrape | refused | failed | sender errors | export p50/p99 ms | load 1m | knee |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %d | %g | %d | %.0f | %.0f | %.2f | %.0f | %.0f | %.0f | %d | %.1f MiB, %.2f s | %.0f | %.0f | %d | %.1f / %.1f | %s | %s |\n",
			r.Sweep, r.Nodes, r.SpansPerNode, r.PointsPerExport, r.PointsPerSec, r.SpansPerSec, r.Cores, r.PointsPerCoreSec, r.SpansPerCoreSec, r.RSSMiB, r.Series, r.ScrapeMiB, r.ScrapeSec, r.Refused, r.Failed, r.ClientErrors, r.ExportP50ms, r.ExportP99ms, r.Load1, r.Knee)
	}
	if s, err := Summarize(rows, float64(c.gomaxprocs), c.memMiB); err != nil {
		fmt.Fprintf(&b, "\nNo summary: %v\n", err)
	} else {
		b.WriteString("\n" + s.Markdown(float64(c.gomaxprocs), c.memMiB))
	}
	fmt.Fprint(log, "\n"+b.String())
	if err := os.WriteFile(filepath.Join(c.out, "results.md"), []byte(b.String()), 0o644); err != nil {
		return err
	}
	j, err := json.MarshalIndent(rows, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(c.out, "results.json"), append(j, '\n'), 0o644)
}
