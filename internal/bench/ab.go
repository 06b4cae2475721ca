package bench

import (
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/ortel-dev/ortel/instrument"
	"github.com/ortel-dev/ortel/instrument/ortlib"
	"github.com/ortel-dev/ortel/internal/interference"
	"github.com/ortel-dev/ortel/internal/profreport"
	"github.com/ortel-dev/ortel/internal/report"
	"github.com/ortel-dev/ortel/internal/stats"
	"github.com/ortel-dev/ortel/internal/units"
)

// AB asks for an interleaved A/B comparison (bench --ab): two models, or
// one model under two configurations, each on a session of its own with
// its own warm-up, measured in one process in blocks of runs; every pair
// of blocks (one A, one B) runs in a random order. The result is the
// ratio B/A of p50, p90, p99, throughput and CPU per run with intervals
// from the paired design (see ABMethod), and a verdict against ±Threshold.
//
// Both sides run in this process and share its ONNX Runtime library,
// unless Children is set: then each side runs in a child process of its
// own (ServeABSide), which loads the side's library, so two ONNX Runtime
// releases can be compared. The design is the same either way: the child
// times its runs itself and returns whole blocks.
type AB struct {
	// A and B are the two sides' configurations: model, inputs, session
	// options, threads, warm-up. Their measurement extent (Runs,
	// Duration, Auto), scenario, profiling pass, tuning and generation
	// are not used; a side asking for those is refused by Validate.
	A, B Config
	// ArgsA and ArgsB are the options that made each side, as given, for
	// the report.
	ArgsA, ArgsB []string
	// Threshold is the relative change that counts (default
	// DefaultABThreshold, 2%).
	Threshold float64
	// MaxTime caps the measurement (default DefaultABMaxTime); looks happen
	// at Looks equal fractions of it (default DefaultABLooks).
	MaxTime time.Duration
	Looks   int
	// BlockRuns is the runs in each block; 0 chooses it from the slower
	// side's warm-up median (about DefaultABBlockTime a block).
	BlockRuns int
	// Confidence is the overall confidence (default 0.95).
	Confidence float64
	// Resamples is the bootstrap resamples per look (default
	// DefaultABResamples).
	Resamples int
	Seed      uint64
	// Judge, when set, judges each block by what the machine did during
	// it; nil starts the interference monitor (package interference) for
	// the measurement, unless side A's Config says NoInterference (A's
	// Interference configures it). Disturbed blocks are flagged in the report, not
	// left out (see abFlagPolicy).
	Judge BlockJudge
	// Progress, when set, receives one line per phase and look.
	Progress io.Writer
	// Children, when set, runs side A in a child process started as
	// Children[0] says and side B as Children[1]: both, so that neither
	// keeps this process's warm caches. A Config's providers and
	// telemetry are then the child's own (it exports none).
	Children *[2]ABChild
}

// BlockJudge judges a measured block by what the machine did between
// start and end: disturbed or not, and why.
type BlockJudge func(start, end time.Time) (disturbed bool, reasons []string)

// Defaults and bounds of an A/B comparison.
const (
	DefaultABMaxTime   = 60 * time.Second
	DefaultABBlockTime = 250 * time.Millisecond
	MinABBlockRuns     = 5
	MaxABBlockRuns     = 200
	MaxABLooks         = 20
)

func (ab *AB) defaults() {
	if ab.Threshold == 0 {
		ab.Threshold = DefaultABThreshold
	}
	if ab.MaxTime == 0 {
		ab.MaxTime = DefaultABMaxTime
	}
	if ab.Looks == 0 {
		ab.Looks = DefaultABLooks
	}
	if ab.Confidence == 0 {
		ab.Confidence = stats.DefaultConfidence
	}
	if ab.Resamples == 0 {
		ab.Resamples = DefaultABResamples
	}
	for _, c := range []*Config{&ab.A, &ab.B} {
		c.Auto, c.Runs, c.Duration, c.ProfileRuns = nil, 1, 0, 0
		c.defaults()
	}
}

