package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"sync/atomic"
	"time"

	ort "github.com/yalue/onnxruntime_go"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/ortel-dev/ortel/instrument"
	"github.com/ortel-dev/ortel/internal/interference"
	"github.com/ortel-dev/ortel/internal/profreport"
	"github.com/ortel-dev/ortel/internal/progress"
	"github.com/ortel-dev/ortel/internal/report"
	"github.com/ortel-dev/ortel/internal/stats"
	"github.com/ortel-dev/ortel/internal/units"
	"github.com/ortel-dev/ortel/semconv"
)

// Config is what to bench and how.
type Config struct {
	ModelPath string
	ModelName string // default: file base name

	Shapes map[string][]int64 // whole input shapes by input name
	// DefaultShapes are used for inputs Shapes does not name; a dynamic
	// first dimension in them takes Batch.
	DefaultShapes map[string][]int64
	Values        map[string]string // constant input values by input name
	Batch         int64             // a dynamic first dimension left open takes this (default 1)
	// Batches, with two sizes or more, sweeps the batch size: each size is
	// measured in its own single-stream phase (Batch is then Batches[0]).
	// The model needs an input with a dynamic first dimension.
	Batches []int64

	Runs     int           // measured requests (default 100 when Duration is 0)
	Duration time.Duration // measure for this long instead of Runs
	// Auto, when set, measures until the interval of one percentile is
	// narrow enough or a time limit passes (--runs auto); Runs and
	// Duration are then unused. Single-stream and concurrent scenarios.
	Auto   *AutoRuns
	Warmup int // runs after the first, not measured
	// WarmupAuto warms up until steady state (see Warmup in the report), at
	// most WarmupMax runs (default DefaultWarmupMax); Warmup is then unused.
	WarmupAuto bool
	WarmupMax  int

	// Scenario is the load pattern of the measured phase (default
	// SingleStream).
	Scenario Scenario
	// Concurrency is the number of workers (default 1 for single-stream and
	// server, the number of CPUs for concurrent and offline).
	Concurrency int
	// Sessions says whether workers share one session (default) or each
	// has its own.
	Sessions SessionMode
	// QPS is the server scenario's target arrival rate, requests per
	// second. Needed unless SLA is set, in which case it starts the search.
	QPS float64
	// SLA, when set, is checked against the measured latencies; in the
	// server scenario it also starts the search for the peak rate meeting it.
	SLA *SLA
	// TrialDuration is the length of one trial of the SLA search (default
	// 2s); MaxTrials caps the trials (default DefaultMaxTrials).
	TrialDuration time.Duration
	MaxTrials     int
	// SLABudget is the time the SLA search may take, its closed-loop
	// capacity phase included (default DefaultSLABudget).
	SLABudget time.Duration

	// Generate, when more than 0, benches LLM generation: each measured
	// request is one greedy generation of Generate tokens from a prompt of
	// PromptTokens tokens (default DefaultPromptTokens), on a decoder with
	// a key/value cache in the Hugging Face/Optimum layout (input_ids,
	// past_key_values.*, and attention_mask, position_ids,
	// use_cache_branch, encoder_hidden_states when it has them).
	Generate     int
	PromptTokens int
	// EncoderTokens is the length of the encoder_hidden_states fed to the
	// decoder of an encoder-decoder (Whisper: 1500) when the model leaves
	// it symbolic; 0 takes the model's declared length.
	EncoderTokens int
	// EncoderPath, when set, is the encoder of an encoder-decoder: it runs
	// once on seeded inputs (dynamic sizes from EncoderShapes) and its
	// output is the decoder's encoder_hidden_states, instead of seeded
	// values.
	EncoderPath   string
	EncoderShapes map[string][]int64

	IntraOpThreads int // 0: ORT's default
	InterOpThreads int
	// Session holds the further session options: optimization level,
	// execution mode, saving the optimized model, session configuration
	// entries, execution providers.
	Session SessionOptions

	// Tune, when set, runs a tuning sweep (--tune) instead of one
	// measured phase; see Tune.
	Tune *Tune

	ProfileRuns int // runs of the operator-profiling pass; 0 skips it
	Seed        uint64

	TracerProvider trace.TracerProvider
	MeterProvider  metric.MeterProvider
	// ProfiledRunSpansOnly keeps the span of a profiled run only (the
	// profiling pass, runs profiled on demand, with their operator
	// spans): the other runs' spans are not recorded, their durations
	// being in the metrics. Default: a span for every run.
	ProfiledRunSpansOnly bool

	// Hardware, when set, samples hardware readings during every measured
	// phase; its summary of the main phase becomes the report's hardware
	// section (batch steps and SLA trials keep their own).
	Hardware HardwareSampler

	// Interference configures the machine watch of every measured phase
	// (internal/interference): its verdict on the main phase becomes the
	// report's measurement section and summary verdict. nil: defaults
	// (this process, the cores it may run on); NoInterference turns it
	// off.
	Interference   *interference.Config
	NoInterference bool

	// Progress, when set, receives one line per phase.
	Progress io.Writer
	// Bars, when it is a terminal, shows a progress indicator during
	// each phase that runs the model many times (warm-up, measured
	// phase, SLA trials, batch sizes, tuning sweep, profiling pass):
	// runs against the cap, time against the cap (progress.Start). Nil,
	// or not a terminal: none.
	Bars io.Writer
	// bar is the phase's indicator now shown, cleared before a progress
	// line; shared by the copies of the Config one Run makes.
	bar **progress.Bar

	// OnDemand, when set, lets a signal or an endpoint profile the next
	// runs of the measured sessions while they are open (see OnDemand).
	OnDemand *OnDemand

	// NodeObserver, when set, also receives every profiled operator (the
	// live view draws the last profiled run's timeline from them).
	NodeObserver func(instrument.ProfiledNode)

	// runHook, for tests, is called inside every measured request, after
	// its run, with the request's number in its phase.
	runHook func(seq int)
	// tuneHook, for tests, is called before each block of a tuning sweep's
	// round with the configuration's label.
	tuneHook func(round int, label string)
}

