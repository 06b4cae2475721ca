//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	// The collector's OTLP exporters compress with gzip by default; the
	// in-process receivers decode it once the codec is registered.

	"github.com/ortel-dev/ortel/semconv"
	"github.com/ortel-dev/ortel/test/otlptest"
	"github.com/ortel-dev/ortel/test/stack"
)

// Time limits of the steps. The cold collector build dominates a first run;
// with the collector cached the whole test takes well under the total.
const (
	buildTimeout    = 25 * time.Minute // cold: the builder downloads and compiles the collector
	installTimeout  = 10 * time.Minute // apt-get update + install
	startTimeout    = 60 * time.Second // each of collector and Prometheus, until ready
	workloadTimeout = 5 * time.Minute
	checkTimeout    = 90 * time.Second // each group of Prometheus assertions
	stopGrace       = 10 * time.Second
	pollInterval    = 250 * time.Millisecond
	scrapeInterval  = "1s"
)

// The default workload: 200 measured runs plus a 3-run operator-profiling
// pass on the PaddleOCR detection model at a small input size. Every Run
// goes through the instrumented session and is recorded in the run
// histogram: the cold first run and the measured runs with
// onnxruntime.run.profiled=false, the profiling pass with =true.
const (
	benchRuns        = 200 // several metric exports long: rate() needs the counters to move between scrapes
	benchWarmup      = 0
	benchProfileRuns = 3
	benchModel       = "ch_PP-OCRv4_det_infer.onnx"
	pipelineRequests = 10 // several metric exports long, as benchRuns
)

// Prometheus selectors of the bench workload's series: the collector's
// Prometheus exporter turns service.name into the job label, and the
// span_metrics connector keeps it as service_name.
const (
	benchJob     = `{job="` + BenchService + `"}`
	benchService = `{service_name="` + BenchService + `"}`
)

// expectations of the workload, overridable for ORTEL_E2E_CMD.
type expectations struct {
	unprofiledRuns int // 1 cold run + warm-up + measured runs
	profiledRuns   int
}

func (e expectations) total() int { return e.unprofiledRuns + e.profiledRuns }

type harness struct {
	t      *testing.T
	root   string
	logDir string
	procs  []*Process
	steps  []string
	start  time.Time
	// failures holds each failed step's error, repeated at the end of
	// the output.
	failures []string
}

// newHarness returns a harness whose logs go to $ORTEL_E2E_OUT, else
// out/NAME of the checkout (emptied first); its processes are stopped and
// its logs reported when the test ends.
func newHarness(t *testing.T, name string) *harness {
	t.Helper()
	root, err := stack.RepoRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, root: root, start: time.Now()}
	h.logDir = os.Getenv("ORTEL_E2E_OUT")
	if h.logDir == "" {
		h.logDir = filepath.Join(root, "out", name)
	}
	if err := os.RemoveAll(h.logDir); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(h.logDir, 0o755); err != nil {
		t.Fatal(err)
	}
	// Cleanups run last-registered first: processes stop, then the logs
	// are reported (flushed by then).
	t.Cleanup(h.report)
	t.Cleanup(h.teardown)
	return h
}