// Validate checks the comparison's own settings and each side's Config.
func (ab AB) Validate() error {
	switch {
	case ab.Threshold < 0 || ab.Threshold >= 1:
		return invalid("{AB.Threshold} must be between 0%% and 100%% (got %g%%)", 100*ab.Threshold)
	case ab.MaxTime < 0:
		return invalid("{AB.MaxTime} must not be negative (got %s)", ab.MaxTime)
	case ab.Looks < 0 || ab.Looks > MaxABLooks:
		return invalid("{AB.Looks} must be 1 to %d (got %d)", MaxABLooks, ab.Looks)
	case ab.BlockRuns < 0 || ab.BlockRuns > MaxABBlockRuns:
		return invalid("{AB.BlockRuns} must be 1 to %d (got %d)", MaxABBlockRuns, ab.BlockRuns)
	case ab.Confidence < 0 || ab.Confidence >= 1:
		return invalid("{AB.Confidence} must be between 0 and 1 (got %g)", ab.Confidence)
	}
	for _, s := range []struct {
		name string
		c    Config
	}{{"A", ab.A}, {"B", ab.B}} {
		c := s.c
		what := ""
		switch {
		case c.ModelPath == "":
			return invalid("{AB}: side %s names no model", s.name)
		case c.Tune != nil:
			what = "a tuning sweep (--tune)"
		case c.Generate > 0:
			what = "generation (--generate)"
		case len(c.Batches) > 1:
			what = "a batch sweep"
		case c.Scenario != "" && c.Scenario != SingleStream:
			what = "the " + string(c.Scenario) + " scenario"
		case c.SLA != nil:
			what = "an SLA (--sla)"
		case c.Concurrency > 1:
			what = "several workers (--concurrency)"
		case c.Session.SaveOptimized != "":
			what = "saving the optimized model (--save-optimized)"
		}
		if what != "" {
			return invalid("{AB}: side %s asks for %s, which an A/B comparison does not measure: it compares single-stream latency", s.name, what)
		}
	}
	return nil
}

// abSide is one side in progress: in this process its bench (session,
// inputs) and workload, or a child process (child); either way the
// report it starts from, its warm-up median, its library and its runner.
type abSide struct {
	label  string
	b      *bench
	inputs *Inputs
	wl     *workload
	child  *abChild

	base       *report.Report // model, runtime, warm-up, session
	warmMed    float64        // seconds
	ortVersion string
	library    string
	run        abRunner
}

func (s *abSide) close() error {
	if s.child != nil {
		return s.child.close()
	}
	if s.wl != nil {
		s.wl.destroyOutputs()
	}
	var err error
	if s.b != nil {
		err = s.b.closeSessions()
	}
	if s.inputs != nil {
		s.inputs.Destroy()
	}
	return err
}

// RunAB runs the comparison and returns its report: the A/B section, and
// side A's model and latency for the report's other sections. ONNX Runtime
// must be initialized, unless both sides run in child processes
// (AB.Children).
func RunAB(ctx context.Context, ab AB) (*report.Report, error) {
	ab.defaults()
	if err := ab.Validate(); err != nil {
		return nil, err
	}
	for _, c := range []Config{ab.A, ab.B} {
		if err := c.Validate(); err != nil {
			return nil, err
		}
	}
	a, b := &abSide{label: "A"}, &abSide{label: "B"}
	defer a.close()
	defer b.close()
	progress := func(format string, args ...any) {
		if ab.Progress != nil {
			fmt.Fprintf(ab.Progress, format+"\n", args...)
		}
	}
	if err := ab.openSides(ctx, [2]*abSide{a, b}, progress); err != nil {
		return nil, err
	}
	blockRuns := ab.BlockRuns
	if blockRuns == 0 {
		slowest := max(a.warmMed, b.warmMed, 1e-6)
		blockRuns = min(max(int(math.Round(DefaultABBlockTime.Seconds()/slowest)), MinABBlockRuns), MaxABBlockRuns)
	}
	for _, s := range []*abSide{a, b} {
		if s.child != nil && s.child.timeout == 0 { // a minute plus 20 times the block's expected time
			s.child.timeout = time.Minute + time.Duration(20*float64(blockRuns)*max(a.warmMed, b.warmMed)*float64(time.Second))
		}
	}
	plan := abPlan{
		blockRuns: blockRuns, maxTime: ab.MaxTime, looks: ab.Looks, threshold: ab.Threshold,
		conf: 1 - (1-ab.Confidence)/float64(ab.Looks), resamples: ab.Resamples, seed: ab.Seed,
		judge: ab.Judge, progress: progress, recalibrate: ab.BlockRuns == 0,
	}
	progress("A/B: blocks of %d runs in shuffled pairs, looks at every %s of at most %s, threshold ±%g%%",
		blockRuns, units.Duration((ab.MaxTime / time.Duration(ab.Looks)).Seconds()), units.Duration(ab.MaxTime.Seconds()), 100*ab.Threshold)
	mon := ab.startMonitor(ctx, &plan, [2]*abSide{a, b}, progress)
	res, err := abLoop(ctx, [2]abRunner{a.run, b.run}, plan)
	if mon != nil {
		v := mon.Stop()
		if res != nil {
			res.Measurement = &v
		}
	}
	if err != nil {
		return nil, err
	}
	return ab.finish(res, a, b), nil
}