// Result is the report plus what the caller may want to look at.
type Result struct {
	Report *report.Report
}

// DefaultTrialDuration is the length of one SLA-search trial.
const DefaultTrialDuration = 2 * time.Second

func (c *Config) defaults() {
	c.bar = new(*progress.Bar)
	if c.Auto != nil {
		c.Auto.defaults()
		c.Runs, c.Duration = 0, 0
	}
	if c.Runs <= 0 && c.Duration <= 0 && c.Auto == nil {
		c.Runs = DefaultRuns
	}
	if len(c.Batches) == 1 {
		c.Batch = c.Batches[0]
		c.Batches = nil
	}
	if len(c.Batches) > 1 {
		c.Batch = c.Batches[0]
	}
	if c.Batch <= 0 {
		c.Batch = 1
	}
	if c.Warmup < 0 {
		c.Warmup = 0
	}
	if c.WarmupMax <= 0 {
		c.WarmupMax = DefaultWarmupMax
	}
	if c.Scenario == "" {
		c.Scenario = SingleStream
	}
	if c.Sessions == "" {
		c.Sessions = SharedSession
	}
	if c.Concurrency <= 0 {
		switch c.Scenario {
		case Concurrent, Offline:
			c.Concurrency = runtime.NumCPU()
		default:
			c.Concurrency = 1
		}
	}
	if c.TrialDuration <= 0 {
		c.TrialDuration = DefaultTrialDuration
	}
	if c.MaxTrials <= 0 {
		c.MaxTrials = DefaultMaxTrials
	}
	if c.SLABudget <= 0 {
		c.SLABudget = DefaultSLABudget
	}
	if c.PromptTokens <= 0 {
		c.PromptTokens = DefaultPromptTokens
	}
	if c.Tune != nil && c.Tune.Rounds == 0 {
		t := *c.Tune
		t.Rounds = DefaultTuneRounds
		c.Tune = &t
	}
}

func (c *Config) progress(format string, args ...any) {
	if c.bar != nil {
		(*c.bar).Clear()
	}
	if c.Progress != nil {
		fmt.Fprintf(c.Progress, format+"\n", args...)
	}
}

// Run benches the model. ONNX Runtime must be initialized.
func Run(ctx context.Context, cfg Config) (*report.Report, error) {
	cfg.defaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	rep := &report.Report{
		SchemaVersion: report.SchemaVersion,
		CreatedAt:     time.Now().UTC(),
		Host:          hostInfo(),
		Runtime:       report.Runtime{ORTVersion: ort.GetVersion(), Providers: cfg.Session.runtimeProviders()},
		Config: report.Config{
			Runs: cfg.Runs, DurationS: cfg.Duration.Seconds(), Warmup: cfg.Warmup,
			IntraOpThreads: cfg.IntraOpThreads, InterOpThreads: cfg.InterOpThreads,
			Batch: cfg.Batch, ProfileRuns: cfg.ProfileRuns, Seed: cfg.Seed,
			Session: cfg.Session.record(),
		},
	}
	m, err := describeModel(cfg.ModelPath)
	if err != nil {
		return nil, err
	}
	if err := cfg.Session.checkAvailable(); err != nil {
		return nil, err
	}
	rep.Model = m.report
	if cfg.ModelName != "" {
		rep.Model.Name = cfg.ModelName
	}
	b := &bench{cfg: &cfg, rep: rep, model: m, ops: profreport.NewCollector()}
	b.met = newMetrics(cfg.MeterProvider, rep.Model.Name, cfg.Scenario)
	b.met.stateNow = func() string {
		if mon := b.mon.Load(); mon != nil {
			return mon.State()
		}
		return ""
	}
	tp := cfg.TracerProvider
	if cfg.ProfiledRunSpansOnly && tp != nil {
		tp = profiledOnly{next: tp, runSpan: "run " + rep.Model.Name}
	}
	b.iopts = []instrument.Option{
		instrument.WithModelName(rep.Model.Name),
		instrument.WithTracerProvider(tp),
		instrument.WithMeterProvider(cfg.MeterProvider),
		instrument.WithNodeObserver(b.observeNode),
	}
	if cfg.Generate > 0 {
		return b.generation(ctx)
	}
	if cfg.Tune != nil {
		return b.tune(ctx)
	}
	return b.load(ctx)
}

// HardwareSampler samples hardware readings during a measured phase.
type HardwareSampler interface {
	// Start begins sampling.
	Start(ctx context.Context) error
	// Stop ends sampling and summarizes it; runs is the number of
	// inferences in the phase, for energy per inference.
	Stop(runs int) *report.Hardware
}

// bench is one Run in progress.
type bench struct {
	cfg   *Config
	rep   *report.Report
	model *modelInfo
	met   *metrics
	ops   *profreport.Collector
	iopts []instrument.Option

	sessions      []*instrument.DynamicSession
	closers       []func() error // run after the sessions close
	outNames      []string
	firstRun      time.Time // when the cold first run started
	warmStarts    []float64 // start of each warm-up-curve run since firstRun, seconds
	warmMed       float64   // median latency of the last warm-up runs, seconds
	hwStarted     bool
	inPass        atomic.Bool // the profiling pass runs: its operators go to the report
	passRuns      int64       // runs the profiling pass profiled
	onDemandNoted bool
	monNoted      bool
	autoExtended  atomic.Bool // --runs auto went on past a narrow interval because the phase was disturbed

	mon atomic.Pointer[interference.Monitor] // the measured phase's, while it runs
}