func TestEndToEnd(t *testing.T) {
	h := newHarness(t, "e2e")
	root := h.root

	exp := h.expectations()

	// 1. The collector, built from the manifest (cached).
	var collectorBin string
	h.step("build the collector", buildTimeout, func(ctx context.Context) error {
		out, err := h.script(ctx, "build-collector", filepath.Join(root, stack.BuildScript))
		collectorBin = out
		return err
	})

	// 2. Prometheus from Debian.
	var promBin string
	h.step("install Prometheus", installTimeout, func(ctx context.Context) error {
		out, err := h.script(ctx, "install-prometheus", filepath.Join(root, "scripts", "install-prometheus.sh"))
		if err != nil {
			return err
		}
		promBin = out
		// The compose stack's configuration, as committed, is valid.
		promtool := filepath.Join(filepath.Dir(promBin), "promtool")
		check := exec.CommandContext(ctx, promtool, "check", "config", filepath.Join(root, stack.PrometheusConfig))
		if b, err := check.CombinedOutput(); err != nil {
			return fmt.Errorf("promtool check config %s: %w\n%s", stack.PrometheusConfig, err, b)
		}
		return nil
	})

	// 3. Receivers, collector and Prometheus on free loopback ports.
	var jaeger, tap *otlptest.Receiver
	var prom *Prom
	var collectorPorts CollectorPorts
	h.step("start the receivers, the collector and Prometheus", 2*startTimeout, func(ctx context.Context) error {
		var err error
		// A stand-in for Jaeger behind collector.yaml's own otlp_grpc/jaeger
		// exporter, and the test's tap behind the overlay's second exporter.
		if jaeger, err = otlptest.Start(otlptest.WithAddress("127.0.0.1:0")); err != nil {
			return err
		}
		h.t.Cleanup(func() { jaeger.Close() })
		if tap, err = otlptest.Start(otlptest.WithAddress("127.0.0.1:0")); err != nil {
			return err
		}
		h.t.Cleanup(func() { tap.Close() })

		ports, err := FreePorts(6)
		if err != nil {
			return err
		}
		collectorPorts = CollectorPorts{GRPC: ports[0], HTTP: ports[1], Prometheus: ports[2], Telemetry: ports[3], Health: ports[5]}
		promAddr := "127.0.0.1:" + strconv.Itoa(ports[4])

		base, err := stack.LoadCollector(filepath.Join(root, stack.CollectorConfig))
		if err != nil {
			return err
		}
		overlay, err := CollectorOverlay(base, tap.Endpoint())
		if err != nil {
			return err
		}
		overlayPath := h.write("collector-overlay.yaml", overlay)
		env := CollectorEnv(collectorPorts, jaeger.Endpoint())
		h.write("collector.env", []byte(strings.Join(env, "\n")+"\n"))
		col, err := h.startProcess("collector", env, collectorBin,
			"--config", filepath.Join(root, stack.CollectorConfig), "--config", overlayPath)
		if err != nil {
			return err
		}
		exporterURL := fmt.Sprintf("http://127.0.0.1:%d/metrics", collectorPorts.Prometheus)
		if err := h.waitReady(ctx, col, func(ctx context.Context) error {
			if err := dial(ctx, fmt.Sprintf("127.0.0.1:%d", collectorPorts.GRPC)); err != nil {
				return err
			}
			return httpOK(ctx, http.DefaultClient, exporterURL)
		}); err != nil {
			return err
		}

		base2, err := os.ReadFile(filepath.Join(root, stack.PrometheusConfig))
		if err != nil {
			return err
		}
		promCfg, err := PrometheusConfig(base2, map[string]string{
			"otelcol":          fmt.Sprintf("127.0.0.1:%d", collectorPorts.Prometheus),
			"otelcol-internal": fmt.Sprintf("127.0.0.1:%d", collectorPorts.Telemetry),
		}, scrapeInterval)
		if err != nil {
			return err
		}
		// The alerting rules load too (a broken rule stops Prometheus).
		if promCfg, err = AbsRuleFiles(promCfg, filepath.Dir(filepath.Join(root, stack.PrometheusConfig))); err != nil {
			return err
		}
		promCfgPath := h.write("prometheus.yml", promCfg)
		storage := h.t.TempDir()
		p, err := h.startProcess("prometheus", nil, promBin,
			"--config.file="+promCfgPath,
			"--storage.tsdb.path="+storage,
			"--web.listen-address="+promAddr,
			"--enable-feature=exemplar-storage",
			"--log.level=info")
		if err != nil {
			return err
		}
		prom = &Prom{Base: "http://" + promAddr}
		if err := h.waitReady(ctx, p, prom.Ready); err != nil {
			return err
		}
		// Both targets scraped successfully at least once.
		return Poll(ctx, pollInterval, func(ctx context.Context) error {
			up, err := prom.Query(ctx, `up`)
			if err != nil {
				return notYet("%v", err)
			}
			healthy := 0
			for _, s := range up {
				if s.Value == 1 {
					healthy++
				}
			}
			if healthy < 2 {
				return notYet("targets up: %v", up)
			}
			return nil
		})
	})

	// 4. The workload, exporting to the collector.
	workloadStart := time.Now()
	h.step("run the workload", workloadTimeout, func(ctx context.Context) error {
		argv, err := h.workload()
		if err != nil {
			return err
		}
		env := []string{
			fmt.Sprintf("OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:%d", collectorPorts.GRPC),
			"OTEL_EXPORTER_OTLP_PROTOCOL=grpc",
			"OTEL_METRIC_EXPORT_INTERVAL=1000",
			"OTEL_BSP_SCHEDULE_DELAY=200",
			// Classic buckets (the registry's boundaries): Prometheus 2.x and
			// the dashboard read _bucket series; ortel's default exponential
			// histograms reach them as a lone +Inf bucket.
			"OTEL_EXPORTER_OTLP_METRICS_DEFAULT_HISTOGRAM_AGGREGATION=explicit_bucket_histogram",
		}
		h.write("workload.cmd", []byte(strings.Join(append(env, argv...), " ")+"\n"))
		p, err := h.startProcess("workload", env, argv...)
		if err != nil {
			return err
		}
		if err := p.Wait(ctx); err != nil {
			return err
		}
		// A service-shaped workload too: the PaddleOCR pipeline example,
		// whose requests hold stage spans (the dashboard's stage panels).
		pipe, err := h.pipelineWorkload()
		if err != nil || pipe == nil {
			return err
		}
		// It sends over OTLP/HTTP (http/protobuf, the collector's HTTP
		// port), the bench over gRPC: the e2e covers both protocols.
		penv := []string{
			fmt.Sprintf("OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:%d", collectorPorts.HTTP),
			"OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf",
		}
		for _, kv := range env {
			if !strings.HasPrefix(kv, "OTEL_EXPORTER_OTLP_ENDPOINT=") && !strings.HasPrefix(kv, "OTEL_EXPORTER_OTLP_PROTOCOL=") {
				penv = append(penv, kv)
			}
		}
		h.write("pipeline.cmd", []byte(strings.Join(append(penv, pipe...), " ")+"\n"))
		pp, err := h.startProcess("pipeline", penv, pipe...)
		if err != nil {
			return err
		}
		return pp.Wait(ctx)
	})

	// 5. What Prometheus scraped from the collector. The checks are
	// independent: each reports its failure and the next still runs.
	h.check("check the run histogram", checkTimeout, func(ctx context.Context) error {
		return checkRunHistogram(ctx, prom, exp)
	})
	h.check("check the hardware metrics", checkTimeout, func(ctx context.Context) error {
		return checkHardware(ctx, prom)
	})
	h.check("check the pipeline stages", checkTimeout, func(ctx context.Context) error {
		return checkPipeline(ctx, prom, tap)
	})

	// 6. The spans that left the collector: all of them, then the tree.
	var spans []otlptest.Span
	h.step("check the exported spans", checkTimeout, func(ctx context.Context) error {
		var err error
		spans, err = checkSpans(ctx, tap, jaeger, exp)
		return err
	})
	h.check("check the operator metrics", checkTimeout, func(ctx context.Context) error {
		return checkOperators(ctx, prom, spans)
	})
	h.check("check the span metrics", checkTimeout, func(ctx context.Context) error {
		return checkSpanMetrics(ctx, prom, spans)
	})
	h.check("check Prometheus names against the registry", checkTimeout, func(ctx context.Context) error {
		return checkNames(ctx, prom)
	})
	h.check("check the dashboard against Prometheus", checkTimeout, func(ctx context.Context) error {
		excused, err := checkDashboard(ctx, prom, root, ProbeHardware("/"), h.logDir)
		if len(excused) > 0 {
			t.Logf("dashboard metrics this machine cannot produce: %s", strings.Join(excused, ", "))
		}
		return err
	})
	h.check("run every dashboard query against Prometheus", checkTimeout, func(ctx context.Context) error {
		excused, err := checkDashboardQueries(ctx, prom, root, ProbeHardware("/"), time.Since(workloadStart), h.logDir)
		if len(excused) > 0 {
			t.Logf("dashboard panels excused on this machine (no data, source absent):\n  %s", strings.Join(excused, "\n  "))
		}
		return err
	})
}

