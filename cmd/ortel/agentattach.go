package main

import (
	"context"
	"errors"
	"fmt"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
	"io"
	"io/fs"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ortel-dev/ortel/internal/attach"
	"github.com/ortel-dev/ortel/internal/units"
)

// attachFlags is the group of `ortel agent --attach`: attach's probes on
// every process discovery finds, bounded by a duty cycle and limits.
type attachFlags struct {
	on                    bool
	spanRatio             float64
	duty                  string
	dutyOn, dutyPeriod    time.Duration
	processProbes, probes int
	processRuns, runs     int
}

// defaultDuty is the fleet's default duty cycle, attach.FleetDutyOn of
// every attach.FleetDutyPeriod (TestAgentAttachDefaultDuty): a short model
// pays a twentieth of what the probes cost while on (README, "Attaching
// every process").
const defaultDuty = "3s/1m"

func (x *attachFlags) register(fs *flagSet) {
	fs.boolFlag(&x.on, "attach", false,
		"with --discover: put attach's eBPF probes on every discovered process that uses ONNX Runtime's C API (Node.js, C, C++, "+
			"C#, Java, Rust, Go; not Python) and take them off when it exits, so its runs become run spans and run metrics "+
			"with its pod. Needs root or CAP_BPF+CAP_PERFMON besides what --discover needs")
	fs.float64Flag(&x.spanRatio, "attach-span-ratio", "R", 0.01,
		"the share of attached runs that get a run span, 0 to 1 (default 0.01); the run metrics count every run seen")
	fs.stringFlag(&x.duty, "attach-duty", "ON/PERIOD", defaultDuty,
		"keep the probes on for ON of every PERIOD, off the rest (default "+defaultDuty+"; \"always\" keeps them on): a probe "+
			"costs the process a few µs on every run it is on. Counts are then estimates (what was seen divided by ON/PERIOD) "+
			"labelled onnxruntime.run.sampled_share; histograms hold the runs seen")
	fs.intFlag(&x.processProbes, "attach-max-process-probes", "N", attach.DefaultLimits.ProcessProbes,
		"the most probes on one process (9 per ONNX Runtime library it loads); a process needing more is not attached")
	fs.intFlag(&x.probes, "attach-max-probes", "N", attach.DefaultLimits.NodeProbes,
		"the most probes on this node; a process past it waits until another exits")
	fs.intFlag(&x.processRuns, "attach-max-process-runs", "N", attach.DefaultLimits.ProcessEvents,
		"the most runs per second of one process that become spans and histogram points; the rest are counted and shed")
	fs.intFlag(&x.runs, "attach-max-runs", "N", attach.DefaultLimits.NodeEvents,
		"the most runs per second of all processes that become spans and histogram points; the rest are counted and shed")
}

// validate checks the group's flags; discover is whether --discover is on.
func (x *attachFlags) validate(fs *flagSet, discover bool) error {
	if !x.on {
		for _, name := range []string{"attach-span-ratio", "attach-duty", "attach-max-process-probes", "attach-max-probes",
			"attach-max-process-runs", "attach-max-runs"} {
			if flagGiven(fs.FlagSet, name) {
				return usagef("--%s needs --attach", name)
			}
		}
		return nil
	}
	if !discover {
		return usagef("--attach needs --discover")
	}
	if x.duty != "always" {
		on, period, ok := strings.Cut(x.duty, "/")
		var err1, err2 error
		x.dutyOn, err1 = time.ParseDuration(on)
		x.dutyPeriod, err2 = time.ParseDuration(period)
		if !ok || err1 != nil || err2 != nil {
			return usagef("--attach-duty %q: want ON/PERIOD, two durations such as 3s/1m, or always", x.duty)
		}
	}
	return usage(x.config().ValidateFleet())
}

// config is the fleet's Config the flags give (without where it sends
// what it sees).
func (x *attachFlags) config() attach.Config {
	return attach.Config{SpanRatio: x.spanRatio, Duty: attach.DutyCycle{On: x.dutyOn, Period: x.dutyPeriod},
		Limits: attach.Limits{ProcessProbes: x.processProbes, NodeProbes: x.probes,
			ProcessEvents: x.processRuns, NodeEvents: x.runs}}
}

// attaching reports, for discovery, what the fleet does with each
// process: each refusal once per process, the full reason once per kind
// of reason, and shed or lost runs once when they start.
type attaching struct {
	mu       sync.Mutex
	fleet    *attach.Fleet
	members  map[int]bool    // processes admitted
	said     map[string]bool // kinds of reason already explained
	refused  map[string]int  // processes not attached, by kind
	attached int             // processes admitted
	shed     bool
	lost     bool
	lastErr  string
}

func newAttaching(f *attach.Fleet) *attaching {
	return &attaching{fleet: f, said: map[string]bool{}, refused: map[string]int{}, members: map[int]bool{}}
}