// noteOnDemand notes, once, how many runs were profiled on demand (a
// signal or the live view): those the sessions profiled beyond the pass's.
func (b *bench) noteOnDemand() {
	if b.onDemandNoted || b.inPass.Load() {
		return
	}
	n := -b.passRuns
	for _, s := range b.sessions {
		n += s.ProfilingStats().Profiled
	}
	if n > 0 {
		b.onDemandNoted = true
		b.rep.Notes = append(b.rep.Notes, fmt.Sprintf("%d runs were profiled on demand during the bench (signal or live view); their latency is in the measured figures, their operators are not in the operator table", n))
	}
}

// startBar starts the indicator of a phase of total runs (0: not known)
// capped at limit (0: none); Done it when the phase ends.
func (c *Config) startBar(label string, total int, limit time.Duration) *progress.Bar {
	bar := progress.Start(c.Bars, label, int64(total)).Limit(limit)
	if c.bar != nil {
		*c.bar = bar
	}
	return bar
}

// measured runs one measured phase between the hardware sampler's Start and
// Stop, with a progress indicator of its requests.
func (b *bench) measured(ctx context.Context, p phase, exec execFunc) (*phaseResult, *report.Hardware, error) {
	label := p.label
	if label == "" {
		label = "measuring"
	}
	limit := p.duration
	if p.requests > 0 && p.until == nil {
		limit = 0 // the count ends it
	}
	bar := b.cfg.startBar(label, p.requests, limit)
	defer bar.Done()
	if bar != nil {
		observe := p.observe
		p.observe = func(r record) {
			if observe != nil {
				observe(r)
			}
			bar.Add(1)
		}
	}
	hw := b.cfg.Hardware
	if hw != nil {
		if err := hw.Start(ctx); err != nil && !b.hwStarted {
			b.rep.Notes = append(b.rep.Notes, "hardware sampling: "+err.Error())
		}
		b.hwStarted = true
	}
	mon := b.watch(ctx)
	res, err := runPhase(ctx, p, exec)
	if mon != nil {
		v := mon.Stop()
		b.mon.CompareAndSwap(mon, nil)
		if res != nil {
			v = interference.WithDrift(v, res.latencies())
			res.measurement = &v
		}
	}
	var h *report.Hardware
	if hw != nil {
		n := 0
		if res != nil {
			n = len(res.records)
		}
		h = hw.Stop(n)
	}
	return res, h, err
}

// watch starts the interference monitor of one measured phase; nil when
// it is off or cannot start (noted once).
func (b *bench) watch(ctx context.Context) *interference.Monitor {
	if b.cfg.NoInterference {
		return nil
	}
	var cfg interference.Config
	if b.cfg.Interference != nil {
		cfg = *b.cfg.Interference
	}
	mon, err := interference.Start(ctx, cfg)
	if err != nil {
		if !b.monNoted {
			b.monNoted = true
			b.rep.Notes = append(b.rep.Notes, "no measurement verdict: "+err.Error())
		}
		return nil
	}
	b.mon.Store(mon)
	return mon
}

// load benches the model under a load scenario, or sweeps batch sizes.
// synthesize makes the measured phase's input tensors for shapes, records
// their shapes and values in the report, and names the outputs.
func (b *bench) synthesize(shapes map[string][]int64) (*Inputs, error) {
	cfg, m := b.cfg, b.model
	inputs, err := Synthesize(m.inputs, shapes, cfg.DefaultShapes, cfg.Values, cfg.Batch, cfg.Seed)
	if err != nil {
		return nil, fmt.Errorf("model %q: %w", cfg.ModelPath, err)
	}
	for i, s := range inputs.Specs {
		b.rep.Model.Inputs[i].Shape = s.Shape
		b.rep.Model.Inputs[i].Value = s.Value
	}
	b.outNames = make([]string, len(m.outputs))
	for i, o := range m.outputs {
		b.outNames[i] = o.Name
	}
	return inputs, nil
}

func (b *bench) load(ctx context.Context) (*report.Report, error) {
	cfg, rep, m := b.cfg, b.rep, b.model
	sweep := len(cfg.Batches) > 1
	shapes := cfg.Shapes
	if sweep {
		if err := requireDynamicBatch(cfg.ModelPath, m.inputs); err != nil {
			return nil, err
		}
		shapes = shapesForBatch(m.inputs, cfg.Shapes, cfg.Batch)
	}
	inputs, err := b.synthesize(shapes)
	if err != nil {
		return nil, err
	}
	defer inputs.Destroy()
	// Deferred first: sessions opened before a failure close too.
	defer b.closeSessions()
	if err := b.openSessions(ctx, inputs.Names); err != nil {
		return nil, err
	}

	wls := make([]*workload, cfg.Concurrency)
	for w := range wls {
		wls[w] = &workload{sess: b.sessions[w%len(b.sessions)], inputs: inputs.Values, outputs: make([]ort.Value, len(b.outNames))}
		defer wls[w].destroyOutputs()
	}
	if err := b.coldAndWarm(ctx, wls); err != nil {
		return nil, err
	}

	exec := func(ctx context.Context, w, seq int) error {
		err := wls[w].run(ctx)
		if cfg.runHook != nil {
			cfg.runHook(seq)
		}
		return err
	}
	var res *phaseResult
	var hw *report.Hardware
	if sweep {
		res, hw, err = b.sweep(ctx, exec)
	} else {
		res, hw, err = b.scenario(ctx, exec)
	}
	if err != nil {
		return nil, err
	}
	rep.Hardware = hw
	b.finishMain(res)

	if err := b.profilePass(ctx, wls[0].run, cfg.ProfileRuns); err != nil {
		return nil, err
	}
	return rep, b.closeSessions()
}