// step runs fn under its own time limit and stops the test on failure.
func (h *harness) step(name string, limit time.Duration, fn func(context.Context) error) {
	h.t.Helper()
	if err := h.run(name, limit, fn); err != nil {
		h.t.Fatal(err)
	}
}

// check runs fn under its own time limit and marks the test failed on
// failure, going on with the next check.
func (h *harness) check(name string, limit time.Duration, fn func(context.Context) error) {
	h.t.Helper()
	if err := h.run(name, limit, fn); err != nil {
		h.t.Error(err)
	}
}

func (h *harness) run(name string, limit time.Duration, fn func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	start := time.Now()
	err := fn(ctx)
	status := "ok"
	if err != nil {
		status = "FAILED"
	}
	h.steps = append(h.steps, fmt.Sprintf("%-50s %8.1fs  %s", name, time.Since(start).Seconds(), status))
	if err != nil {
		err = fmt.Errorf("step %q failed after %.1fs (limit %s): %w", name, time.Since(start).Seconds(), limit, err)
		h.failures = append(h.failures, err.Error())
		return err
	}
	return nil
}

// expectations returns the run counts the workload records.
func (h *harness) expectations() expectations {
	e := expectations{unprofiledRuns: 1 + benchWarmup + benchRuns, profiledRuns: benchProfileRuns}
	for _, v := range []struct {
		env string
		dst *int
	}{{"ORTEL_E2E_RUNS", &e.unprofiledRuns}, {"ORTEL_E2E_PROFILED_RUNS", &e.profiledRuns}} {
		if s := os.Getenv(v.env); s != "" {
			n, err := strconv.Atoi(s)
			if err != nil || n < 0 {
				h.t.Fatalf("%s=%q: want a run count", v.env, s)
			}
			*v.dst = n
		}
	}
	if e.profiledRuns == 0 {
		h.t.Fatal("the workload must profile at least one run: the test checks operator spans and metrics")
	}
	return e
}

