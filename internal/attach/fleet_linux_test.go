//go:build linux

package attach

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/ortel-dev/ortel/semconv"
	"os/exec"
)

// TestEmitterSampling feeds the emitter made-up run events of two
// processes (no probes) and checks what sampling, the duty cycle's
// scaling and the events/s limits leave: run counts always cover every
// run seen (scaled by the share, labelled with it), histograms and spans
// only the admitted and sampled ones, and the shed runs are counted.
// Planted: counting runs after the limit's check (shed runs missing from
// onnxruntime.runs: 40 and 30 for 100), and reporting the runs seen
// unscaled (100 for 400); each failed here.
func TestEmitterSampling(t *testing.T) {
	const sec = uint64(1e9)
	for _, tc := range []struct {
		name                string
		share, ratio        float64
		rate                rateLimit
		runs, failed        int // per process, in one second
		wantRuns, wantErrs  int64
		wantPoints, wantSpn int
		wantShed            int64
	}{
		{name: "every run", share: 1, ratio: 1, runs: 50, failed: 2, wantRuns: 100, wantErrs: 4, wantPoints: 100, wantSpn: 100},
		{name: "a span for every 4th run", share: 1, ratio: 0.25, runs: 50, wantRuns: 100, wantPoints: 100, wantSpn: 25},
		{name: "no spans", share: 1, ratio: 0, runs: 50, wantRuns: 100, wantPoints: 100},
		{name: "attached a quarter of the time", share: 0.25, ratio: 1, runs: 50, failed: 3, wantRuns: 400, wantErrs: 24, wantPoints: 100, wantSpn: 100},
		{name: "process limit", share: 1, ratio: 1, rate: rateLimit{process: 20}, runs: 50, wantRuns: 100, wantPoints: 40, wantSpn: 40, wantShed: 60},
		{name: "node limit", share: 1, ratio: 1, rate: rateLimit{process: 40, node: 30}, runs: 50, wantRuns: 100, wantPoints: 30, wantSpn: 30, wantShed: 70},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSinks()
			cfg := s.cfg.resolve()
			cfg.spanRatio = tc.ratio // 0 here: resolve reads a Config's 0 as every run
			e := newEmitter(cfg, func(pid uint32) []attribute.KeyValue {
				return []attribute.KeyValue{attribute.Int("process.pid", int(pid))}
			}, func(e *emitter) { e.share, e.rate = tc.share, tc.rate })
			for _, pid := range []uint32{10, 20} {
				for i := 0; i < tc.runs; i++ {
					ev := event{kind: evRun, pid: pid, start: 5*sec + uint64(i)*1000, end: 5*sec + uint64(i)*1000 + 500, arg: 0xabc}
					if i < tc.failed {
						ev.ret, ev.session = 1, 2
					}
					e.handle(ev)
				}
			}
			m := s.metrics(t)
			if n := sumInt(t, m["onnxruntime.runs"]); n != tc.wantRuns {
				t.Errorf("onnxruntime.runs %d, want %d", n, tc.wantRuns)
			}
			if tc.wantErrs > 0 {
				if n := sumInt(t, m["onnxruntime.run.errors"]); n != tc.wantErrs {
					t.Errorf("onnxruntime.run.errors %d, want %d", n, tc.wantErrs)
				}
			}
			if n := histCount(t, m["onnxruntime.run.duration"], ""); n != uint64(tc.wantPoints) {
				t.Errorf("onnxruntime.run.duration count %d, want %d (unscaled)", n, tc.wantPoints)
			}
			if n := len(s.runSpans()); n != tc.wantSpn {
				t.Errorf("%d run spans, want %d", n, tc.wantSpn)
			}
			if n := e.nShed.Load(); n != tc.wantShed {
				t.Errorf("shed %d, want %d", n, tc.wantShed)
			}
			// The share labels every count and histogram point when below 1.
			for _, p := range m["onnxruntime.runs"].(metricdata.Sum[int64]).DataPoints {
				v, ok := p.Attributes.Value(semconv.OnnxruntimeRunSampledShareKey)
				if (tc.share < 1) != ok || (ok && v.AsFloat64() != tc.share) {
					t.Errorf("onnxruntime.runs point has sampled_share %v (present %v), want %v", v.AsFloat64(), ok, tc.share)
				}
			}
			for _, p := range m["onnxruntime.run.duration"].(metricdata.Histogram[float64]).DataPoints {
				if _, ok := p.Attributes.Value(semconv.OnnxruntimeRunSampledShareKey); (tc.share < 1) != ok {
					t.Errorf("onnxruntime.run.duration point: sampled_share present %v, share %v", ok, tc.share)
				}
			}
		})
	}
}