// openSessions creates the measured session(s) and, first, the short-lived
// profiled session that splits creation into load and initialization.
func (b *bench) openSessions(ctx context.Context, inputNames []string) error {
	cfg, rep := b.cfg, b.rep
	rep.Warmup = &report.Warmup{Mode: "fixed", Method: steadyMethod, Window: DefaultSteadyWindow, Tolerance: DefaultSteadyTolerance}
	if cfg.WarmupAuto {
		rep.Warmup.Mode = "auto"
		rep.Warmup.MaxRuns = cfg.WarmupMax
	}
	load, initialize, err := coldSplit(cfg.ModelPath, inputNames, b.outNames, cfg.configure)
	if err != nil {
		rep.Notes = append(rep.Notes, "session load/initialization split unavailable: "+err.Error())
	} else {
		rep.Warmup.ModelLoadS, rep.Warmup.InitializationS = load.Seconds(), initialize.Seconds()
	}

	opts, err := sessionOptions(*cfg)
	if err != nil {
		return err
	}
	// With operator profiling on, the options must outlive the session.
	b.closers = append(b.closers, func() error { return opts.Destroy() })
	n := 1
	if cfg.Sessions == PerWorkerSessions {
		n = cfg.Concurrency
	}
	cfg.progress("creating %s for %s", report.Plural(n, "session"), rep.Model.Name)
	for i := 0; i < n; i++ {
		t0 := time.Now()
		sess, err := instrument.NewDynamicSession(ctx, cfg.ModelPath, inputNames, b.outNames, opts, b.iopts...)
		if err != nil {
			return err
		}
		if i == 0 {
			rep.Session.CreationS = time.Since(t0).Seconds()
		}
		b.sessions = append(b.sessions, sess)
	}
	cfg.OnDemand.attach(b.sessions)
	if p := cfg.Session.SaveOptimized; p != "" {
		st, err := os.Stat(p)
		if err != nil {
			return invalid("{Session.SaveOptimized} %s: ONNX Runtime wrote no optimized model: %w", p, err)
		}
		rep.Notes = append(rep.Notes, fmt.Sprintf("optimized model (optimization level %s) written to %s, %d bytes", rep.Config.Session.OptLevel, p, st.Size()))
	}
	return nil
}

// closeSessions closes every session once and destroys the options.
func (b *bench) closeSessions() error {
	b.cfg.OnDemand.detach()
	b.noteOnDemand()
	var errs []error
	for _, s := range b.sessions {
		if err := s.Close(context.Background()); err != nil {
			errs = append(errs, fmt.Errorf("close session: %w", err))
		}
	}
	b.sessions = nil
	for _, c := range b.closers {
		errs = append(errs, c())
	}
	b.closers = nil
	return errors.Join(errs...)
}

// coldAndWarm runs the cold first run, then warms up (a fixed number of
// runs or until steady state), building the warm-up curve.
func (b *bench) coldAndWarm(ctx context.Context, wls []*workload) error {
	cfg, rep := b.cfg, b.rep
	// Cold first run: ORT allocates the outputs, which later runs reuse.
	b.firstRun = time.Now()
	if err := wls[0].run(ctx); err != nil {
		return fmt.Errorf("first run of model %q: %w", cfg.ModelPath, err)
	}
	rep.Session.FirstRunS = time.Since(b.firstRun).Seconds()
	for i, o := range wls[0].outputs {
		if o != nil {
			rep.Model.Outputs[i].Shape = o.GetShape()
		}
	}
	curve, err := b.warmup(ctx, wls[0].run, rep.Session.FirstRunS, "")
	if err != nil {
		return err
	}
	// Other workers' first runs allocate their outputs; their own sessions
	// get as many warm-up runs as the first.
	for i, w := range wls[1:] {
		own := i+1 < len(b.sessions)
		runs := 1
		if own {
			runs = len(curve)
		}
		for k := 0; k < runs; k++ {
			if err := w.run(ctx); err != nil {
				return fmt.Errorf("warm-up run of worker %d of model %q: %w", i+2, cfg.ModelPath, err)
			}
		}
	}
	return nil
}

// warmup runs the warm-up after a first run of firstS seconds: Warmup runs,
// or (WarmupAuto) runs until the rolling-median test sees steady state, at
// most WarmupMax. It fills the report's warm-up section unless label names
// a batch-sweep step, and returns the curve.
func (b *bench) warmup(ctx context.Context, run func(context.Context) error, firstS float64, label string) ([]float64, error) {
	cfg := b.cfg
	det := &steadyDetector{w: DefaultSteadyWindow, tol: DefaultSteadyTolerance}
	det.add(firstS)
	starts := []float64{0}
	origin := time.Now().Add(-time.Duration(firstS * float64(time.Second)))
	n := cfg.Warmup
	if cfg.WarmupAuto {
		n = cfg.WarmupMax
		cfg.progress("warming up%s until steady state (at most %d runs)", label, n)
	} else {
		cfg.progress("warming up%s: %d runs", label, n)
	}
	bar := cfg.startBar("warming up"+label, n, 0)
	defer bar.Done()
	for i := 0; i < n; i++ {
		if cfg.WarmupAuto && det.ok {
			break
		}
		t := time.Now()
		if err := run(ctx); err != nil {
			return nil, fmt.Errorf("warm-up run %d of model %q: %w", i+1, cfg.ModelPath, err)
		}
		starts = append(starts, t.Sub(origin).Seconds())
		det.add(time.Since(t).Seconds())
		bar.Set(int64(i + 1))
	}
	curve := det.xs
	if len(curve) > 1 {
		b.warmMed = median(curve[max(1, len(curve)-DefaultSteadyWindow):])
	} else {
		b.warmMed = firstS
	}
	if label != "" {
		return curve, nil
	}
	w := b.rep.Warmup
	w.Runs = len(curve) - 1
	w.CurveS = curve
	if cfg.WarmupAuto {
		// The configuration shows the warm-up runs auto mode chose.
		b.rep.Config.Warmup = w.Runs
	}
	b.warmStarts = starts
	if det.ok {
		b.setSteady(det.j, curve, starts)
	} else if cfg.WarmupAuto {
		b.rep.Notes = append(b.rep.Notes, fmt.Sprintf("warm-up: latency did not reach steady state within %d runs (--warmup-max)", cfg.WarmupMax))
	}
	return curve, nil
}