// pipelineWorkload returns the command line of the pipeline example, or nil
// when ORTEL_E2E_CMD replaces the workloads.
func (h *harness) pipelineWorkload() ([]string, error) {
	if os.Getenv("ORTEL_E2E_CMD") != "" {
		return nil, nil
	}
	bin := filepath.Join(h.root, "bin", "ocr-pipeline")
	if _, err := os.Stat(bin); err != nil {
		return nil, fmt.Errorf("the ocr-pipeline example is not built (%v): run make build", err)
	}
	return []string{bin, "-requests", strconv.Itoa(pipelineRequests), "-size", "160"}, nil
}

// workload returns the command line of the workload.
func (h *harness) workload() ([]string, error) {
	if c := os.Getenv("ORTEL_E2E_CMD"); c != "" {
		return []string{"bash", "-c", c}, nil
	}
	bin := filepath.Join(h.root, "bin", "ortel")
	if _, err := os.Stat(bin); err != nil {
		return nil, fmt.Errorf("the ortel CLI is not built (%v): run make build, or set ORTEL_E2E_CMD", err)
	}
	cache := os.Getenv("ORTEL_CACHE_DIR")
	if cache == "" {
		cache = filepath.Join(h.root, ".cache", "ortel")
	}
	model := filepath.Join(cache, "models", benchModel)
	if _, err := os.Stat(model); err != nil {
		return nil, fmt.Errorf("model %s is not fetched (%v): run make setup", benchModel, err)
	}
	return []string{bin, "bench",
		"--runs", strconv.Itoa(benchRuns),
		"--warmup", strconv.Itoa(benchWarmup),
		"--profile-runs", strconv.Itoa(benchProfileRuns),
		"--out", h.t.TempDir(),
		"--shape", "x=1,3,96,96",
		model}, nil
}

// script runs one of the repository's scripts; it returns the last line of
// its stdout (the path it prints). Its stderr goes to <name>.log.
func (h *harness) script(ctx context.Context, name string, path string) (string, error) {
	log, err := os.Create(filepath.Join(h.logDir, name+".log"))
	if err != nil {
		return "", err
	}
	defer log.Close()
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, path)
	cmd.Stdout, cmd.Stderr = &out, log
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("%s: %w (log: %s)", path, err, log.Name())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	p := lines[len(lines)-1]
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("%s printed %q, which is not a file: %w", path, p, err)
	}
	return p, nil
}

func (h *harness) startProcess(name string, env []string, argv ...string) (*Process, error) {
	p, err := StartProcess(name, filepath.Join(h.logDir, name+".log"), env, argv...)
	if err != nil {
		return nil, err
	}
	h.procs = append(h.procs, p)
	return p, nil
}

// waitReady polls ready until it succeeds, failing early when p exits.
func (h *harness) waitReady(ctx context.Context, p *Process, ready func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	return Poll(ctx, 100*time.Millisecond, func(ctx context.Context) error {
		if exited, err := p.Exited(); exited {
			return fmt.Errorf("%s exited during start-up (%v); last lines of %s:\n%s", p.Name, err, p.LogPath, Tail(p.LogPath, 30))
		}
		if err := ready(ctx); err != nil {
			return notYet("%s not ready: %v", p.Name, err)
		}
		return nil
	})
}

func (h *harness) write(name string, b []byte) string {
	p := filepath.Join(h.logDir, name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		h.t.Fatal(err)
	}
	return p
}

// teardown stops every process, newest first, and checks none is left.
func (h *harness) teardown() {
	for i := len(h.procs) - 1; i >= 0; i-- {
		p := h.procs[i]
		if err := p.Stop(stopGrace); err != nil {
			h.t.Errorf("teardown: %v", err)
		}
		if p.GroupAlive() {
			h.t.Errorf("teardown: processes of %s (group %d) are still running", p.Name, p.Pid())
		}
	}
}

// report prints the step timings and, on failure, the logs' tails.
func (h *harness) report() {
	h.steps = append(h.steps, fmt.Sprintf("%-50s %8.1fs", "total", time.Since(h.start).Seconds()))
	summary := strings.Join(h.steps, "\n") + "\n"
	_ = os.WriteFile(filepath.Join(h.logDir, "timings.txt"), []byte(summary), 0o644)
	h.t.Logf("steps:\n%s", summary)
	if !h.t.Failed() {
		h.t.Logf("logs and generated configs: %s", h.logDir)
		return
	}
	entries, _ := os.ReadDir(h.logDir)
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		p := filepath.Join(h.logDir, e.Name())
		h.t.Logf("---- %s (last 40 lines) ----\n%s", p, Tail(p, 40))
	}
	// Last, so that a log holding only the end of the output still says
	// what failed.
	h.t.Logf("steps:\n%s", summary)
	h.t.Logf("what failed:\n%s", strings.Join(h.failures, "\n"))
	h.t.Logf("logs kept in %s", h.logDir)
}