// openSides opens both sides: in this process, or each in a child process
// of its own when ab.Children says so.
func (ab *AB) openSides(ctx context.Context, sides [2]*abSide, progress func(string, ...any)) error {
	for i, cfg := range []*Config{&ab.A, &ab.B} {
		s := sides[i]
		if ab.Children == nil {
			progress("A/B side %s: %s", s.label, describeSide(*cfg))
			if err := s.open(ctx, cfg); err != nil {
				return fmt.Errorf("A/B side %s: %w", s.label, err)
			}
			continue
		}
		spec := ab.Children[i]
		progress("A/B side %s: %s, ONNX Runtime library %s, in a child process", s.label, describeSide(*cfg), spec.Library)
		child, ready, err := startABChild(ctx, s.label, spec)
		if err != nil {
			return err
		}
		s.child, s.base, s.warmMed = child, ready.Report, ready.WarmMedianS
		s.ortVersion, s.library = ready.ORTVersion, ready.LibraryPath
		s.run = child.runBlock
	}
	return nil
}

// startMonitor starts the interference monitor for the measurement (nil
// when the plan has a judge, side A asks for none, or it cannot start);
// the child processes' threads count as the bench's own.
func (ab *AB) startMonitor(ctx context.Context, plan *abPlan, sides [2]*abSide, progress func(string, ...any)) *interference.Monitor {
	if plan.judge != nil || ab.A.NoInterference {
		return nil
	}
	icfg := interference.Config{}
	if ab.A.Interference != nil {
		icfg = *ab.A.Interference
	}
	for _, s := range sides {
		if s.child != nil {
			icfg.Also = append(icfg.Also, s.child.pid())
		}
	}
	mon, err := interference.Start(ctx, icfg)
	if err != nil {
		progress("A/B: interference monitor unavailable: %v", err)
		return nil
	}
	plan.judge = monitorJudge(mon)
	return mon
}

// finish is the report of a measured comparison.
func (ab *AB) finish(res *abResult, a, b *abSide) *report.Report {
	res.Confidence = ab.Confidence
	res.A = a.report(ab.A, ab.ArgsA, res, "A")
	res.B = b.report(ab.B, ab.ArgsB, res, "B")
	res.Headline = abHeadline(res)
	if ab.Children != nil {
		res.Notes = append(res.Notes, "each side ran in a child process of its own; a process's memory layout can shift a side by a couple of percent, "+
			"so believe a difference that small when a second run agrees")
	}
	rep := a.base
	rep.AB = res.AB
	if lat := res.sideLatencies[0]; len(lat) > 0 {
		rep.Latency = report.Latency{Summary: stats.Summarize(lat), Errors: res.A.Errors}
		rep.Throughput = report.Throughput{RunsPerS: res.sideRate[0], ItemsPerS: res.sideRate[0] * float64(ab.A.Batch), WallS: res.WallS}
	}
	rep.Config.Runs = res.A.Runs
	if res.Measurement != nil { // the whole comparison's
		rep.Measurement, rep.Verdict = res.Measurement, res.Measurement.Line()
	}
	rep.Runtime.ORTVersion, rep.Runtime.LibraryPath = a.ortVersion, a.library
	if !ortlib.SameFile(a.library, b.library) {
		rep.Runtime.Holds = fmt.Sprintf("side A's library; side B ran ONNX Runtime %s from %s (each side's is in the A/B section)", b.ortVersion, b.library)
	}
	rep.Notes = append(rep.Notes, "A/B comparison: the latency and throughput sections are side A's runs in the analysed blocks; the A/B section compares both sides (no operator-profiling pass)")
	if ab.Children != nil {
		rep.Notes = append(rep.Notes, "A/B comparison in child processes: each side ran in a process of its own with its ONNX Runtime library; their telemetry is not exported. "+
			"Each side is one process, and a process's own memory layout can shift its latency by a couple of percent that the interval does not see "+
			"(identical sides in two child processes measured from -1.5% to +2.3% at p50 on a shared 2-core VM): believe a difference that small only when a second run, with new processes, agrees")
	}
	return rep
}