// setSteady records steady state at run j of xs (run start times starts).
func (b *bench) setSteady(j int, xs, starts []float64) {
	w := b.rep.Warmup
	w.Steady = true
	w.SteadyAfterRuns = j
	w.DetectedAfterRuns = j + 2*DefaultSteadyWindow
	w.SteadyMedianS = median(xs[j : j+DefaultSteadyWindow])
	if j < len(starts) {
		w.SteadyS = starts[j]
	}
}

// scenario runs the measured phase of the configured scenario (and, for the
// server scenario with an SLA, the search before it).
func (b *bench) scenario(ctx context.Context, exec execFunc) (*phaseResult, *report.Hardware, error) {
	cfg, rep := b.cfg, b.rep
	ld := &report.Load{
		Scenario: string(cfg.Scenario), Concurrency: cfg.Concurrency, Sessions: string(cfg.Sessions),
		LatencyFrom: cfg.Scenario.latencyFrom(),
	}
	rep.Load = ld
	qps := cfg.QPS
	if cfg.Scenario == Server && cfg.SLA != nil {
		search, err := b.search(ctx, exec)
		ld.Search = search
		if err != nil {
			return nil, nil, err
		}
		if search.Found {
			b.met.capacity(*cfg.SLA, search.PeakQPS)
		}
		if qps <= 0 {
			switch {
			case search.Found:
				qps = search.PeakQPS
			case len(search.Trials) > 0:
				qps = search.Trials[len(search.Trials)-1].TargetQPS
				rep.Notes = append(rep.Notes, fmt.Sprintf("no rate was proven to meet the SLA %s; the measured phase ran at %.4g requests/s, the last tried", cfg.SLA, qps))
			default:
				qps = max(search.ClosedLoopQPS/3, 1e-3)
				rep.Notes = append(rep.Notes, fmt.Sprintf("the SLA search ran no trial; the measured phase ran at %.4g requests/s, a third of the closed-loop rate", qps))
			}
		}
	}
	ld.TargetQPS = qps
	p := phase{
		scenario: cfg.Scenario, workers: cfg.Concurrency,
		requests: cfg.Runs, duration: cfg.Duration, qps: qps, seed: cfg.Seed,
		observe: b.met.request,
	}
	if cfg.Scenario.queued() {
		p.depth = b.met.queue()
	}
	if cfg.Duration > 0 {
		p.requests = 0
	}
	if ld.Search != nil && cfg.Duration == 0 && cfg.Auto == nil && float64(p.requests) > qps*postSearchLimit.Seconds() {
		// The search had its budget; the phase at the rate it found only
		// adds the report's latency section, and at a slow rate its
		// requests would take longer than the search itself.
		p.duration = postSearchLimit
		rep.Notes = append(rep.Notes, fmt.Sprintf("the measured phase after the SLA search stopped issuing requests after %s (%d requests at %.4g requests/s would take %s): give --runs or --duration to measure longer",
			postSearchLimit, p.requests, qps, units.Duration(float64(p.requests)/qps)))
		cfg.progress("measuring: server scenario, Poisson arrivals at %.4g requests/s, %s, at most %s", qps, b.extent(cfg.Concurrency), postSearchLimit)
		return b.measured(ctx, p, exec)
	}
	if a := cfg.Auto; a != nil {
		p.requests, p.duration, p.until = a.MaxRuns, a.Limit, b.autoUntil(a)
		cfg.progress("measuring: %s scenario, %s, until the p%g interval (95%%) is within %g%% of it, at most %s",
			cfg.Scenario, report.Plural(cfg.Concurrency, "worker"), a.Percentile, 100*a.Width, a.Limit)
		return b.measured(ctx, p, exec)
	}
	switch {
	case cfg.Scenario == Server:
		cfg.progress("measuring: server scenario, Poisson arrivals at %.4g requests/s, %s", qps, b.extent(cfg.Concurrency))
	default:
		cfg.progress("measuring: %s scenario, %s", cfg.Scenario, b.extent(cfg.Concurrency))
	}
	return b.measured(ctx, p, exec)
}

// postSearchLimit caps the measured phase after an SLA search (without
// --runs auto or --duration): the phase at the found rate only fills the
// report's latency section.
const postSearchLimit = time.Minute

// DominatedShare is the share of disturbed time past which --runs auto
// keeps measuring although its interval is narrow enough: when most of
// the phase so far was disturbed, the interval describes the disturbance,
// and more runs may reach a quiet spell. It goes on for at most as long
// again as it took to reach the width (and within the auto limit), then
// stops and says so: a machine busy all along stays busy.
const DominatedShare = 0.5

// autoUntil is the --runs auto stopping rule: the interval is narrow
// enough and disturbed samples do not dominate the phase so far.
func (b *bench) autoUntil(a *AutoRuns) func([]float64) bool {
	return autoRule(a, func(now time.Time) *report.Measurement {
		mon := b.mon.Load()
		if mon == nil {
			return nil
		}
		v := mon.Window(time.Time{}, now)
		return &v
	}, &b.autoExtended)
}

