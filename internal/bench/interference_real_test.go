package bench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"golang.org/x/sys/unix"

	"github.com/ortel-dev/ortel/internal/interference"
	"github.com/ortel-dev/ortel/internal/report"
	"github.com/ortel-dev/ortel/semconv"
)

// pinProcess pins every thread of this process to cpu (threads created
// later inherit it) and returns the function that restores the mask.
func pinProcess(t *testing.T, cpu int) func() {
	t.Helper()
	var orig unix.CPUSet
	if err := unix.SchedGetaffinity(0, &orig); err != nil {
		t.Skipf("no CPU affinity here: %v", err)
	}
	var one unix.CPUSet
	one.Set(cpu)
	setAll := func(set *unix.CPUSet) {
		for range 2 { // a thread born during the first pass is caught by the second
			ents, err := os.ReadDir("/proc/self/task")
			if err != nil {
				t.Skipf("cannot list this process's threads: %v", err)
			}
			for _, e := range ents {
				if tid, err := strconv.Atoi(e.Name()); err == nil {
					_ = unix.SchedSetaffinity(tid, set) // a thread may end meanwhile
				}
			}
		}
	}
	setAll(&one)
	return func() { setAll(&orig) }
}

// TestCoRunnerMidPhaseIsDisturbed is the real integration test of the
// measurement verdict: the bench pinned to one core, a busy loop pinned to
// the same core started halfway through the measured phase. The verdict
// must be disturbed with the co-runner reason, over a share of the phase
// that the busy loop explains, and name the loop by its pid.
func TestCoRunnerMidPhaseIsDisturbed(t *testing.T) {
	model := dynModel(t)
	var allowed unix.CPUSet
	if err := unix.SchedGetaffinity(0, &allowed); err != nil {
		t.Skipf("no CPU affinity here: %v", err)
	}
	core := -1
	for c := range 1024 {
		if allowed.IsSet(c) {
			core = c
		}
	}
	if _, err := os.Stat("/proc/stat"); err != nil || core < 0 {
		t.Skip("needs /proc and a CPU affinity mask")
	}
	defer pinProcess(t, core)()

	// Was the core quiet before the co-runner? Then the share must also
	// leave the first half out.
	pre, err := interference.Start(context.Background(), interference.Config{CPUs: []int{core}})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	quiet := pre.Stop().State == report.MeasurementStable

	const phase = 6 * time.Second
	var once sync.Once
	var spinner *exec.Cmd
	var first time.Time
	hook := func(seq int) {
		if seq == 0 {
			first = time.Now()
		}
		if first.IsZero() || time.Since(first) < phase/2 {
			return
		}
		once.Do(func() {
			spinner = exec.Command("sh", "-c", "while :; do :; done")
			if err := spinner.Start(); err != nil {
				t.Errorf("start the co-runner: %v", err)
				spinner = nil
				return
			}
			var one unix.CPUSet
			one.Set(core)
			if err := unix.SchedSetaffinity(spinner.Process.Pid, &one); err != nil {
				t.Errorf("pin the co-runner: %v", err)
			}
		})
	}
	t.Cleanup(func() {
		if spinner != nil {
			_ = spinner.Process.Kill()
			_ = spinner.Wait()
		}
	})
	tel := newTelemetry(t)
	rep, err := Run(context.Background(), Config{
		ModelPath: model, Duration: phase, Warmup: 2, IntraOpThreads: 1, InterOpThreads: 1, runHook: hook,
		MeterProvider: tel.mp,
	})
	if err != nil {
		t.Fatal(err)
	}
	if spinner == nil {
		t.Fatal("the co-runner never started")
	}
	m := rep.Measurement
	if m == nil {
		t.Fatalf("no measurement in the report (notes %q)", rep.Notes)
	}
	t.Logf("verdict %s; reasons %+v; co-runners %+v; pre-phase quiet %v", m.Line(), m.Reasons, m.CoRunners, quiet)
	if m.State != report.MeasurementDisturbed || !strings.HasPrefix(rep.Verdict, "disturbed: ") {
		t.Fatalf("state %q, verdict %q: want disturbed", m.State, rep.Verdict)
	}
	var share float64
	for _, r := range m.Reasons {
		if r.Kind == interference.KindCoRunner {
			share = r.Share
		}
	}
	// The loop ran in the second half: about half the phase, never much
	// less; all of it only when the core was busy before the loop too.
	if share < 0.3 || (quiet && share > 0.95) {
		t.Errorf("co-runner share %.2f, want at least 0.3 (and under 0.95 on a core quiet before)", share)
	}
	// The requests that ended in disturbed samples carry the verdict.
	var disturbedRuns uint64
	if h, ok := tel.metrics(t)["ortel.load.request.duration"].Data.(metricdata.Histogram[float64]); ok {
		for _, dp := range h.DataPoints {
			if v, ok := dp.Attributes.Value(semconv.OrtelMeasurementVerdictKey); ok && v.AsString() == report.MeasurementDisturbed {
				disturbedRuns += dp.Count
			}
		}
	}
	if disturbedRuns == 0 {
		t.Error("no ortel.load.request.duration point has ortel.measurement.verdict=disturbed")
	}
	named := false
	for _, c := range m.CoRunners {
		named = named || c.PID == spinner.Process.Pid
	}
	want := fmt.Sprintf("pid %d (sh", spinner.Process.Pid)
	switch {
	case named && !strings.Contains(strings.Join(m.Advice, "\n"), want):
		t.Errorf("advice %q does not name the loop, %q", m.Advice, want)
	case !named && (quiet || len(m.CoRunners) < 5):
		t.Errorf("co-runners %+v: want the loop (pid %d) among them", m.CoRunners, spinner.Process.Pid)
	case !named:
		// Five busier processes shared the core: the list is full.
		t.Logf("the loop is not among the five busiest co-runners of a busy core")
	}
}