func dial(ctx context.Context, addr string) error {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return err
	}
	return c.Close()
}

// checkRunHistogram: the run-duration histogram has its _bucket, _sum and
// _count series, the registry's bucket boundaries, and exactly the runs the
// workload made, split by onnxruntime.run.profiled.
func checkRunHistogram(ctx context.Context, prom *Prom, exp expectations) error {
	m, ok := semconv.LookupMetric("onnxruntime.run.duration")
	if !ok {
		return errors.New("onnxruntime.run.duration is not in the registry")
	}
	name := stack.MetricPromName(m)
	want := map[string]float64{"false": float64(exp.unprofiledRuns), "true": float64(exp.profiledRuns)}
	if err := Poll(ctx, pollInterval, func(ctx context.Context) error {
		got, err := prom.Query(ctx, `sum by (onnxruntime_run_profiled) (`+name+`_count`+benchJob+`)`)
		if err != nil {
			return notYet("%v", err)
		}
		have := map[string]float64{}
		for _, s := range got {
			have[s.Labels["onnxruntime_run_profiled"]] = s.Value
		}
		for k, v := range want {
			if have[k] != v {
				return notYet("%s_count by onnxruntime_run_profiled = %v, want %v", name, have, want)
			}
		}
		if len(have) != len(want) {
			return fmt.Errorf("%s_count by onnxruntime_run_profiled = %v, want exactly %v", name, have, want)
		}
		return nil
	}); err != nil {
		return err
	}

	// _sum: positive, and every series carries the model name.
	sums, err := prom.Query(ctx, name+`_sum`+benchJob)
	if err != nil {
		return err
	}
	if len(sums) == 0 {
		return fmt.Errorf("no %s_sum series", name)
	}
	for _, s := range sums {
		if s.Value <= 0 || s.Labels["onnxruntime_model_name"] == "" {
			return fmt.Errorf("%s_sum series %v = %v: want a positive sum with onnxruntime_model_name", name, s.Labels, s.Value)
		}
	}

	// _bucket: the registry's boundaries plus +Inf on every series, and the
	// +Inf bucket equal to the count.
	buckets, err := prom.Query(ctx, name+`_bucket`+benchJob)
	if err != nil {
		return err
	}
	bySeries := map[string][]float64{}
	inf := map[string]float64{}
	for _, s := range buckets {
		le, err := strconv.ParseFloat(s.Labels["le"], 64)
		if err != nil {
			return fmt.Errorf("%s_bucket series %v: le %q is not a number", name, s.Labels, s.Labels["le"])
		}
		key := s.Labels["onnxruntime_model_name"] + "/" + s.Labels["onnxruntime_run_profiled"] + "/" + s.Labels["error_type"]
		bySeries[key] = append(bySeries[key], le)
		if math.IsInf(le, 1) {
			inf[key] = s.Value
		}
	}
	if len(bySeries) == 0 {
		return fmt.Errorf("no %s_bucket series", name)
	}
	wantLE := append(slices.Clone(m.Buckets), math.Inf(1))
	for key, les := range bySeries {
		sort.Float64s(les)
		if !slices.Equal(les, wantLE) {
			return fmt.Errorf("%s_bucket{%s}: le boundaries %v, want the registry's %v", name, key, les, wantLE)
		}
	}
	total := 0.0
	for _, v := range inf {
		total += v
	}
	if total != float64(exp.total()) {
		return fmt.Errorf("%s_bucket{le=\"+Inf\"} sums to %v, want %d runs", name, total, exp.total())
	}

	// The runs counter agrees with the histogram.
	return Poll(ctx, pollInterval, func(ctx context.Context) error {
		runs, err := prom.Query(ctx, `sum(onnxruntime_runs_total`+benchJob+`)`)
		if err != nil {
			return notYet("%v", err)
		}
		if len(runs) != 1 || runs[0].Value != float64(exp.total()) {
			return notYet("sum(onnxruntime_runs_total) = %v, want %d (the runs the histogram counted)", runs, exp.total())
		}
		return nil
	})
}