// autoRule is autoUntil over judge, the verdict on the phase so far (nil
// when not watched); extended is set when it went on for a disturbance.
func autoRule(a *AutoRuns, judge func(now time.Time) *report.Measurement, extended *atomic.Bool) func([]float64) bool {
	start := time.Now()
	var reached time.Time // when the width was first reached
	return func(lat []float64) bool {
		if !a.satisfied(lat) {
			return false
		}
		now := time.Now()
		if reached.IsZero() {
			reached = now
		}
		if now.Sub(reached) >= reached.Sub(start) {
			return true
		}
		if v := judge(now); v.Disturbed() && v.AffectedShare > DominatedShare {
			extended.Store(true)
			return false
		}
		return true
	}
}

// extent describes how long the measured phase lasts.
func (b *bench) extent(workers int) string {
	w := report.Plural(workers, "worker")
	if b.cfg.Duration > 0 {
		return fmt.Sprintf("%s for %s", w, b.cfg.Duration)
	}
	return fmt.Sprintf("%s, %s", w, report.Plural(b.cfg.Runs, "request"))
}

// search brackets the peak server rate meeting the SLA within the
// budget: a closed-loop phase measures capacity and service times, then
// the trials (see searchMethod).
func (b *bench) search(ctx context.Context, exec execFunc) (*report.SLASearch, error) {
	cfg := b.cfg
	sla := *cfg.SLA
	began := time.Now()
	capDur := min(max(time.Duration(capacityShare*float64(cfg.SLABudget)), minCapacityPhase), maxCapacityPhase)
	sc := Concurrent
	if cfg.Concurrency == 1 {
		sc = SingleStream
	}
	cfg.progress("SLA search for %s within %s: measuring the closed-loop capacity for %s", sla, cfg.SLABudget,
		units.Duration(capDur.Seconds()))
	cp, _, err := b.measured(ctx, phase{scenario: sc, workers: cfg.Concurrency, duration: capDur}, exec)
	if err != nil {
		return nil, fmt.Errorf("SLA search, closed-loop phase: %w", err)
	}
	service := cp.latencies()
	capacity := 0.0
	if cp.wall > 0 {
		capacity = float64(len(service)) / cp.wall.Seconds()
	}
	predicted := predictRate(service, cfg.Concurrency, sla, cfg.Seed)
	cfg.progress("  closed loop: %.4g requests/s (%d requests, p50 %s); a queue model of it predicts %.4g requests/s meet the SLA",
		capacity, len(service), units.Duration(stats.Quantile(service, 0.5)), predicted)
	if alone := sla.check(service, cp.errors()); cfg.Concurrency == 1 && alone.Verdict == string(stats.Missed) {
		// With one worker a request's latency in a trial is its service
		// time plus its wait: if service times alone miss the SLA, every
		// rate does, and no trial can say more.
		res := &report.SLASearch{Method: searchMethod, Status: searchMissedAlone, Percentile: sla.Percentile, BudgetS: cfg.SLABudget.Seconds(),
			ElapsedS: time.Since(began).Seconds(), ClosedLoopQPS: capacity, PredictedQPS: predicted, Confidence: stats.SLAConfidence,
			Note: fmt.Sprintf("no rate can meet the SLA on this machine now: one request at a time, without queueing, already misses it "+
				"(p%g %s, %d of %d requests over %s; missed at 99%% confidence), so no trial was run", sla.Percentile, observed(alone),
				alone.Violations, alone.Requests, sla.Threshold)}
		cfg.progress("  %s", report.BracketText(res))
		return res, nil
	}
	trialNo := 0
	trial := func(ctx context.Context, spec trialSpec) (report.Trial, error) {
		trialNo++
		p := trialPhase(spec, cfg.Seed+uint64(trialNo))
		p.label = fmt.Sprintf("SLA trial %d at %.4g requests/s", trialNo, spec.qps)
		p.workers, p.depth = cfg.Concurrency, b.met.queue()
		res, hw, err := b.measured(ctx, p, exec)
		if err != nil {
			return report.Trial{}, fmt.Errorf("SLA trial at %.4g requests/s: %w", spec.qps, err)
		}
		t := trialResult(spec.sla, spec.rule, spec.qps, res)
		t.Hardware = hw
		t.Measurement, t.Disturbance = trialMeasurement(res.measurement)
		return t, nil
	}
	res, err := searchBracket(ctx, searchConfig{
		sla: sla, budget: cfg.SLABudget, spent: time.Since(began), capacity: capacity,
		predict: func(s SLA) float64 { return predictRate(service, cfg.Concurrency, s, cfg.Seed) },
		start:   cfg.QPS, maxTrials: cfg.MaxTrials, minTrial: cfg.TrialDuration,
		progress: func(no int, t report.Trial, left time.Duration) {
			cfg.progress("  %s", trialLine(no, t, left))
		},
	}, trial)
	if res != nil {
		res.ElapsedS = time.Since(began).Seconds()
		if !res.Found && b.warmMed > sla.Threshold.Seconds() {
			res.Note = joinNote(res.Note, fmt.Sprintf("a single request already takes longer than the SLA allows (warm-up median %s over %s), so no rate can meet it on this machine now",
				units.Duration(b.warmMed), sla.Threshold))
		}
		cfg.progress("  %s", report.BracketText(res))
		if res.Note != "" {
			cfg.progress("  note: %s", res.Note)
		}
	}
	return res, err
}

// trialMeasurement is a trial's verdict from the interference monitor:
// the machine's sources only. The drift test is left out: a trial above
// the peak rate builds a queue, and latency rising through it is what
// the trial measures, not a disturbance.
func trialMeasurement(m *report.Measurement) (state, why string) {
	if m == nil {
		return "", ""
	}
	if m.AffectedShare <= interference.DisturbedShare {
		return report.MeasurementStable, ""
	}
	var reasons []string
	for _, r := range m.Reasons {
		if r.Kind != interference.KindDrift {
			reasons = append(reasons, fmt.Sprintf("%s %.0f%% of the trial (%s)", r.Kind, 100*r.Share, r.Detail))
		}
	}
	return report.MeasurementDisturbed, strings.Join(reasons, "; ")
}