// The events/s window moves with the probes' clock: a new second starts
// a new count.
func TestRateLimitNewSecond(t *testing.T) {
	r := rateLimit{process: 2}
	var got []bool
	for _, end := range []uint64{1e9, 1e9 + 1, 1e9 + 2, 2e9, 2e9 + 5} {
		got = append(got, r.admit(7, end))
	}
	if want := []bool{true, true, false, true, true}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("admitted %v, want %v", got, want)
	}
}

// startFleet makes a Fleet into s, always attached unless set says.
func startFleet(t *testing.T, s *sinks, set ...func(*Config)) *Fleet {
	t.Helper()
	c := s.cfg
	for _, f := range set {
		f(&c)
	}
	f, err := NewFleet(c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// drain reads every event the probes sent so far (Run with a context
// already done reads what is there and returns).
func drain(t *testing.T, f *Fleet) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := f.Run(ctx); err != nil {
		t.Fatal(err)
	}
}

// A Fleet attaches a Node.js process given to Add: its runs become spans
// and metrics; Remove takes its 9 probes off (and its programs stay
// loaded for the next process); a second Add of it does nothing.
func TestFleetAddRemove(t *testing.T) {
	requireEBPF(t)
	model := testModel(t)
	c := startNode(t, "1.30.0")
	s := newSinks()
	f := startFleet(t, s)
	if err := f.Add(c.pid()); err != nil {
		t.Fatal(err)
	}
	if err := f.Add(c.pid()); err != nil {
		t.Fatal(err)
	}
	if n := f.ProbesOn(c.pid()); n != probesPerLibrary {
		t.Fatalf("%d probes on the process, want %d", n, probesPerLibrary)
	}
	c.do("create " + model)
	c.do("run 40")
	drain(t, f)
	if n := len(s.runSpans()); n != 40 {
		t.Errorf("%d run spans, want 40", n)
	}
	if err := f.Remove(c.pid()); err != nil {
		t.Fatal(err)
	}
	if n, st := f.ProbesOn(c.pid()), f.Stats(); n != 0 || st.Probes != 0 || st.Members != 0 {
		t.Fatalf("after Remove: %d probes on the process, stats %+v", n, st)
	}
	c.do("run 10") // not seen
	drain(t, f)
	if n := len(s.runSpans()); n != 40 {
		t.Errorf("%d run spans after Remove, want still 40", n)
	}
	m := s.metrics(t)
	if n := sumInt(t, m["onnxruntime.runs"]); n != 40 {
		t.Errorf("onnxruntime.runs %d, want 40", n)
	}
}

// A Python process is refused with ErrPython, a process without ONNX
// Runtime with ErrNoORT; neither is admitted.
func TestFleetRefuses(t *testing.T) {
	requireEBPF(t)
	s := newSinks()
	f := startFleet(t, s)
	err := f.Add(1 << 30)
	if err == nil || !strings.Contains(err.Error(), "no such process") {
		t.Errorf("Add of a missing process: %v", err)
	}
	self := startSleep(t)
	if err := f.Add(self); !errors.Is(err, ErrNoORT) {
		t.Errorf("Add of sleep: %v, want ErrNoORT", err)
	}
	if st := f.Stats(); st.Members != 0 || st.Probes != 0 {
		t.Errorf("stats %+v after refusals", st)
	}
}

// The node's probe limit: a second process that would pass it waits, is
// not attached, and is attached as soon as the first one is removed.
func TestFleetNodeLimit(t *testing.T) {
	requireEBPF(t)
	a, b := startNode(t, "1.30.0"), startNode(t, "1.30.0")
	s := newSinks()
	f := startFleet(t, s, withLimits(Limits{NodeProbes: probesPerLibrary}))
	if err := f.Add(a.pid()); err != nil {
		t.Fatal(err)
	}
	if err := f.Add(b.pid()); !errors.Is(err, ErrNodeLimit) {
		t.Fatalf("second Add: %v, want ErrNodeLimit", err)
	}
	if n := f.ProbesOn(b.pid()); n != 0 {
		t.Fatalf("the waiting process has %d probes", n)
	}
	if st := f.Stats(); st.Waiting != 1 || st.Probes != probesPerLibrary {
		t.Fatalf("stats %+v, want 1 waiting and %d probes", st, probesPerLibrary)
	}
	if err := f.Remove(a.pid()); err != nil {
		t.Fatal(err)
	}
	if n := f.ProbesOn(b.pid()); n != probesPerLibrary {
		t.Fatalf("after the first left, the waiting process has %d probes, want %d", n, probesPerLibrary)
	}
}

// The duty cycle: the probes come off when the window closes and back on
// when the next opens; runs made while off are not seen, and the count of
// the runs seen is reported divided by the share, labelled with it. The
// windows are driven by calling poll with chosen times, not by waiting.
func TestFleetDutyCycle(t *testing.T) {
	requireEBPF(t)
	model := testModel(t)
	c := startNode(t, "1.30.0")
	c.do("create " + model)
	s := newSinks()
	f := startFleet(t, s, withDuty(time.Second, 4*time.Second))
	if err := f.Add(c.pid()); err != nil {
		t.Fatal(err)
	}
	c.do("run 10") // window 1: seen
	f.poll(f.start.Add(2 * time.Second))
	if n := f.ProbesOn(c.pid()); n != 0 {
		t.Fatalf("window closed, %d probes still on", n)
	}
	c.do("run 30") // closed: not seen
	f.poll(f.start.Add(4 * time.Second))
	if n := f.ProbesOn(c.pid()); n != probesPerLibrary {
		t.Fatalf("window open again, %d probes on, want %d", n, probesPerLibrary)
	}
	// The window lasts its second from when the probes were all on, not
	// from the period's start: attaching takes time, and the counts are
	// scaled by the time the probes are on.
	f.poll(f.openedAt.Add(time.Second - time.Millisecond))
	if n := f.ProbesOn(c.pid()); n != probesPerLibrary {
		t.Fatalf("window closed before its second was up: %d probes on", n)
	}
	c.do("run 15") // window 2: seen
	drain(t, f)
	if st := f.Stats(); st.Windows != 2 || st.Runs != 25 || st.Failed != 0 {
		t.Errorf("stats %+v, want 2 windows and 25 runs seen", st)
	}
	m := s.metrics(t)
	if n := sumInt(t, m["onnxruntime.runs"]); n != 100 {
		t.Errorf("onnxruntime.runs %d, want 25 seen / 0.25 = 100", n)
	}
	if n := histCount(t, m["onnxruntime.run.duration"], ""); n != 25 {
		t.Errorf("onnxruntime.run.duration count %d, want the 25 seen", n)
	}
	for _, sp := range s.runSpans() {
		if v, ok := attr(sp.Attributes(), semconv.OnnxruntimeRunSampledShareKey); !ok || v != "0.25" {
			t.Fatalf("run span sampled_share %q (%v), want 0.25", v, ok)
		}
	}
}

// startSleep starts a process without ONNX Runtime and returns its pid.
func startSleep(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd.Process.Pid
}

// The probes come off and go back on while the target runs, again and
// again, with calls in flight (Run's return probe is armed on the
// target's stack): the target must keep running and answer, and every
// run seen must have ended (none stays counted as active).
func TestFleetDetachDuringRunsConcurrentSafe(t *testing.T) {
	requireEBPF(t)
	model := testModel(t)
	c := startNode(t, "1.24.3")
	c.do("create " + model)
	s := newSinks()
	const period = 10 * time.Second
	f := startFleet(t, s, withDuty(time.Second, period))
	if err := f.Add(c.pid()); err != nil {
		t.Fatal(err)
	}
	if _, err := c.stdin.Write([]byte("run 20000\n")); err != nil {
		t.Fatal(err)
	}
	answer := make(chan string, 1)
	go func() {
		if c.out.Scan() {
			answer <- c.out.Text()
		}
		close(answer)
	}()
	toggles := 0
	var got string
	for got == "" {
		select {
		case a, ok := <-answer:
			if !ok {
				t.Fatalf("the client ended after %d detaches and attaches during its runs: %v", toggles, c.cmd.Wait())
			}
			got = a
		default:
			// Times of the poll's own making: each window closes in its
			// period's last second, and the next opens.
			at := f.start.Add(time.Duration(toggles) * period)
			f.poll(at.Add(period - time.Second)) // closed
			f.poll(at.Add(period))               // open
			if f.ProbesOn(c.pid()) != probesPerLibrary {
				t.Fatalf("window %d did not open", toggles+2)
			}
			toggles++
		}
	}
	if !strings.HasPrefix(got, "ran 20000 ") {
		t.Fatalf("client: %q", got)
	}
	drain(t, f)
	if st := f.Stats(); st.Failed != 0 || st.Runs == 0 {
		t.Errorf("after %d detaches and attaches: stats %+v, want runs seen and no failed attach", toggles, st)
	}
	if n := sumInt(t, s.metrics(t)["onnxruntime.run.active"]); n != 0 {
		t.Errorf("onnxruntime.run.active %d after the runs, want 0", n)
	}
	t.Logf("%d detaches and attaches during 20000 runs; %d runs seen", toggles, f.Stats().Runs)
}

// withLimits and withDuty set a Config's Limits and Duty (startFleet).
func withLimits(l Limits) func(*Config) { return func(c *Config) { c.Limits = l } }

func withDuty(on, period time.Duration) func(*Config) {
	return func(c *Config) { c.Duty = DutyCycle{On: on, Period: period} }
}