// open creates the side's bench, inputs and session, runs its first run
// and its warm-up.
func (s *abSide) open(ctx context.Context, cfg *Config) error {
	m, err := describeModel(cfg.ModelPath)
	if err != nil {
		return err
	}
	if err := cfg.Session.checkAvailable(); err != nil {
		return err
	}
	rep := &report.Report{
		SchemaVersion: report.SchemaVersion, CreatedAt: time.Now().UTC(), Host: hostInfo(),
		Runtime: report.Runtime{ORTVersion: ort.GetVersion(), Providers: cfg.Session.runtimeProviders()},
		Config: report.Config{
			Warmup: cfg.Warmup, IntraOpThreads: cfg.IntraOpThreads, InterOpThreads: cfg.InterOpThreads,
			Batch: cfg.Batch, Seed: cfg.Seed, Session: cfg.Session.record(),
		},
		Model: m.report,
	}
	if cfg.ModelName != "" {
		rep.Model.Name = cfg.ModelName
	}
	s.b = &bench{cfg: cfg, rep: rep, model: m, ops: profreport.NewCollector()}
	s.b.met = newMetrics(cfg.MeterProvider, rep.Model.Name, SingleStream)
	tp := cfg.TracerProvider
	if cfg.ProfiledRunSpansOnly && tp != nil {
		tp = profiledOnly{next: tp, runSpan: "run " + rep.Model.Name}
	}
	s.b.iopts = []instrument.Option{
		instrument.WithModelName(rep.Model.Name),
		instrument.WithTracerProvider(tp),
		instrument.WithMeterProvider(cfg.MeterProvider),
	}
	if s.inputs, err = s.b.synthesize(cfg.Shapes); err != nil {
		return err
	}
	if err := s.b.openSessions(ctx, s.inputs.Names); err != nil {
		return err
	}
	s.wl = &workload{sess: s.b.sessions[0], inputs: s.inputs.Values, outputs: make([]ort.Value, len(s.b.outNames))}
	if err := s.b.coldAndWarm(ctx, []*workload{s.wl}); err != nil {
		return err
	}
	rep.Runtime.LibraryPath = ortlib.Loaded().Path
	s.base, s.warmMed, s.ortVersion, s.library = rep, s.b.warmMed, rep.Runtime.ORTVersion, rep.Runtime.LibraryPath
	s.run = perRun(s.wl.run, nil)
	return nil
}

// report is the side's account in the A/B section.
func (s *abSide) report(cfg Config, args []string, res *abResult, label string) report.ABSide {
	i := 0
	if label == "B" {
		i = 1
	}
	desc := describeSide(cfg)
	if s.ortVersion != "" {
		desc += ", ONNX Runtime " + s.ortVersion
	}
	return report.ABSide{
		Label: label, Args: args, Description: desc, ModelPath: cfg.ModelPath,
		ORTVersion: s.ortVersion, LibraryPath: s.library,
		Runs: len(res.sideLatencies[i]), WarmupRuns: s.base.Warmup.Runs, FirstRunS: s.base.Session.FirstRunS,
		Errors: res.sideErrors[i],
	}
}