// checkPipeline: the pipeline example's traces read request → stage → run,
// and its stage histogram reached Prometheus.
func checkPipeline(ctx context.Context, prom *Prom, tap *otlptest.Receiver) error {
	if os.Getenv("ORTEL_E2E_CMD") != "" {
		return nil
	}
	m, _ := semconv.LookupMetric("ortel.stage.duration")
	name := stack.MetricPromName(m)
	if err := Poll(ctx, pollInterval, func(ctx context.Context) error {
		got, err := prom.Query(ctx, `sum by (ortel_stage_name) (`+name+`_count{job="`+PipelineService+`"})`)
		if err != nil {
			return notYet("%v", err)
		}
		stages := map[string]float64{}
		for _, s := range got {
			stages[s.Labels["ortel_stage_name"]] = s.Value
		}
		for _, st := range []string{"detect", "classify", "recognize"} {
			if stages[st] == 0 {
				return notYet("%s_count by stage = %v: no %q stage yet", name, stages, st)
			}
		}
		if stages["detect"] != pipelineRequests {
			return notYet("%d detect stages recorded, want one per request (%d)", int(stages["detect"]), pipelineRequests)
		}
		return nil
	}); err != nil {
		return err
	}
	// The request spans end last: wait until their batch has arrived too.
	if err := tap.WaitSpans(ctx, func(s []otlptest.Span) bool { return CheckPipelineTree(s, pipelineRequests) == nil }); err != nil {
		return fmt.Errorf("%w; last: %v", err, CheckPipelineTree(tap.Spans(), pipelineRequests))
	}
	return nil
}

// checkHardware: every expected hardware metric has series, each with the
// expected labels set.
func checkHardware(ctx context.Context, prom *Prom) error {
	var missing []string
	err := Poll(ctx, pollInterval, func(ctx context.Context) error {
		missing = missing[:0]
		for _, e := range HardwareMetrics {
			m, labels, err := e.Resolve()
			if err != nil {
				return err
			}
			name := stack.MetricPromName(m)
			series, err := prom.Series(ctx, name)
			if err != nil {
				return notYet("%v", err)
			}
			if len(series) == 0 {
				missing = append(missing, name+" (no series)")
				continue
			}
			for _, s := range series {
				for _, l := range labels {
					if s[l] == "" {
						return fmt.Errorf("%s series %v has no %s label", name, s, l)
					}
				}
			}
		}
		if len(missing) > 0 {
			return notYet("missing hardware metrics: %s", strings.Join(missing, ", "))
		}
		return nil
	})
	return err
}

// checkSpans waits until every run span has left the collector through both
// exporters, then checks the operator spans sit under profiled run spans.
func checkSpans(ctx context.Context, tap, jaeger *otlptest.Receiver, exp expectations) ([]otlptest.Span, error) {
	runs := func(spans []otlptest.Span) int {
		n := 0
		for _, s := range spans {
			if IsRunSpan(s) {
				n++
			}
		}
		return n
	}
	enough := func(spans []otlptest.Span) bool { return runs(BenchSpans(spans)) >= exp.total() }
	for _, r := range []struct {
		name string
		rcv  *otlptest.Receiver
	}{{"test exporter", tap}, {"Jaeger exporter", jaeger}} {
		if err := r.rcv.WaitSpans(ctx, enough); err != nil {
			return nil, fmt.Errorf("%s: %d run spans arrived, want %d: %w", r.name, runs(BenchSpans(r.rcv.Spans())), exp.total(), err)
		}
	}
	// The run spans can arrive before the operator spans of the same
	// export (the collector batches and splits them as it likes), so the
	// tree is judged once it holds together, or by its last state when
	// the time is up.
	var spans []otlptest.Span
	var treeErr error
	judge := func(all []otlptest.Span) bool {
		spans = BenchSpans(all)
		treeErr = spanTreeError(spans, exp, runs)
		return treeErr == nil
	}
	if err := tap.WaitSpans(ctx, judge); err != nil {
		judge(tap.Spans())
		if treeErr != nil {
			return nil, treeErr
		}
	}
	if len(BenchSpans(jaeger.Spans())) != len(spans) {
		// Not an error on its own (batches may still be in flight), but the
		// counts converge.
		if err := jaeger.WaitSpans(ctx, func(s []otlptest.Span) bool { return len(BenchSpans(s)) == len(spans) }); err != nil {
			return nil, fmt.Errorf("the Jaeger exporter delivered %d spans, the test exporter %d", len(BenchSpans(jaeger.Spans())), len(spans))
		}
	}
	return spans, nil
}

