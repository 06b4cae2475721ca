package bench

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/ortel-dev/ortel/instrument"
	"github.com/ortel-dev/ortel/instrument/ortlib"
	"github.com/ortel-dev/ortel/internal/report"
	"github.com/ortel-dev/ortel/internal/stats"
	"github.com/ortel-dev/ortel/internal/units"
)

// Tune asks bench for a tuning sweep (--tune): every combination of graph
// optimization level, intra-op thread count, execution mode and execution
// provider gets a session of its own and Config.Runs measured
// single-stream runs, interleaved in rounds. A dimension the Config fixes
// (IntraOpThreads, Session.OptLevel, Session.ExecutionMode,
// Session.Providers) is not swept unless its list here is given.
type Tune struct {
	// OptLevels to try (default disable, basic, extended, all).
	OptLevels []string
	// Threads are the intra-op thread counts to try (default DefaultTuneThreads).
	Threads []int
	// ExecutionModes to try (default sequential, parallel).
	ExecutionModes []string
	// Providers to try, one configuration each (the CPU provider is always
	// the fallback). Default: every provider this ONNX Runtime build lists
	// that bench knows.
	Providers []Provider
	// Rounds the runs of every configuration are split into (default
	// DefaultTuneRounds, at most Config.Runs).
	Rounds int
	// Model is the model as the user named it, for the reproducing command
	// line (default Config.ModelPath).
	Model string
	// Duel, when more than 0, caps the final duel: the best configuration
	// (B) against the default one (A, the Config as given), interleaved
	// A/B as in bench --ab (see AB), its verdict in the sweep's report.
	// 0: no duel.
	Duel time.Duration

	skipped []string // providers left out of the default sweep, and why
}

// probeProvider adds p to throw-away session options.
func probeProvider(p Provider) error {
	o, err := ort.NewSessionOptions()
	if err != nil {
		return err
	}
	defer o.Destroy()
	return p.append(o, nil)
}

// Defaults and bounds of a tuning sweep.
const (
	DefaultTuneRounds = 5
	// MaxTuneConfigs bounds one sweep: every configuration holds a session
	// open for the whole sweep.
	MaxTuneConfigs = 64
)

// TuneMinRuns is the fewest runs per configuration that bound a p50 at
// the sweep's confidence.
func TuneMinRuns() int { return stats.MinSamples(0.5, stats.DefaultConfidence) }

// tuneRule documents how the sweep picks its best configuration.
const tuneRule = "lowest p50 among the configurations whose p50 interval is bounded"

// DefaultTuneThreads returns the intra-op thread counts a sweep tries on a
// machine with cpus logical CPUs: the powers of two below cpus, and cpus.
func DefaultTuneThreads(cpus int) []int {
	var out []int
	for n := 1; n < cpus; n *= 2 {
		out = append(out, n)
	}
	return append(out, max(cpus, 1))
}

// ParseTuneThreads reads the thread counts a sweep tries: thread counts such as
// 1,2,4, each 1 or more, none twice.
func ParseTuneThreads(s string) ([]int, error) {
	var out []int
	for _, p := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil || n < 1 {
			return nil, invalid("{Tune.Threads} %q: %q is not a thread count of 1 or more (want a list such as 1,2,4)", s, strings.TrimSpace(p))
		}
		if slices.Contains(out, n) {
			return nil, invalid("{Tune.Threads} %q: %d is given twice", s, n)
		}
		out = append(out, n)
	}
	return out, nil
}

// ParseTuneList reads a comma-separated list of words for field (such as
// Tune.OptLevels) with parse checking each; "" gives nil (the default
// list).
func ParseTuneList(field, s string, parse func(string) (string, error)) ([]string, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var out []string
	for _, p := range strings.Split(s, ",") {
		v, err := parse(p)
		if err != nil {
			return nil, invalid("{"+field+"} %q: %w", s, err)
		}
		if v == "" {
			return nil, invalid("{"+field+"} %q: an empty item", s)
		}
		if slices.Contains(out, v) {
			return nil, invalid("{"+field+"} %q: %s is given twice", s, v)
		}
		out = append(out, v)
	}
	return out, nil
}