// describeSide names a side's configuration in plain words.
func describeSide(c Config) string {
	parts := []string{instrument.ModelName(c.ModelPath)}
	if c.ModelName != "" {
		parts[0] = c.ModelName
	}
	opt := c.Session.OptLevel
	if opt == "" {
		opt = "all (default)"
	}
	parts = append(parts, "opt level "+opt)
	threads := "ORT default"
	if c.IntraOpThreads > 0 {
		threads = strconv.Itoa(c.IntraOpThreads)
	}
	parts = append(parts, "intra-op threads "+threads)
	if c.InterOpThreads > 0 {
		parts = append(parts, fmt.Sprintf("inter-op threads %d", c.InterOpThreads))
	}
	if c.Session.ExecutionMode != "" {
		parts = append(parts, c.Session.ExecutionMode)
	}
	for _, p := range c.Session.Providers {
		parts = append(parts, p.Name)
	}
	keys := make([]string, 0, len(c.Session.Config))
	for k := range c.Session.Config {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		parts = append(parts, k+"="+c.Session.Config[k])
	}
	return strings.Join(parts, ", ")
}

// abPlan is how abLoop measures and when it looks.
type abPlan struct {
	blockRuns int
	maxTime   time.Duration
	looks     int
	threshold float64
	conf      float64 // per look
	resamples int
	seed      uint64
	judge     BlockJudge
	progress  func(format string, args ...any)
	// recalibrate sizes the blocks again after the first pair when they
	// took more than twice DefaultABBlockTime (blockRuns was chosen from
	// the warm-up median).
	recalibrate bool
	// now is the clock (default time.Now; tests give a fake one that the
	// runners advance).
	now func() time.Time
}

// abResult is the A/B section with what RunAB needs besides.
type abResult struct {
	*report.AB
	sideLatencies [2][]float64 // analysed runs per side
	sideRate      [2]float64   // runs per second over the analysed blocks
	sideErrors    [2]int
}

// cpuSeconds is the process's user and system CPU time so far, or -1.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return -1
	}
	tv := func(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }
	return tv(ru.Utime) + tv(ru.Stime)
}

// abRunner runs one block of n runs of a side and returns the block, its
// failed runs and when it started: in this process (perRun) or in a
// child process (abChild.runBlock). Every statistic is computed from
// what it returns, the same way for both.
type abRunner func(ctx context.Context, n int) (abBlock, int, time.Time, error)

// perRun is the runner of a side in this process: blocks of run, timed
// by now (nil: time.Now).
func perRun(run func(context.Context) error, now func() time.Time) abRunner {
	if now == nil {
		now = time.Now
	}
	return func(ctx context.Context, n int) (abBlock, int, time.Time, error) {
		blk, errs, start, _, err := abRunBlock(ctx, run, n, now)
		return blk, errs, start, err
	}
}

// abRunBlock runs one block of n runs of run.
func abRunBlock(ctx context.Context, run func(context.Context) error, n int, now func() time.Time) (abBlock, int, time.Time, time.Time, error) {
	blk := abBlock{lat: make([]float64, 0, n)}
	errs := 0
	cpu0 := cpuSeconds()
	start := now()
	for k := 0; k < n; k++ {
		t := now()
		err := run(ctx)
		d := now().Sub(t).Seconds()
		if ctx.Err() != nil {
			return blk, errs, start, now(), ctx.Err()
		}
		if err != nil {
			errs++
			continue
		}
		blk.lat = append(blk.lat, d)
	}
	end := now()
	blk.wall = end.Sub(start).Seconds()
	blk.cpu = -1
	if cpu1 := cpuSeconds(); cpu0 >= 0 && cpu1 >= 0 {
		blk.cpu = cpu1 - cpu0
	}
	blk.runs = len(blk.lat)
	slices.Sort(blk.lat)
	if blk.runs == 0 {
		return blk, errs, start, end, fmt.Errorf("every run of a block failed")
	}
	return blk, errs, start, end, nil
}