// startAttach makes the fleet of `agent --attach` into the harness's
// telemetry, reading processes under root, and runs it in the background
// until ctx ends; the returned stop waits for it, detaches every probe and
// says what it saw (unless quiet). say is nil when quiet.
func startAttach(ctx context.Context, x *attachFlags, h *harness, root string, e *env, say func(string, ...any)) (*attaching, func(), error) {
	c := x.config()
	c.HostRoot, c.TracerProvider, c.MeterProvider = root, h.tel.TracerProvider, h.tel.MeterProvider
	if x.spanRatio == 0 { // a Config's 0 is every run; --attach-span-ratio 0 is none
		c.TracerProvider = tracenoop.NewTracerProvider()
	}
	f, err := attach.NewFleet(c)
	if err != nil {
		return nil, nil, err
	}
	a := newAttaching(f)
	var wg sync.WaitGroup
	var runErr error
	wg.Go(func() { runErr = f.Run(ctx) })
	if say != nil {
		wg.Go(func() {
			tick := time.NewTicker(time.Second)
			defer tick.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case <-tick.C:
					a.check(say)
				}
			}
		})
	}
	stop := func() {
		wg.Wait()
		err := errors.Join(runErr, f.Close())
		if say != nil {
			a.check(say)
			a.summary(e.stderr)
			if err != nil {
				say("attach: %v", err)
			}
		}
	}
	return a, stop, nil
}

// refusalKind names the kind of an Add error, for counting.
func refusalKind(err error) string {
	switch {
	case errors.Is(err, attach.ErrPython):
		return "Python binding"
	case errors.Is(err, fs.ErrPermission):
		return "no permission"
	case errors.Is(err, attach.ErrProcessLimit):
		return "past the probes per process"
	case errors.Is(err, attach.ErrNodeLimit):
		return "waiting for room under the node's probes"
	case errors.Is(err, attach.ErrNoORT):
		return "no ONNX Runtime C API"
	}
	return "failed"
}

// add attaches a started process and returns what to say after its
// "watching" line: "" or "; not attached: ...".
func (a *attaching) add(pid int) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	err := a.fleet.Add(pid)
	if err == nil || errors.Is(err, attach.ErrNodeLimit) {
		a.members[pid] = true // a waiting process is removed like one attached
	}
	if err == nil {
		a.attached++
		if a.fleet.Share() < 1 {
			return "; probes attached during each duty-cycle window"
		}
		return "; probes attached"
	}
	kind := refusalKind(err)
	a.refused[kind]++
	if a.said[kind] {
		return "; not attached (" + kind + ")"
	}
	a.said[kind] = true
	return "; not attached: " + err.Error()
}

// remove detaches an exited process and returns what to say after its
// line: "" or "; its probes are removed".
func (a *attaching) remove(pid int) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.members[pid] {
		return ""
	}
	delete(a.members, pid)
	if err := a.fleet.Remove(pid); err != nil {
		return fmt.Sprintf("; removing its probes: %v", err)
	}
	return "; its probes are removed"
}

// check says once when runs start being shed or lost, and each new error
// of a window's attach.
func (a *attaching) check(say func(string, ...any)) {
	a.mu.Lock()
	defer a.mu.Unlock()
	st := a.fleet.Stats()
	if st.Shed > 0 && !a.shed {
		a.shed = true
		say("attach: runs past the runs/s limits are counted without their span and histogram point (--attach-max-runs, --attach-max-process-runs)")
	}
	if st.Lost > 0 && !a.lost {
		a.lost = true
		say("attach: warning: runs lost: the probes' ring buffer was full (the agent fell behind)")
	}
	if err := a.fleet.LastError(); err != nil && err.Error() != a.lastErr {
		a.lastErr = err.Error()
		say("attach: %v", err)
	}
}

// summary says what the fleet saw, at the agent's exit.
func (a *attaching) summary(w io.Writer) {
	a.mu.Lock()
	defer a.mu.Unlock()
	st := a.fleet.Stats()
	scaled := "probes always on"
	if s := a.fleet.Share(); s < 1 {
		scaled = fmt.Sprintf("probes on %s of the time, counts scaled by %.4g", units.Percent(s, 1), 1/s)
	}
	fmt.Fprintf(w, "ortel agent: attach: %s attached, %s (%s): %d runs seen (%d failed), %d spans, %d shed, %d lost\n",
		plural(a.attached, "process", "processes"), plural(int(st.Windows), "probe window", "probe windows"), scaled,
		st.Runs, st.Errors, st.Spans, st.Shed, st.Lost)
	if len(a.refused) > 0 {
		var parts []string
		for _, kind := range slices.Sorted(maps.Keys(a.refused)) {
			parts = append(parts, fmt.Sprintf("%d (%s)", a.refused[kind], kind))
		}
		fmt.Fprintf(w, "ortel agent: attach: not attached: %s\n", strings.Join(parts, ", "))
	}
}

// lockedWriter serialises the writes of several goroutines.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