// tuneConfig is one configuration of the sweep.
type tuneConfig struct {
	opt, mode string
	threads   int
	provider  *Provider // nil: CPU only
}

func (c tuneConfig) label() string {
	s := fmt.Sprintf("opt %s, %s, %s", c.opt, report.Plural(c.threads, "thread"), c.mode)
	if c.provider != nil {
		s += ", " + c.provider.Name
	}
	return s
}

// configs expands the sweep's lists over what cfg fixes.
func (t *Tune) configs(cfg *Config) ([]tuneConfig, error) {
	opts := t.OptLevels
	if len(opts) == 0 {
		opts = []string{"disable", "basic", "extended", "all"}
		if cfg.Session.OptLevel != "" {
			opts = []string{cfg.Session.OptLevel}
		}
	}
	threads := t.Threads
	if len(threads) == 0 {
		threads = DefaultTuneThreads(runtime.NumCPU())
		if cfg.IntraOpThreads > 0 {
			threads = []int{cfg.IntraOpThreads}
		}
	}
	modes := t.ExecutionModes
	if len(modes) == 0 {
		modes = []string{"sequential", "parallel"}
		if cfg.Session.ExecutionMode != "" {
			modes = []string{cfg.Session.ExecutionMode}
		}
	}
	provs := []*Provider{nil}
	switch {
	case len(t.Providers) > 0 || len(cfg.Session.Providers) > 0:
		// Given, or named by --provider: one configuration each.
		list := t.Providers
		if len(list) == 0 {
			list = cfg.Session.Providers
		}
		provs = provs[:0]
		for i := range list {
			if p := providerOrCPU(&list[i]); !slices.Contains(provs, p) {
				provs = append(provs, p)
			}
		}
	default:
		avail, err := ortlib.AvailableProviders()
		if err != nil {
			return nil, err
		}
		for _, name := range avail {
			p, err := ParseProvider(name)
			if err != nil || p.append == nil {
				continue
			}
			// A build lists providers whose libraries or devices this
			// machine may lack: try each once, sweep those that load.
			if err := probeProvider(p); err != nil {
				t.skipped = append(t.skipped, fmt.Sprintf("%s (listed by this ONNX Runtime build, but %v)", p.Name, err))
				continue
			}
			provs = append(provs, &p)
		}
	}
	var out []tuneConfig
	for _, p := range provs {
		for _, o := range opts {
			for _, n := range threads {
				for _, m := range modes {
					out = append(out, tuneConfig{opt: o, mode: m, threads: n, provider: p})
				}
			}
		}
	}
	if len(out) > MaxTuneConfigs {
		return nil, invalid("{Tune}: %d configurations (%d optimization levels × %d thread counts × %d execution modes × %d providers); a sweep takes at most %d: narrow it with {Tune.OptLevels}, {Tune.Threads} or {Tune.ExecutionModes}",
			len(out), len(opts), len(threads), len(modes), len(provs), MaxTuneConfigs)
	}
	return out, nil
}

// providerOrCPU returns nil for the CPU provider (always present).
func providerOrCPU(p *Provider) *Provider {
	if p.append == nil {
		return nil
	}
	return p
}

// apply returns cfg with the configuration's options.
func (c tuneConfig) apply(cfg Config) Config {
	cfg.IntraOpThreads = c.threads
	s := cfg.Session
	s.OptLevel, s.ExecutionMode = c.opt, c.mode
	s.Providers = nil
	if c.provider != nil {
		s.Providers = []Provider{*c.provider}
	}
	cfg.Session = s
	return cfg
}

// tuneEntry is one configuration of a sweep in progress.
type tuneEntry struct {
	cfg  tuneConfig
	row  report.TuneRow
	sess *instrument.DynamicSession
	wl   *workload
	lat  []float64
	wall time.Duration
	errs int
}