// abLoop measures pairs of blocks of the two runners, A (run[0]) and B
// (run[1]), in a random order per pair, looks at plan.looks equal
// fractions of plan.maxTime, and stops at the first look where every
// headline statistic is decided, or at the cap.
func abLoop(ctx context.Context, run [2]abRunner, plan abPlan) (*abResult, error) {
	if plan.progress == nil {
		plan.progress = func(string, ...any) {}
	}
	if plan.now == nil {
		plan.now = time.Now
	}
	rng := rand.New(rand.NewPCG(plan.seed, 0x6162))
	boot := rand.New(rand.NewPCG(plan.seed, 0x626f6f74))
	res := &abResult{AB: &report.AB{
		Threshold: plan.threshold, LookConfidence: plan.conf, Looks: plan.looks, MaxS: plan.maxTime.Seconds(),
		BlockRuns: plan.blockRuns, Method: ABMethod, Interference: "not judged: no interference monitor in this build",
		LoadAvgStart: loadAvg(),
	}}
	if plan.judge != nil {
		res.Interference = abFlagPolicy
	}
	var pairs []abPair
	origin := plan.now()
	var analysing time.Duration
	look := 1
	for pair := 0; ; pair++ {
		order := [2]int{0, 1}
		if rng.IntN(2) == 1 {
			order = [2]int{1, 0}
		}
		var p abPair
		for pos, side := range order {
			blk, errs, start, err := run[side](ctx, plan.blockRuns)
			if err != nil {
				return nil, fmt.Errorf("A/B side %s, block %d: %w", "AB"[side:side+1], pair+1, err)
			}
			rb := report.ABBlock{
				Pair: pair + 1, Side: "AB"[side : side+1], Order: pos, StartS: start.Sub(origin).Seconds(),
				WallS: blk.wall, Runs: blk.runs, Errors: errs, P50S: stats.QuantileSorted(blk.lat, 0.5), CPUS: max(blk.cpu, 0),
			}
			res.Blocks = append(res.Blocks, rb)
			res.sideErrors[side] += errs
			if side == 0 {
				p.a = blk
			} else {
				p.b = blk
			}
		}
		pairs = append(pairs, p)
		if pair == 0 && plan.recalibrate {
			// The warm-up median chose the block size; a machine busier
			// now than then makes blocks far longer than planned, and
			// too few pairs: size the blocks again from this first pair.
			if slow := max(p.a.wall, p.b.wall) / float64(plan.blockRuns); slow > 0 && max(p.a.wall, p.b.wall) > 2*DefaultABBlockTime.Seconds() {
				plan.blockRuns = min(max(int(math.Round(DefaultABBlockTime.Seconds()/slow)), MinABBlockRuns), plan.blockRuns)
				res.BlockRuns = plan.blockRuns
			}
		}
		// The schedule runs on measuring time: the looks' own analysis
		// does not eat the cap.
		elapsed := plan.now().Sub(origin) - analysing
		due := time.Duration(float64(plan.maxTime) * float64(look) / float64(plan.looks))
		if elapsed < due {
			continue
		}
		// A look: at the cap (the last), or earlier when settled.
		t0 := time.Now()
		res.Stats = abAnalyze(pairs, plan.conf, plan.threshold, plan.resamples, boot)
		analysing += time.Since(t0)
		res.LooksTaken = look
		settled := len(pairs) >= MinABPairs && abSettled(res.Stats)
		plan.progress("A/B look %d of %d at %s: %d pairs, p50 B/A %s", look, plan.looks, units.Duration(elapsed.Seconds()), len(pairs), statText(res.Stats, "p50"))
		if settled || look >= plan.looks {
			res.StoppedBy = "cap"
			if settled {
				res.StoppedBy = "settled"
			}
			res.WallS = plan.now().Sub(origin).Seconds()
			break
		}
		// Looks whose time passed during a long block are not taken twice.
		for look < plan.looks && time.Duration(float64(plan.maxTime)*float64(look)/float64(plan.looks)) <= elapsed {
			look++
		}
	}
	res.Pairs = len(pairs)
	res.LoadAvgEnd = loadAvg()
	judgeBlocks(res.AB, origin, plan.judge)
	res.Verdict = "undecided"
	if s, ok := res.Stat("p50"); ok && len(pairs) >= MinABPairs {
		res.Verdict = s.Verdict
	}
	var wall [2]float64
	for _, p := range pairs {
		res.sideLatencies[0] = append(res.sideLatencies[0], p.a.lat...)
		res.sideLatencies[1] = append(res.sideLatencies[1], p.b.lat...)
		wall[0] += p.a.wall
		wall[1] += p.b.wall
	}
	for i := range wall {
		if wall[i] > 0 {
			res.sideRate[i] = float64(len(res.sideLatencies[i])) / wall[i]
		}
	}
	if len(pairs) < MinABPairs {
		res.Notes = append(res.Notes, fmt.Sprintf("only %d pairs of blocks were measured (%d needed for an interval): give it a longer cap (--duration)", len(pairs), MinABPairs))
	}
	return res, nil
}