// trialLine is a trial's progress line: rate, requests, the judged
// percentile with its interval, the verdict, the budget left.
func trialLine(no int, t report.Trial, left time.Duration) string {
	what := "trial"
	if t.Probe {
		what = "probe"
	}
	return fmt.Sprintf("%s %d: %.4g requests/s, %d requests in %s, %s: %s; %s of the budget left",
		what, no, t.TargetQPS, t.Completed, units.Duration(t.WallS), report.TrialPercentileText(t), t.Outcome(), units.Duration(max(left, 0).Seconds()))
}

func joinNote(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

func observed(r report.SLAResult) string {
	if r.ObservedS == nil {
		return "a failed request"
	}
	return units.Duration(*r.ObservedS)
}

// sweep measures every batch size: the first in the main phase's place,
// the others in phases of their own with their own inputs.
func (b *bench) sweep(ctx context.Context, exec execFunc) (*phaseResult, *report.Hardware, error) {
	cfg, m := b.cfg, b.model
	var steps []report.BatchStep
	phaseFor := func(batch int64) phase {
		opt := b.met.batchOpt(batch)
		p := phase{scenario: SingleStream, workers: 1, requests: cfg.Runs, duration: cfg.Duration, observe: func(r record) {
			b.met.request(r)
			b.met.batchDuration.Record(context.Background(), r.latency.Seconds(), opt)
		}}
		if cfg.Duration > 0 {
			p.requests = 0
		}
		return p
	}
	cfg.progress("batch sweep %v: measuring batch %d, %s", cfg.Batches, cfg.Batch, b.extent(1))
	p := phaseFor(cfg.Batch)
	p.label = fmt.Sprintf("batch %d", cfg.Batch)
	first, hw, err := b.measured(ctx, p, exec)
	if err != nil {
		return nil, nil, err
	}
	st := sweepStep(cfg.Batch, first, cfg.SLA)
	st.Hardware = hw
	steps = append(steps, st)
	for _, bs := range cfg.Batches[1:] {
		in, err := Synthesize(m.inputs, shapesForBatch(m.inputs, cfg.Shapes, bs), cfg.DefaultShapes, cfg.Values, bs, cfg.Seed)
		if err != nil {
			return nil, nil, fmt.Errorf("model %q, batch %d: %w", cfg.ModelPath, bs, err)
		}
		wl := &workload{sess: b.sessions[0], inputs: in.Values, outputs: make([]ort.Value, len(b.outNames))}
		st, err := b.sweepOne(ctx, bs, wl, phaseFor(bs))
		wl.destroyOutputs()
		in.Destroy()
		if err != nil {
			return nil, nil, err
		}
		steps = append(steps, st)
	}
	sw := finishSweep(steps, cfg.SLA != nil)
	b.rep.BatchSweep = sw
	for _, s := range sw.Steps {
		opt := b.met.batchOpt(s.Batch)
		b.met.batchThroughput.Record(context.Background(), s.ItemsPerS, opt)
		b.met.batchEfficiency.Record(context.Background(), s.Efficiency, opt)
	}
	return first, hw, nil
}

// sweepOne measures one further batch size of a sweep.
func (b *bench) sweepOne(ctx context.Context, bs int64, wl *workload, p phase) (report.BatchStep, error) {
	cfg := b.cfg
	t := time.Now()
	if err := wl.run(ctx); err != nil {
		return report.BatchStep{}, fmt.Errorf("first run of model %q at batch %d: %w", cfg.ModelPath, bs, err)
	}
	if _, err := b.warmup(ctx, wl.run, time.Since(t).Seconds(), fmt.Sprintf(" batch %d", bs)); err != nil {
		return report.BatchStep{}, err
	}
	cfg.progress("batch sweep: measuring batch %d, %s", bs, b.extent(1))
	p.label = fmt.Sprintf("batch %d", bs)
	res, hw, err := b.measured(ctx, p, func(ctx context.Context, _, seq int) error {
		err := wl.run(ctx)
		if cfg.runHook != nil {
			cfg.runHook(seq)
		}
		return err
	})
	if err != nil {
		return report.BatchStep{}, fmt.Errorf("model %q at batch %d: %w", cfg.ModelPath, bs, err)
	}
	st := sweepStep(bs, res, cfg.SLA)
	st.Hardware = hw
	return st, nil
}

// finishMain turns the main measured phase into the report's latency,
// throughput, load, SLA, jitter and steady-state sections.
func (b *bench) finishMain(res *phaseResult) {
	cfg, rep := b.cfg, b.rep
	lat := res.latencies()
	errs := res.errors()
	rep.Latency = report.Latency{Summary: stats.Summarize(lat), Samples: lat, Errors: errs}
	rep.Measurement = res.measurement
	rep.Verdict = res.measurement.Line()
	if a := cfg.Auto; a != nil {
		rep.Config.AutoRuns = a.autoResult(lat, res.timedOut)
		rep.Config.Runs = len(res.records)
		r := rep.Config.AutoRuns
		switch {
		case b.autoExtended.Load() && res.measurement.Disturbed():
			rep.Notes = append(rep.Notes, fmt.Sprintf("--runs auto measured on past a narrow enough interval because the phase was disturbed most of the time, and stopped after %d runs still disturbed (%s of the phase): the figures describe the disturbance; see the measurement's advice",
				r.Runs, units.Percent(res.measurement.AffectedShare, 0)))
		case r.StoppedBy != "width":
			rep.Notes = append(rep.Notes, fmt.Sprintf("--runs auto stopped by its %s after %d runs, before the p%g interval came within %g%%", r.StoppedBy, r.Runs, a.Percentile, 100*a.Width))
		}
	}
	if w := res.wall.Seconds(); w > 0 {
		rep.Throughput = report.Throughput{
			RunsPerS:  float64(len(lat)) / w,
			ItemsPerS: float64(len(lat)) * float64(cfg.Batch) / w,
			WallS:     w,
		}
	}
	if ld := rep.Load; ld != nil {
		ld.AchievedQPS = rep.Throughput.RunsPerS
		ld.ItemsPerS = rep.Throughput.ItemsPerS
		ld.Requests = res.planned
		if ld.Requests == 0 {
			ld.Requests = len(res.records)
		}
		ld.Completed = len(lat)
		ld.Errors = errs
		ld.WallS = res.wall.Seconds()
		if cfg.Scenario.queued() {
			waits := make([]float64, len(res.records))
			for i, r := range res.records {
				waits[i] = r.wait.Seconds()
			}
			s := stats.Summarize(waits)
			ld.QueueWait = &s
			ld.MaxQueueDepth = res.maxDepth
		}
		opt := b.met.scenOpt
		if m := res.measurement; m != nil {
			opt = metric.WithAttributes(b.met.model, b.met.scenario, semconv.OrtelMeasurementVerdict(m.State))
		}
		b.met.throughput.Record(context.Background(), ld.AchievedQPS, opt)
	}
	if cfg.SLA != nil {
		r := cfg.SLA.check(lat, errs)
		if rep.Load != nil {
			rep.Load.SLA = &r
		}
		b.met.sla(*cfg.SLA, r)
	}
	rep.Jitter = jitter(res.records)
	b.met.jitter(rep.Jitter)

	// Steady state: single-stream measured runs continue the warm-up
	// curve, so the test goes on over them when the warm-up did not settle.
	if w := rep.Warmup; w != nil && !w.Steady && cfg.Scenario == SingleStream && len(cfg.Batches) < 2 {
		xs := append(append([]float64(nil), w.CurveS...), lat...)
		starts := append([]float64(nil), b.warmStarts...)
		base := res.start.Sub(b.firstRun).Seconds()
		for _, r := range res.records {
			if r.err == nil {
				starts = append(starts, base+r.offset.Seconds())
			}
		}
		if j, ok := steadyState(xs, DefaultSteadyWindow, DefaultSteadyTolerance); ok {
			b.setSteady(j, xs, starts)
			if j > w.Runs {
				rep.Notes = append(rep.Notes, fmt.Sprintf("latency reached steady state only %d runs into the measured phase; raise --warmup or use --warmup auto", j-w.Runs-1))
			}
		}
	}
	b.met.warmup(rep.Session.FirstRunS, rep.Warmup)
}

// profilePass profiles operators over n runs of run, in a pass of its own.
func (b *bench) profilePass(ctx context.Context, run func(context.Context) error, n int) error {
	if n <= 0 {
		return nil
	}
	cfg := b.cfg
	// Runs profiled on demand before the pass stay out of its table: wait
	// for their operators, then let the pass's in.
	cfg.OnDemand.detach()
	for _, s := range b.sessions {
		if err := s.Flush(ctx); err != nil {
			return err
		}
	}
	b.noteOnDemand()
	b.inPass.Store(true)
	defer b.inPass.Store(false)
	b.passRuns += int64(n)
	cfg.progress("profiling operators: %d runs (separate pass, not measured)", n)
	sess := b.sessions[0]
	if err := sess.ProfileRuns(ctx, n); err != nil {
		return fmt.Errorf("start the operator-profiling pass: %w", err)
	}
	bar := cfg.startBar("profiling operators", n, 0)
	defer bar.Done()
	for i := 0; i < n; i++ {
		if err := run(ctx); err != nil {
			return fmt.Errorf("profiled run %d of model %q: %w", i+1, cfg.ModelPath, err)
		}
		bar.Set(int64(i + 1))
	}
	if err := sess.Flush(ctx); err != nil {
		return err
	}
	b.rep.Operators = b.ops.Summary()
	return nil
}

// workload is one session with its bound tensors.
type workload struct {
	sess    *instrument.DynamicSession
	inputs  []ort.Value
	outputs []ort.Value
}

func (w *workload) run(ctx context.Context) error {
	return w.sess.Run(ctx, w.inputs, w.outputs)
}

func (w *workload) destroyOutputs() {
	for i, o := range w.outputs {
		if o != nil {
			o.Destroy()
			w.outputs[i] = nil
		}
	}
}

// configure applies the thread settings and the session options, except
// saving the optimized model, to session options.
func (c *Config) configure(o *ort.SessionOptions) error {
	if err := c.threads(o); err != nil {
		return err
	}
	return c.Session.apply(o, false)
}

// threads applies the thread settings to session options.
func (c *Config) threads(o *ort.SessionOptions) error {
	if c.IntraOpThreads > 0 {
		if err := o.SetIntraOpNumThreads(c.IntraOpThreads); err != nil {
			return invalid("{IntraOpThreads} %d: %w", c.IntraOpThreads, err)
		}
	}
	if c.InterOpThreads > 0 {
		if err := o.SetInterOpNumThreads(c.InterOpThreads); err != nil {
			return invalid("{InterOpThreads} %d: %w", c.InterOpThreads, err)
		}
	}
	return nil
}

func sessionOptions(cfg Config) (*ort.SessionOptions, error) {
	o, err := ort.NewSessionOptions()
	if err != nil {
		return nil, fmt.Errorf("create session options: %w", err)
	}
	err = cfg.threads(o)
	if err == nil {
		err = cfg.Session.apply(o, true)
	}
	if err != nil {
		o.Destroy()
		return nil, err
	}
	return o, nil
}

// observeNode feeds a profiled operator to the report and to the caller's
// observer.
func (b *bench) observeNode(n instrument.ProfiledNode) {
	if b.inPass.Load() {
		b.ops.Observe(n)
	}
	if fn := b.cfg.NodeObserver; fn != nil {
		fn(n)
	}
}