// tune runs the sweep: a session per configuration, its first run and
// warm-up, then the measured runs in rounds, each round visiting every
// configuration in a shuffled order.
func (b *bench) tune(ctx context.Context) (*report.Report, error) {
	cfg, rep := b.cfg, b.rep
	t := cfg.Tune
	confs, err := t.configs(cfg)
	if err != nil {
		return nil, err
	}
	rounds := t.Rounds
	if rounds <= 0 {
		rounds = DefaultTuneRounds
	}
	rounds = min(rounds, cfg.Runs)
	// The input tensors are only read by the runs; every configuration
	// has its own session, options and output tensors.
	inputs, err := b.synthesize(cfg.Shapes)
	if err != nil {
		return nil, err
	}
	defer inputs.Destroy()
	entries := make([]*tuneEntry, len(confs))
	// Deferred in this order, the sessions still held by entries close
	// before closeSessions destroys the options they were created with.
	defer b.closeSessions()
	defer func() {
		for _, e := range entries {
			if e != nil && e.sess != nil {
				e.wl.destroyOutputs()
				_ = e.sess.Close(context.Background())
			}
		}
	}()
	for _, sk := range t.skipped {
		rep.Notes = append(rep.Notes, "tuning sweep: execution provider "+sk+": not swept")
	}
	cfg.progress("tuning sweep: %s, %d runs each in %d rounds", report.Plural(len(confs), "configuration"), cfg.Runs, rounds)
	for i, c := range confs {
		e := &tuneEntry{cfg: c, row: tuneRow(c)}
		entries[i] = e
		if err := b.tuneOpen(ctx, e, inputs); err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			e.row.Error = err.Error()
			cfg.progress("  %s: %v", e.row.Label, err)
		}
	}
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x7475_6e65))
	order := make([]*tuneEntry, 0, len(entries))
	for _, e := range entries {
		if e.sess != nil {
			order = append(order, e)
		}
	}
	bar := cfg.startBar("tuning sweep", len(order)*cfg.Runs, 0)
	defer bar.Done()
	for r := 0; r < rounds; r++ {
		n := cfg.Runs/rounds + boolInt(r < cfg.Runs%rounds)
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		for _, e := range order {
			if e.row.Error != "" {
				continue
			}
			if cfg.tuneHook != nil {
				cfg.tuneHook(r, e.row.Label)
			}
			bar.Label("tuning sweep: " + e.row.Label)
			observe := func(r record) { b.met.request(r); bar.Add(1) }
			res, err := runPhase(ctx, phase{scenario: SingleStream, workers: 1, requests: n, observe: observe},
				func(ctx context.Context, _, seq int) error {
					err := e.wl.run(ctx)
					if cfg.runHook != nil {
						cfg.runHook(seq)
					}
					return err
				})
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			if err != nil {
				e.row.Error = err.Error()
				continue
			}
			e.lat = append(e.lat, res.latencies()...)
			e.errs += res.errors()
			e.wall += res.wall
		}
		cfg.progress("  round %d of %d done", r+1, rounds)
	}
	for _, e := range entries {
		e.row.Latency = stats.Summarize(e.lat)
		e.row.P50 = stats.Interval{Percentile: 50, Confidence: stats.DefaultConfidence, MinSamples: stats.MinSamples(0.5, stats.DefaultConfidence)}
		if len(e.lat) > 0 {
			e.row.P50 = stats.QuantileInterval(sortedCopy(e.lat), 0.5, stats.DefaultConfidence)
			e.row.P50.Percentile = 50
		}
		e.row.Errors = e.errs
		if w := e.wall.Seconds(); w > 0 {
			e.row.RunsPerS = float64(len(e.lat)) / w
		}
		e.row.Command = tuneCommand(cfg, e.cfg, rep.Model.Inputs)
	}
	tr := rankTune(entries)
	tr.Rounds, tr.RunsPerConfig = rounds, cfg.Runs
	tr.IntervalMethod = stats.IntervalMethod
	rep.Tune = tr
	rep.Config.Runs = cfg.Runs
	if tr.Best < 0 {
		var errs []error
		for _, r := range tr.Rows {
			if r.Error == "" {
				rep.Notes = append(rep.Notes, "tuning sweep: no configuration had enough successful runs to rank")
				return rep, nil
			}
			errs = append(errs, fmt.Errorf("%s: %s", r.Label, r.Error))
		}
		return nil, invalid("{Tune}: no configuration of model %q could be measured: %w", cfg.ModelPath, errors.Join(errs...))
	}
	best := bestEntry(entries, tr.Rows[tr.Best].Label)
	tr.Command = tr.Rows[tr.Best].Command
	if t.Duel > 0 {
		if tr.Duel, err = b.tuneDuel(ctx, best); err != nil {
			return nil, err
		}
	}
	// The report's own sections describe the best configuration.
	bc := best.cfg.apply(*cfg)
	rep.Config.IntraOpThreads = bc.IntraOpThreads
	rep.Config.Session = bc.Session.record()
	rep.Runtime.Providers = bc.Session.runtimeProviders()
	rep.Session.CreationS, rep.Session.FirstRunS = best.row.CreationS, best.row.FirstRunS
	rep.Latency = report.Latency{Summary: best.row.Latency, Samples: best.lat, Errors: best.errs}
	if w := best.wall.Seconds(); w > 0 {
		rep.Throughput = report.Throughput{RunsPerS: best.row.RunsPerS, ItemsPerS: best.row.RunsPerS * float64(cfg.Batch), WallS: w}
	}
	rep.Notes = append(rep.Notes, fmt.Sprintf("tuning sweep: latency, throughput, cold start and operators are those of the best configuration (%s); the sweep table compares all %d. Chosen as the fastest of %d, its p50 is likely biased low: confirm it with a run of its own (the reproducing command)",
		best.row.Label, len(entries), len(entries)))
	// The best session moves to the bench, which profiles and closes it.
	b.sessions = append(b.sessions, best.sess)
	best.sess = nil
	defer best.wl.destroyOutputs()
	for _, e := range entries {
		if e.sess != nil {
			e.wl.destroyOutputs()
			if err := e.sess.Close(context.Background()); err != nil {
				rep.Notes = append(rep.Notes, fmt.Sprintf("tuning sweep: close the session of %s: %v", e.row.Label, err))
			}
			e.sess = nil
		}
	}
	if err := b.profilePass(ctx, best.wl.run, cfg.ProfileRuns); err != nil {
		return nil, err
	}
	return rep, b.closeSessions()
}