func statText(st []report.ABStat, name string) string {
	for _, s := range st {
		if s.Name == name {
			return report.ABStatText(s)
		}
	}
	return "-"
}

// abHeadline is the verdict in one sentence.
func abHeadline(r *abResult) string {
	s, ok := r.Stat("p50")
	if !ok || !s.Bounded {
		return fmt.Sprintf("Undecided: too few pairs of blocks for an interval (%d, %d needed)", r.Pairs, MinABPairs)
	}
	iv := fmt.Sprintf("[%+.1f%%, %+.1f%%]", 100*(*s.Lower-1), 100*(*s.Upper-1))
	change := 100 * math.Abs(s.Ratio-1)
	h := ""
	switch s.Verdict {
	case "faster":
		h = fmt.Sprintf("B is faster by %.1f%% at p50 %s", change, iv)
	case "slower":
		h = fmt.Sprintf("B is slower by %.1f%% at p50 %s", change, iv)
	case "no_difference":
		h = fmt.Sprintf("No difference within ±%g%% at p50: B/A %+.1f%% %s", 100*r.Threshold, 100*(s.Ratio-1), iv)
	default:
		h = fmt.Sprintf("Undecided at the %s cap: p50 B/A %+.1f%% %s is not clear of ±%g%%", units.Duration(r.MaxS), 100*(s.Ratio-1), iv, 100*r.Threshold)
	}
	if p90, ok := r.Stat("p90"); ok && p90.Bounded && p90.Verdict != s.Verdict && p90.Verdict != "undecided" {
		h += fmt.Sprintf("; at p90 %s (%s)", strings.ReplaceAll(p90.Verdict, "_", " "), report.ABStatText(p90))
	}
	if r.PairsDisturbed > 0 {
		h += fmt.Sprintf(" — measurement disturbed in %d of %d pairs", r.PairsDisturbed, r.Pairs)
	}
	return h
}

// loadAvg reads the 1, 5 and 15 minute load averages, or nil.
func loadAvg() []float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return nil
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return nil
	}
	out := make([]float64, 3)
	for i := range out {
		if out[i], err = strconv.ParseFloat(f[i], 64); err != nil {
			return nil
		}
	}
	return out
}

// monitorJudge judges blocks with an interference monitor's windows.
func monitorJudge(m *interference.Monitor) BlockJudge {
	return func(start, end time.Time) (bool, []string) {
		v := m.Window(start, end)
		var reasons []string
		for _, r := range v.Reasons {
			reasons = append(reasons, fmt.Sprintf("%s %.0f%% of the block: %s", r.Kind, 100*r.Share, r.Detail))
		}
		return v.Disturbed(), reasons
	}
}

// abFlagPolicy is what a disturbed block does to an A/B: it is flagged,
// not left out. Why: a disturbance that hits both blocks of a pair cancels
// in their ratio, and one that hits a single block adds to the spread
// between pairs, which the paired bootstrap reads, so the interval stays
// honest; leaving pairs out on a machine disturbed all the time (a shared
// VM) would leave nothing to compare. The flag says the absolute figures
// are not a quiet machine's.
const abFlagPolicy = "each block judged by the interference monitor; disturbed blocks are flagged, not left out: " +
	"a disturbance of both blocks of a pair cancels in their ratio, one of a single block widens the interval through the spread between pairs"

// judgeBlocks judges every block once the measurement is over (the
// monitor's samples then cover the last block too) and counts the pairs
// with a disturbed block.
func judgeBlocks(ab *report.AB, origin time.Time, judge BlockJudge) {
	if judge == nil {
		return
	}
	disturbed := map[int]bool{}
	for i := range ab.Blocks {
		b := &ab.Blocks[i]
		start := origin.Add(time.Duration(b.StartS * float64(time.Second)))
		b.Disturbed, b.Reasons = judge(start, start.Add(time.Duration(b.WallS*float64(time.Second))))
		if b.Disturbed {
			disturbed[b.Pair] = true
		}
	}
	ab.PairsDisturbed = len(disturbed)
}