// spanTreeError says what is wrong with the bench's spans, or nil.
func spanTreeError(spans []otlptest.Span, exp expectations, runs func([]otlptest.Span) int) error {
	if n := runs(spans); n != exp.total() {
		return fmt.Errorf("%d run spans arrived, want %d", n, exp.total())
	}
	tree, errs := CheckSpanTree(spans, 0, 20)
	if len(errs) > 0 {
		return fmt.Errorf("span tree:\n%v", errors.Join(errs...))
	}
	if tree.ProfiledRuns != exp.profiledRuns {
		return fmt.Errorf("%d profiled run spans, want %d", tree.ProfiledRuns, exp.profiledRuns)
	}
	if tree.Operators == 0 {
		return errors.New("no operator spans arrived")
	}
	if tree.Operators%exp.profiledRuns != 0 {
		return fmt.Errorf("%d operator spans over %d profiled runs: every profiled run should have the same operators", tree.Operators, exp.profiledRuns)
	}
	return nil
}

// checkOperators: the node-duration histogram has op-type series, and its
// count equals the operator spans that left the collector.
func checkOperators(ctx context.Context, prom *Prom, spans []otlptest.Span) error {
	m, _ := semconv.LookupMetric("onnxruntime.node.duration")
	name := stack.MetricPromName(m)
	ops := 0
	for _, s := range spans {
		if IsOperatorSpan(s) {
			ops++
		}
	}
	return Poll(ctx, pollInterval, func(ctx context.Context) error {
		got, err := prom.Query(ctx, name+`_count`+benchJob)
		if err != nil {
			return notYet("%v", err)
		}
		total := 0.0
		for _, s := range got {
			if s.Labels["onnxruntime_node_op_type"] == "" || s.Labels["onnxruntime_model_name"] == "" {
				return fmt.Errorf("%s_count series %v lacks onnxruntime_node_op_type or onnxruntime_model_name", name, s.Labels)
			}
			total += s.Value
		}
		if total != float64(ops) {
			return notYet("%s_count sums to %v over %d series, want %d (the operator spans)", name, total, len(got), ops)
		}
		return nil
	})
}

// checkSpanMetrics: span_metrics counted every exported span, with the
// duration histogram and the configured dimensions.
func checkSpanMetrics(ctx context.Context, prom *Prom, spans []otlptest.Span) error {
	calls, duration := stack.SpanMetricsSeries[0], stack.SpanMetricsSeries[1]
	return Poll(ctx, pollInterval, func(ctx context.Context) error {
		got, err := prom.Query(ctx, `sum(`+calls+benchService+`)`)
		if err != nil {
			return notYet("%v", err)
		}
		if len(got) != 1 || got[0].Value != float64(len(spans)) {
			return notYet("sum(%s) = %v, want %d (the exported spans)", calls, got, len(spans))
		}
		b, err := prom.Query(ctx, `sum(`+duration+`{le="+Inf",service_name="ortel"})`)
		if err != nil {
			return notYet("%v", err)
		}
		if len(b) != 1 || b[0].Value != float64(len(spans)) {
			return notYet("sum(%s{le=\"+Inf\"}) = %v, want %d", duration, b, len(spans))
		}
		op, err := prom.Series(ctx, calls+`{onnxruntime_node_op_type!=""}`)
		if err != nil {
			return notYet("%v", err)
		}
		if len(op) == 0 {
			return fmt.Errorf("no %s series with the onnxruntime_node_op_type dimension", calls)
		}
		return nil
	})
}

// checkNames: every ortel series Prometheus holds has the name stack.PromName
// predicts for a registered metric, so the static dashboard test, which
// relies on PromName, checks the names Prometheus really uses.
func checkNames(ctx context.Context, prom *Prom) error {
	known := map[string]bool{}
	for _, m := range semconv.Metrics {
		for _, s := range stack.MetricSeries(m) {
			known[s] = true
		}
	}
	have, err := prom.LabelValues(ctx, "__name__")
	if err != nil {
		return err
	}
	var unknown []string
	n := 0
	for _, name := range have {
		ours := false
		for _, p := range []string{"onnxruntime_", "ortel_", "system_", "process_", "hw_", "nvidia_"} {
			ours = ours || strings.HasPrefix(name, p)
		}
		if !ours {
			continue
		}
		n++
		if !known[name] {
			unknown = append(unknown, name)
		}
	}
	if len(unknown) > 0 {
		return fmt.Errorf("Prometheus holds series whose names match no registered metric under stack.PromName: %s", strings.Join(unknown, ", "))
	}
	if n == 0 {
		return errors.New("Prometheus holds no ortel series at all")
	}
	return nil
}