// tuneOpen creates e's session (timed), runs its first run (timed) and
// its warm-up.
func (b *bench) tuneOpen(ctx context.Context, e *tuneEntry, inputs *Inputs) error {
	cfg := b.cfg
	c := e.cfg.apply(*cfg)
	if err := c.Session.checkAvailable(); err != nil {
		return err
	}
	opts, err := sessionOptions(c)
	if err != nil {
		return err
	}
	// With operator profiling on, the options must outlive the session.
	b.closers = append(b.closers, func() error { return opts.Destroy() })
	t0 := time.Now()
	sess, err := instrument.NewDynamicSession(ctx, cfg.ModelPath, inputs.Names, b.outNames, opts, b.iopts...)
	if err != nil {
		return err
	}
	e.row.CreationS = time.Since(t0).Seconds()
	e.sess = sess
	e.wl = &workload{sess: sess, inputs: inputs.Values, outputs: make([]ort.Value, len(b.outNames))}
	t0 = time.Now()
	if err := e.wl.run(ctx); err != nil {
		return fmt.Errorf("first run: %w", err)
	}
	e.row.FirstRunS = time.Since(t0).Seconds()
	cfg.progress("  %s: session %s, first run %s", e.row.Label, units.Duration(e.row.CreationS), units.Duration(e.row.FirstRunS))
	// --warmup N, or --warmup auto until steady (a labelled warm-up leaves
	// the report's warm-up section alone).
	_, err = b.warmup(ctx, e.wl.run, e.row.FirstRunS, " "+e.row.Label)
	return err
}

func tuneRow(c tuneConfig) report.TuneRow {
	r := report.TuneRow{Label: c.label(), OptLevel: c.opt, IntraOpThreads: c.threads, ExecutionMode: c.mode}
	if c.provider != nil {
		r.Providers = []string{c.provider.Name}
	}
	return r
}

// rankTune orders the rows fastest p50 first (failed and unbounded rows
// last) and names the best, the runner-up and the rows tied with the best.
func rankTune(entries []*tuneEntry) *report.Tune {
	rows := make([]report.TuneRow, len(entries))
	for i, e := range entries {
		rows[i] = e.row
	}
	sort.SliceStable(rows, func(i, j int) bool {
		mi, mj := rows[i].Measured(), rows[j].Measured()
		if mi != mj {
			return mi
		}
		return rows[i].P50.Estimate < rows[j].P50.Estimate
	})
	t := &report.Tune{Rows: rows, Rule: tuneRule, Best: -1, RunnerUp: -1}
	if len(rows) == 0 || !rows[0].Measured() {
		return t
	}
	t.Best = 0
	if len(rows) > 1 && rows[1].Measured() {
		t.RunnerUp = 1
	}
	bu := *rows[0].P50.Upper
	for i := 1; i < len(rows) && rows[i].Measured(); i++ {
		if *rows[i].P50.Lower <= bu {
			t.TiedWith = append(t.TiedWith, i)
		}
	}
	t.Distinguishable = t.RunnerUp >= 0 && !slices.Contains(t.TiedWith, t.RunnerUp)
	return t
}

func bestEntry(entries []*tuneEntry, label string) *tuneEntry {
	for _, e := range entries {
		if e.row.Label == label {
			return e
		}
	}
	return nil
}

func sortedCopy(xs []float64) []float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// tuneDuel runs the sweep's final duel: the default configuration (the
// Config as given, on a session of its own, side A) against the best (its
// warm session, side B), interleaved A/B for at most Tune.Duel. Nil when
// the best is the default configuration.
func (b *bench) tuneDuel(ctx context.Context, best *tuneEntry) (*report.AB, error) {
	cfg := b.cfg
	def := *cfg
	def.Tune, def.ProfileRuns = nil, 0
	bc := best.cfg.apply(*cfg)
	if def.IntraOpThreads == bc.IntraOpThreads && orDefault(def.Session.OptLevel, "all") == bc.Session.OptLevel &&
		orDefault(def.Session.ExecutionMode, "sequential") == bc.Session.ExecutionMode && len(bc.Session.Providers) == 0 {
		return nil, nil
	}
	cfg.progress("tuning sweep: final duel, the best (%s) against the default configuration, at most %s", best.row.Label, units.Duration(cfg.Tune.Duel.Seconds()))
	a := &abSide{label: "A"}
	defer a.close()
	if err := a.open(ctx, &def); err != nil {
		return nil, fmt.Errorf("final duel: the default configuration: %w", err)
	}
	slowest := max(a.b.warmMed, best.row.Latency.P50, 1e-6)
	plan := abPlan{
		blockRuns: min(max(int(math.Round(DefaultABBlockTime.Seconds()/slowest)), MinABBlockRuns), MaxABBlockRuns),
		maxTime:   cfg.Tune.Duel, looks: DefaultABLooks, threshold: DefaultABThreshold,
		conf: 1 - (1-stats.DefaultConfidence)/DefaultABLooks, resamples: DefaultABResamples, seed: cfg.Seed,
		progress: cfg.progress, recalibrate: true,
	}
	res, err := abLoop(ctx, [2]abRunner{perRun(a.wl.run, nil), perRun(best.wl.run, nil)}, plan)
	if err != nil {
		return nil, fmt.Errorf("final duel: %w", err)
	}
	res.Confidence = stats.DefaultConfidence
	res.A = a.report(def, nil, res, "A")
	res.A.Description = "default configuration: " + res.A.Description
	res.B = report.ABSide{Label: "B", Description: "best of the sweep: " + describeSide(bc), ModelPath: cfg.ModelPath,
		Runs: len(res.sideLatencies[1]), FirstRunS: best.row.FirstRunS, Errors: res.sideErrors[1]}
	res.Headline = abHeadline(res)
	return res.AB, nil
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