// checkDashboard: every metric the dashboard queries is one Prometheus
// received, except readings this machine cannot give (no GPU, no RAPL).
func checkDashboard(ctx context.Context, prom *Prom, root string, hw Hardware, logDir string) (excused []string, err error) {
	d, err := stack.LoadDashboard(filepath.Join(root, stack.DashboardsDir, "ortel.json"))
	if err != nil {
		return nil, err
	}
	want, err := d.MetricNames()
	if err != nil {
		return nil, err
	}
	have, err := prom.LabelValues(ctx, "__name__")
	if err != nil {
		return nil, err
	}
	// For the record: every name Prometheus holds.
	_ = os.WriteFile(filepath.Join(logDir, "metric-names.txt"), []byte(strings.Join(have, "\n")+"\n"), 0o644)
	var missing []string
	for _, n := range want {
		if slices.Contains(have, n) {
			continue
		}
		if need := Needs(n); !hw.Available(need) {
			excused = append(excused, n+" (needs "+need+")")
			continue
		}
		missing = append(missing, n)
	}
	if len(missing) > 0 {
		return excused, fmt.Errorf("the dashboard queries metrics Prometheus never received: %s", strings.Join(missing, ", "))
	}
	return excused, nil
}

// checkDashboardQueries runs every panel query of the dashboard against
// Prometheus, as Grafana would (a range query) over a time range covering
// the workload (since = how long ago it started), and requires data: at
// least one finite point. Query variables are resolved through Prometheus first (all
// their values selected, as the dashboard's default "All" does), so their
// queries must return values too. A panel of ExcusedPanels may come back
// empty when the machine lacks its source; it is listed in excused.
func checkDashboardQueries(ctx context.Context, prom *Prom, root string, hw Hardware, since time.Duration, logDir string) (excused []string, err error) {
	d, err := stack.LoadDashboard(filepath.Join(root, stack.DashboardsDir, "ortel.json"))
	if err != nil {
		return nil, err
	}
	// Grafana runs range queries over the dashboard's time range: here the
	// workload's, plus a few scrapes of slack, at the scrape interval, with
	// $__rate_interval as Grafana computes it (4 scrape intervals).
	end := time.Now()
	begin := end.Add(-since - 5*time.Second)
	values := map[string]string{
		"__rate_interval": "4s",
		"__interval":      scrapeInterval,
		"__range":         fmt.Sprintf("%ds", int(math.Ceil(end.Sub(begin).Seconds()))),
	}
	vars, err := Variables(d)
	if err != nil {
		return nil, err
	}
	for name, text := range vars {
		sel, label, ok := LabelValuesQuery(text)
		if !ok {
			return nil, fmt.Errorf("variable %s: %q is not label_values(selector, label)", name, text)
		}
		series, err := prom.Series(ctx, sel)
		if err != nil {
			return nil, fmt.Errorf("variable %s: %w", name, err)
		}
		var vals []string
		for _, s := range series {
			if v := s[label]; v != "" && !slices.Contains(vals, v) {
				vals = append(vals, v)
			}
		}
		if len(vals) == 0 {
			return nil, fmt.Errorf("variable %s: %s has no values", name, text)
		}
		sort.Strings(vals)
		values[name] = MultiValue(vals)
	}

	var log strings.Builder
	fmt.Fprintf(&log, "variables: %v\n", values)
	defer func() { _ = os.WriteFile(filepath.Join(logDir, "dashboard-queries.txt"), []byte(log.String()), 0o644) }()
	var failed []string
	for _, q := range PanelQueries(d) {
		expr, err := ExpandGrafana(q.Expr, values)
		if err != nil {
			return excused, fmt.Errorf("%s: %w", q, err)
		}
		need, excusable := ExcusedPanels[q.Panel]
		excusable = excusable && !hw.Available(need)
		var got []Sample
		query := func(ctx context.Context) error {
			var err error
			if got, err = prom.QueryRange(ctx, expr, begin, time.Now(), time.Second); err != nil {
				return err // a query Prometheus refuses is broken, not late
			}
			if !HasData(got) {
				return notYet("no data")
			}
			return nil
		}
		var qerr error
		if excusable {
			// The source is absent: one try, no wait.
			qerr = query(ctx)
		} else {
			// Everything has arrived by now (the checks before waited for
			// it); a short wait covers the last scrape.
			qctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			qerr = Poll(qctx, pollInterval, query)
			cancel()
		}
		fmt.Fprintf(&log, "%s: %d series, data=%v\n  %s\n", q, len(got), HasData(got), expr)
		switch {
		case qerr == nil:
		case excusable && errors.Is(qerr, ErrNotYet):
			excused = append(excused, fmt.Sprintf("%s (needs %s)", q, need))
		default:
			failed = append(failed, fmt.Sprintf("%s: %v\n    %s", q, qerr, expr))
		}
	}
	if len(failed) > 0 {
		return excused, fmt.Errorf("dashboard queries without data:\n  %s", strings.Join(failed, "\n  "))
	}
	return excused, nil
}
