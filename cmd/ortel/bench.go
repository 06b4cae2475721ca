package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/ortel-dev/ortel/instrument"
	"github.com/ortel-dev/ortel/instrument/ortlib"
	"github.com/ortel-dev/ortel/instrument/views"
	"github.com/ortel-dev/ortel/internal/analysis"
	"github.com/ortel-dev/ortel/internal/atomicfile"
	"github.com/ortel-dev/ortel/internal/bench"
	"github.com/ortel-dev/ortel/internal/hardware"
	"github.com/ortel-dev/ortel/internal/models"
	"github.com/ortel-dev/ortel/internal/report"
	"github.com/ortel-dev/ortel/internal/telemetry"
)

const benchIntro = `Usage:
  ortel bench [flags] MODEL

MODEL is an .onnx file, or the name of a fetched model: {models}.

Loads the model, feeds it synthesized inputs matching its declared inputs,
measures cold start and steady-state latency and throughput with every run
traced, then profiles operators in a separate, bounded pass (latency is never
measured with ONNX Runtime's profiler on). Prints a report, writes it as JSON
to the output folder, and ships traces and metrics over OTLP — or, when no
OTLP endpoint is configured, writes them as OTLP/JSON lines files
(traces.jsonl, metrics.jsonl) that any collector can replay.
`

const benchOutro = `
Environment: the standard OTEL_* variables (OTEL_EXPORTER_OTLP_ENDPOINT,
_HEADERS, _INSECURE, _CERTIFICATE, _TIMEOUT, OTEL_SERVICE_NAME,
OTEL_RESOURCE_ATTRIBUTES, ...). ONNXRUNTIME_SHARED_LIBRARY_PATH picks the
ONNX Runtime library.

Old spellings, still accepted with a notice: --name (now --model-name),
--json (now --format json).

Examples:
  ortel bench paddleocr-det
  ortel bench --runs 500 --threads 2 --shape x=1,3,960,960 det.onnx
  ortel bench --scenario server --qps 20 --sla 50ms --shape x=1,3,320,320 paddleocr-det
  ortel bench --scenario concurrent --concurrency 4 --sessions per-worker --threads 1 model.onnx
  ortel bench --batch 1,2,4,8,16 --warmup auto model.onnx
  ortel bench --tune --runs 30 --shape x=1,3,640,640 paddleocr-det
  ortel bench paddleocr-det --ab opt-level=basic --ab opt-level=all
  ortel bench silero-vad --ab threads=1 --ab threads=2 --fail-on-regression
  ortel bench --generate 64 --prompt-tokens 128 decoder.onnx
  ortel bench --generate 32 --prompt-tokens 4 moonshine-tiny
  ortel bench --shape input=1,512 --shape state=2,1,128 --value sr=16000 silero_vad.onnx
  OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4317 ortel bench model.onnx
`

func benchCommand() *command {
	return &command{
		name:    "bench",
		summary: "profile a model: cold start, latency percentiles, throughput, top operators",
		intro:   strings.Replace(benchIntro, "{models}", strings.Join(models.Names(), ", "), 1),
		outro:   benchOutro,
		args:    catalogOrFile,
		new:     func() action { return new(benchAction) },
	}
}

// benchAction is one ortel bench: the flags that become its bench.Config,
// and its groups.
type benchAction struct {
	// cfg holds what the flags set directly; the rest is parsed from
	// the words below by config.
	cfg bench.Config

	runs, autoPct, autoWidth, warmup string
	batch, scenario, sessions, sla   string
	optLevel, execMode, providers    string
	shapes, values                   listFlag
	sessionConfig, providerOptions   listFlag
	tune                             tuneFlags
	ab                               abFlags
	profileOnDemand                  int
	runSpans                         bool
	history, format                  string
	ort                              string
	verbose                          bool
	output                           outputFlags
	export                           exportFlags
	hw                               hardwareFlags
	ui                               uiFlags
	analysis                         analysisFlags
}

func (a *benchAction) flags(fs *flagSet) {
	a.measureFlags(fs)
	a.sessionFlags(fs)
	a.tune.register(fs)
	a.ab.register(fs)
	a.loadFlags(fs)
	a.inputFlags(fs)
	a.resultFlags(fs)
	a.output.register(fs, "bench", outputQuiet)
	a.export.register(fs, exportAll|exportOff)
	a.hw.register(fs)
	a.ui.register(fs)
	a.analysis.register(fs)
}

// measureFlags: how much is measured.
func (a *benchAction) measureFlags(fs *flagSet) {
	fs.stringFlag(&a.runs, "runs", "N|auto", "",
		"measured runs, or requests of a load scenario; auto runs until the 95% confidence interval of the "+
			"--auto-percentile is within --auto-width of it, or --duration passes (default 30s then); single-stream and concurrent scenarios. "+
			"Default: auto, where one configuration is measured single-stream or concurrent; 100 for a batch sweep, --generate, --tune, --sla, server and offline")
	fs.stringFlag(&a.autoPct, "auto-percentile", "P", "p99", "percentile --runs auto watches, e.g. p99 or 95 (default p99)")
	fs.stringFlag(&a.autoWidth, "auto-width", "W", "5%",
		"widest interval --runs auto accepts, relative to the percentile, e.g. 5% or 0.05 (default 5%)")
	fs.durationFlag(&a.cfg.Duration, "duration", "D", 0, "measure for a duration instead, e.g. 30s")
	fs.stringFlag(&a.warmup, "warmup", "N|auto", "10",
		"runs after the first, not measured (default 10); auto warms up until latency is steady "+
			"(two 10-run windows whose medians differ by at most 5%)")
	fs.intFlag(&a.cfg.WarmupMax, "warmup-max", "N", bench.DefaultWarmupMax, "most warm-up runs of --warmup auto (default 200)")
}

// sessionFlags: the ONNX Runtime session's options.
func (a *benchAction) sessionFlags(fs *flagSet) {
	fs.intFlag(&a.cfg.IntraOpThreads, "threads", "N", 0, "intra-op threads (default: ONNX Runtime's choice)")
	fs.intFlag(&a.cfg.InterOpThreads, "inter-threads", "N", 0, "inter-op threads (default: ONNX Runtime's choice)")
	fs.stringFlag(&a.optLevel, "opt-level", "L", "",
		"graph optimization level: disable, basic, extended or all (default: ONNX Runtime's, all)")
	fs.stringFlag(&a.execMode, "execution-mode", "M", "",
		"sequential (default) or parallel (inter-op threads run independent branches)")
	fs.choices("opt-level", "disable", "basic", "extended", "all")
	fs.choices("execution-mode", "sequential", "parallel")
	fs.stringFlag(&a.cfg.Session.SaveOptimized, "save-optimized", "PATH", "",
		"write the model as ONNX Runtime optimized it to PATH")
	fs.valueFlag(&a.sessionConfig, "session-config", "KEY=VALUE",
		"an ONNX Runtime session configuration entry, e.g. session.intra_op.allow_spinning=0 (repeatable)")
	fs.stringFlag(&a.providers, "provider", "NAME[,NAME...]", "",
		"execution providers in order of preference: cpu, cuda, tensorrt, openvino, coreml, directml, xnnpack, qnn, "+
			"webgpu, vitisai, azure (or ONNX Runtime's names); cpu is always the last fallback. "+
			"One this ONNX Runtime build lacks fails with the list of those it has")
	fs.valueFlag(&a.providerOptions, "provider-option", "KEY=VALUE",
		"option of the first provider other than cpu, e.g. device_id=0 (repeatable)")
	fs.choices("provider", bench.ProviderNames()...)
	fs.stringFlag(&a.ort, "ort", "PATH|VERSION", "",
		"the ONNX Runtime library to load: a library file, or a release such as 1.24.3 found in the ortel cache "+
			"(ortel fetch ort --version V puts it there) or where ortel looks for the library; default: "+ortlib.EnvLibraryPath+
			", else the first library ortel finds (see ortel doctor). With --ab, sides that load different libraries, "+
			"e.g. --ab ort=1.24.3 --ab ort=1.30.0, each run in a child process of their own")
	fs.choices("ort", ortlib.CachedReleases()...)
}

// loadFlags: the load scenario and the SLA.
func (a *benchAction) loadFlags(fs *flagSet) {
	fs.stringFlag(&a.batch, "batch", "N[,N...]", "1",
		"size of a dynamic first dimension (default 1); a list, e.g. 1,2,4,8,16, sweeps the sizes: "+
			"latency, items/s and scaling efficiency per size, and the best size")
	fs.stringFlag(&a.scenario, "scenario", "S", string(bench.SingleStream),
		"load pattern of the measured phase (default single-stream):\n"+
			"  single-stream  one request at a time (closed loop)\n"+
			"  concurrent     --concurrency workers in a closed loop\n"+
			"  server         open-loop Poisson arrivals at --qps;\n"+
			"                 latency counts from the scheduled\n"+
			"                 arrival, so queueing is included\n"+
			"  offline        every request at once, maximum throughput")
	fs.intFlag(&a.cfg.Concurrency, "concurrency", "N", 0,
		"workers (default 1 for single-stream and server, the number of CPUs for concurrent and offline)")
	fs.stringFlag(&a.sessions, "sessions", "M", string(bench.SharedSession),
		"shared (default: workers share one session) or per-worker")
	fs.choices("scenario", string(bench.SingleStream), string(bench.Concurrent), string(bench.Server), string(bench.Offline))
	fs.choices("sessions", string(bench.SharedSession), string(bench.PerWorkerSessions))
	fs.float64Flag(&a.cfg.QPS, "qps", "R", 0, "server scenario: target arrival rate, requests/s")
	fs.stringFlag(&a.sla, "sla", "D[@pP]", "",
		"latency SLA, e.g. 20ms (at p99) or 20ms@p95: violations, compliance and a verdict; with --scenario server, "+
			"also searches the peak rate meeting it (--qps then starts the search)")
	fs.durationFlag(&a.cfg.TrialDuration, "trial-duration", "D", bench.DefaultTrialDuration,
		"shortest trial of the SLA search (default 2s); a trial also holds at least the requests its percentile needs "+
			"for a verdict at 99% confidence (662 for p99), and goes on past a stray stall until the verdict is known or its budget runs out")
	fs.intFlag(&a.cfg.MaxTrials, "sla-trials", "N", bench.DefaultMaxTrials,
		"most trials of the SLA search (default 20)")
	fs.durationFlag(&a.cfg.SLABudget, "sla-budget", "D", bench.DefaultSLABudget,
		"time the SLA search may take, its closed-loop capacity phase included (default 5m); trials are sized to fit it, "+
			"and when the SLA's percentile cannot be proven within it the trials are judged at a lower one, said in the report")
	fs.intFlag(&a.cfg.Generate, "generate", "N", 0,
		"LLM generation: greedy generations of N tokens on a decoder with a key/value cache (input_ids, past_key_values.*; "+
			"attention_mask, position_ids, use_cache_branch and encoder_hidden_states when it has them); reports time to "+
			"first token, time per output token, tokens/s and KV-cache bytes per step (each measured run is one generation)")
	fs.intFlag(&a.cfg.PromptTokens, "prompt-tokens", "N", bench.DefaultPromptTokens, "prompt length of --generate (default 32)")
	fs.stringFlag(&a.cfg.EncoderPath, "encoder", "MODEL", "",
		"with --generate on an encoder-decoder's decoder: run this encoder once on seeded input and feed its output as "+
			"encoder_hidden_states (default for moonshine-tiny: moonshine-tiny-encoder on 10 s of input, 415 states)")
	fs.intFlag(&a.cfg.EncoderTokens, "encoder-tokens", "N", 0,
		"instead of --encoder: feed seeded encoder_hidden_states of N positions (default: the model's declared length; Whisper: 1500)")
}

// inputFlags: the inputs and the profiling pass.
func (a *benchAction) inputFlags(fs *flagSet) {
	fs.valueFlag(&a.shapes, "shape", "NAME=DIMS", "whole shape of input NAME, e.g. x=1,3,640,640 (repeatable)")
	fs.valueFlag(&a.values, "value", "NAME=NUM", "fill input NAME with the constant NUM, e.g. sr=16000 (repeatable)")
	fs.intFlag(&a.cfg.ProfileRuns, "profile-runs", "N", 10, "runs of the operator-profiling pass, 0 to skip (default 10)")
	fs.boolFlag(&a.runSpans, "run-spans", false,
		"a span for every run, also when the traces go to files: without it and without an OTLP endpoint, only the profiled runs "+
			"(with their operator spans) are in traces.jsonl, every run's duration being in the metrics")
	fs.intFlag(&a.profileOnDemand, "profile-on-demand", "K", 10,
		"on SIGUSR1, and on POST /api/v1/profile?runs=K of the --ui live view, profile the next K runs of the measured "+
			"sessions while they run, at most once per 10s; their operator spans join the traces and the live timeline "+
			"(default 10; 0 = off, at most 1000)")
}

// resultFlags: what the run is called and where its result goes.
func (a *benchAction) resultFlags(fs *flagSet) {
	fs.stringFlag(&a.cfg.ModelName, "model-name", "NAME", "", "onnxruntime.model.name in telemetry (default: file name)")
	fs.deprecate("name", "--model-name NAME", false, func(v string) error { a.cfg.ModelName = v; return nil })
	fs.stringFlag(&a.history, "history", "DB", os.Getenv("ORTEL_HISTORY"),
		"record the run in a history (a SQLite file or a postgres:// URL; default: ORTEL_HISTORY): see ortel help history")
	fs.uint64Flag(&a.cfg.Seed, "seed", "N", 1, "seed of the random input data (default 1)")
	fs.stringFlag(&a.format, "format", "F", "text", "text (default) or json: the report printed on stdout")
	fs.choices("format", "text", "json")
	fs.boolFlag(&a.verbose, "verbose", false,
		"print the whole text report (every table: operators, roofline, hardware, energy) instead of the summary, and ONNX Runtime's own log lines "+
			"(--tune, --generate, a batch sweep and a load scenario print the whole report anyway)")
	fs.deprecate("json", "--format json", true, func(v string) error {
		on, err := strconv.ParseBool(v)
		if on {
			a.format = "json"
		}
		return err
	})
}

// validateGroups checks the shared flags.
func (a *benchAction) validateGroups() error {
	for _, v := range []func() error{a.ui.validate, a.export.validate, a.hw.validate} {
		if err := v(); err != nil {
			return err
		}
	}
	var err error
	a.format, err = checkFormat(a.format, "text", "json")
	return err
}

// config is the bench.Config the flags give, validated by the engine: a
// rule it breaks is a usage error naming the flags. model is MODEL as the
// command line gives it (for --tune's reproducing command).
func (a *benchAction) config(model string) (bench.Config, error) {
	cfg := a.cfg
	if err := a.parseMeasure(&cfg); err != nil {
		return cfg, usage(err)
	}
	if err := a.parseLoad(&cfg); err != nil {
		return cfg, usage(err)
	}
	if err := a.parseSession(&cfg.Session); err != nil {
		return cfg, usage(err)
	}
	var err error
	if cfg.Shapes, err = bench.ParseShapes(a.shapes); err != nil {
		return cfg, usage(err)
	}
	if cfg.Values, err = bench.ParseValues(a.values); err != nil {
		return cfg, usage(err)
	}
	if cfg.Tune, err = a.tune.parse(model); err != nil {
		return cfg, err
	}
	if a.runs == "" && cfg.Auto != nil && !cfg.AutoApplies() {
		// No --runs, and what is measured takes a number of runs.
		cfg.Auto, cfg.Runs = nil, bench.DefaultRuns
	}
	if a.profileOnDemand < 0 || a.profileOnDemand > bench.MaxOnDemandRuns {
		return cfg, usagef("--profile-on-demand must be 0 (off) to %d (got %d)", bench.MaxOnDemandRuns, a.profileOnDemand)
	}
	return cfg, usage(cfg.Validate())
}

// parseMeasure reads --runs (a count or auto, with --auto-percentile,
// --auto-width and --duration as its time limit) and --warmup.
func (a *benchAction) parseMeasure(cfg *bench.Config) error {
	runs := a.runs
	switch {
	case runs == "" && cfg.Duration > 0:
		runs = "0" // --duration alone measures for that long
	case runs == "":
		runs = "auto" // unless what is measured takes a number of runs (config)
	}
	n, auto, err := bench.ParseRuns(runs)
	if err != nil {
		return err
	}
	cfg.Runs = n
	if cfg.Duration > 0 {
		cfg.Runs = 0
	}
	if auto {
		r := &bench.AutoRuns{Limit: cfg.Duration}
		if r.Percentile, err = bench.ParseAutoPercentile(a.autoPct); err != nil {
			return err
		}
		if r.Width, err = bench.ParseAutoWidth(a.autoWidth); err != nil {
			return err
		}
		cfg.Auto, cfg.Runs, cfg.Duration = r, 0, 0
	}
	cfg.Warmup, cfg.WarmupAuto, err = bench.ParseWarmup(a.warmup)
	return err
}

// parseLoad reads --batch, --scenario, --sessions and --sla.
func (a *benchAction) parseLoad(cfg *bench.Config) error {
	var err error
	if cfg.Batches, err = bench.ParseBatches(a.batch); err != nil {
		return err
	}
	cfg.Batch = cfg.Batches[0]
	if cfg.Scenario, err = bench.ParseScenario(a.scenario); err != nil {
		return err
	}
	if cfg.Sessions, err = bench.ParseSessionMode(a.sessions); err != nil {
		return err
	}
	if a.sla != "" {
		s, err := bench.ParseSLA(a.sla)
		if err != nil {
			return err
		}
		cfg.SLA = &s
	}
	return nil
}

// parseSession reads the session-option flags. A misspelt value is a usage
// error (exit 2); a provider this ONNX Runtime build lacks is found when
// bench starts (exit 1), like a missing model.
func (a *benchAction) parseSession(s *bench.SessionOptions) error {
	var err error
	if s.OptLevel, err = bench.ParseOptLevel(a.optLevel); err != nil {
		return err
	}
	if s.ExecutionMode, err = bench.ParseExecutionMode(a.execMode); err != nil {
		return err
	}
	if s.Config, err = bench.ParseKeyValues("Session.Config", a.sessionConfig); err != nil {
		return err
	}
	if s.ProviderOptions, err = bench.ParseKeyValues("Session.ProviderOptions", a.providerOptions); err != nil {
		return err
	}
	s.Providers, err = bench.ParseProviders(a.providers)
	return err
}

func (a *benchAction) run(ctx context.Context, e *env, pos []string) error {
	if err := a.checkABFlags(); err != nil {
		return err
	}
	if len(a.ab.sides) > 0 {
		return a.runAB(ctx, e, pos)
	}
	if len(pos) != 1 {
		return usagef("want exactly one MODEL, got %d arguments", len(pos))
	}
	cfg, acfg, err := a.prepare(e, pos[0])
	if err != nil {
		return err
	}
	out := a.output.out
	if out == "" {
		out = benchOutDir(instrument.ModelName(cfg.ModelPath), time.Now())
	}
	_, statErr := os.Stat(out)
	created := errors.Is(statErr, os.ErrNotExist)
	if err := os.MkdirAll(out, 0o755); err != nil {
		return fmt.Errorf("create output folder %q: %w", out, err)
	}
	od, hc := a.harnessConfig(cfg, out)
	h, err := startHarness(ctx, e, "bench", hc)
	if err != nil {
		return err
	}
	defer h.close(ctx)
	if od != nil {
		h.onClose(watchProfileSignal(e, od, a.profileOnDemand))
	}
	a.wire(&cfg, e, h, od)
	rep, benchErr := bench.Run(ctx, cfg)
	if benchErr == nil {
		rep.Model.Catalog = catalogName(pos[0], cfg.ModelPath)
		benchErr = analyzeAndExport(ctx, rep, h.tel.TracerProvider, h.tel.MeterProvider, acfg)
	}
	// Flush what was recorded even when the bench failed: nothing already
	// measured is lost.
	if h.ui != nil {
		h.ui.view.FlushTimeline() // the last profiled run
	}
	h.ui.finish(e, benchErr)
	h.stopTelemetry(ctx)
	if benchErr != nil {
		// No report, but what became of the telemetry is said all the same:
		// the spool and how to send it.
		err := h.failed(ctx, benchErr, "the bench finished, so no report was written")
		if created {
			dropFailedOutput(e, h, out)
		}
		return err
	}
	return a.finish(ctx, e, h, rep, out)
}

// prepare checks the flags, builds the bench's Config and the analysis
// options, resolves the model (announcing the inputs a known model brings)
// and checks the model and its inputs, all before anything is written: a
// run that cannot start leaves no files behind. ONNX Runtime's own log
// lines are shown only with --verbose (the error they explain is returned
// all the same).
func (a *benchAction) prepare(e *env, model string) (bench.Config, analysis.Config, error) {
	if err := a.validateGroups(); err != nil {
		return bench.Config{}, analysis.Config{}, err
	}
	cfg, err := a.config(model)
	if err != nil {
		return cfg, analysis.Config{}, err
	}
	acfg, err := a.analysis.config(progressOf(a.output.quiet, e))
	if err != nil {
		return cfg, analysis.Config{}, err
	}
	known, err := resolveBenchModel(&cfg, model)
	if err != nil {
		return cfg, analysis.Config{}, err
	}
	if note := presetNote(known, model); note != "" && !a.output.quiet {
		fmt.Fprintf(e.stderr, "ortel bench: %s\n", note)
	}
	if err := useLibrary(a.ort); err != nil {
		return cfg, analysis.Config{}, err
	}
	if _, err := ortlib.Init(); err != nil {
		return cfg, analysis.Config{}, err
	}
	if lib := ortlib.Loaded(); lib.Note != "" && !a.output.quiet {
		fmt.Fprintf(e.stderr, "ortel bench: warning: %s (%s, from %s)\n", lib.Note, lib.Path, lib.Source)
	}
	level := ort.LoggingLevel(ort.LoggingLevelFatal)
	if a.verbose {
		level = ort.LoggingLevelWarning
	}
	if err := ort.SetEnvironmentLogLevel(level); err != nil {
		return cfg, analysis.Config{}, fmt.Errorf("set ONNX Runtime's log level: %w", err)
	}
	if err := bench.CheckInputs(cfg); err != nil {
		return cfg, analysis.Config{}, a.inputsCommand(err, model)
	}
	return cfg, acfg, nil
}

// useLibrary makes ONNX Runtime load the library --ort names ("" leaves
// the choice to ortlib); a release that is not there says how to fetch it.
func useLibrary(spec string) error {
	if spec == "" {
		return nil
	}
	lib, err := ortlib.Select(spec)
	if err != nil {
		return fmt.Errorf("--ort %s: %w", spec, err)
	}
	if err := ortlib.Use(lib); err != nil {
		return fmt.Errorf("--ort %s: %w", spec, err)
	}
	return nil
}

// dropFailedOutput removes the output folder a failed run created, so that
// it leaves no partial files, unless it holds a spool of telemetry to send
// later.
func dropFailedOutput(e *env, h *harness, out string) {
	if st := h.tel.Stats(); st.SpansSpooled > 0 || st.MetricExportsSpooled > 0 {
		return
	}
	if err := os.RemoveAll(out); err == nil {
		fmt.Fprintf(e.stderr, "ortel bench: removed %s: a failed run leaves no partial files\n", out)
	}
}

// resolveBenchModel finds MODEL (a file, or a catalog name whose shapes,
// values and encoder become the defaults: flags still win) and the
// --encoder model.
func resolveBenchModel(cfg *bench.Config, model string) (*models.Known, error) {
	path, known, err := models.Resolve(model)
	if errors.Is(err, models.ErrUnknownName) {
		if s := didYouMean(model, models.Names()); s != "" {
			return nil, fmt.Errorf("%w; did you mean %s?", err, s)
		}
	}
	if err != nil {
		return nil, err
	}
	cfg.ModelPath = path
	if known != nil && known.Decoder && cfg.Generate == 0 {
		return nil, usagef("%s is an autoregressive decoder: bench it with --generate N (for example: ortel bench --generate 32 %s)", known.Name, known.Name)
	}
	if known != nil {
		if cfg.DefaultShapes, err = catalogShapes(known); err != nil {
			return nil, err
		}
		if cfg.Values == nil {
			cfg.Values = map[string]string{}
		}
		for name, v := range known.Values {
			if _, ok := cfg.Values[name]; !ok {
				cfg.Values[name] = v
			}
		}
		if cfg.Generate > 0 && cfg.EncoderPath == "" && cfg.EncoderTokens == 0 {
			cfg.EncoderPath = known.Encoder
		}
	}
	if cfg.EncoderPath == "" {
		return known, nil
	}
	p, k, err := models.Resolve(cfg.EncoderPath)
	if err != nil {
		return nil, fmt.Errorf("--encoder: %w", err)
	}
	cfg.EncoderPath, cfg.EncoderShapes = p, map[string][]int64{}
	if k != nil {
		cfg.EncoderShapes, err = catalogShapes(k)
	}
	return known, err
}

// presetNote announces the inputs a known model brings (model is MODEL as
// given: its name, or a file the catalog knows by its file name), or "".
func presetNote(k *models.Known, model string) string {
	if k == nil || len(k.Shapes)+len(k.Values) == 0 {
		return ""
	}
	var flags []string
	for _, name := range slices.Sorted(maps.Keys(k.Shapes)) {
		flags = append(flags, "--shape "+name+"="+k.Shapes[name])
	}
	for _, name := range slices.Sorted(maps.Keys(k.Values)) {
		flags = append(flags, "--value "+name+"="+k.Values[name])
	}
	what := model + " is the known model " + k.Name
	if model == k.Name {
		what = k.Name + " is a known model"
	}
	return fmt.Sprintf("%s: using its usual inputs, %s (a --shape or --value given wins)", what, strings.Join(flags, " "))
}

// catalogShapes are the input shapes the catalog gives model k.
func catalogShapes(k *models.Known) (map[string][]int64, error) {
	out := map[string][]int64{}
	for name, dims := range k.Shapes {
		s, err := bench.ParseShapes([]string{name + "=" + dims})
		if err != nil {
			return nil, fmt.Errorf("catalog shape of %s: %w", k.Name, err)
		}
		out[name] = s[name]
	}
	return out, nil
}

// harnessConfig is what bench starts: telemetry into out, the live view
// (with the SLA and the on-demand trigger), the hardware receivers. od
// is the on-demand profiling trigger, nil when --profile-on-demand is 0.
func (a *benchAction) harnessConfig(cfg bench.Config, out string) (*bench.OnDemand, harnessConfig) {
	tcfg := telemetryConfig("bench", out)
	a.export.apply(&tcfg)
	tcfg.Views = views.FromEnv()
	hc := harnessConfig{telemetry: tcfg, ui: &a.ui, hardware: a.hw.options(2 * time.Second)}
	if cfg.SLA != nil {
		hc.uiConfig.SLAThreshold, hc.uiConfig.SLAPercentile = cfg.SLA.Threshold, cfg.SLA.Percentile
	}
	var od *bench.OnDemand
	if a.profileOnDemand > 0 {
		od = &bench.OnDemand{}
		hc.uiConfig.Profile, hc.uiConfig.ProfileRuns, hc.uiConfig.ProfileMaxRuns = od.Profile, a.profileOnDemand, bench.MaxOnDemandRuns
	}
	return od, hc
}

// wire connects the bench to what the harness started: its providers,
// the hardware sampler, the progress lines, the live view.
func (a *benchAction) wire(cfg *bench.Config, e *env, h *harness, od *bench.OnDemand) {
	cfg.TracerProvider, cfg.MeterProvider, cfg.OnDemand = h.tel.TracerProvider, h.tel.MeterProvider, od
	// A span per run goes where someone reads spans: a collector, the
	// console. To files, one per run is tens of MB a minute nobody asked
	// for: only with --run-spans.
	cfg.ProfiledRunSpansOnly = !a.runSpans && h.tel.Resolved.Traces.Kind == telemetry.KindFile
	if h.hw != nil {
		cfg.Hardware = hardware.NewSampler(h.hw, a.hw.interval, 0)
	}
	if !a.output.quiet {
		cfg.Progress = prefixWriter{e.stderr, "ortel bench: "}
		cfg.Bars = e.bars
	}
	if h.ui != nil {
		cfg.Progress = phaseWriter{next: cfg.Progress, view: h.ui.view, runs: cfg.Runs, length: a.cfg.Duration}
		view := h.ui.view
		cfg.NodeObserver = func(n instrument.ProfiledNode) {
			view.ObserveNode(n.Run, n.Node.NodeName(), n.Node.OpName, n.Start, n.End, n.Depth)
		}
	}
}

// finish completes a bench that succeeded: the report's telemetry
// section, report.json, the report on stdout, the history, the live view
// held, and the exit (4 when telemetry did not leave; 1 when the report
// file failed).
func (a *benchAction) finish(ctx context.Context, e *env, h *harness, rep *report.Report, out string) error {
	rep.Tool = report.Tool{Name: "ortel", Version: version}
	if rep.Runtime.LibraryPath == "" { // an A/B in child processes has its sides' and loads none
		rep.Runtime.LibraryPath, _ = ortlib.Init()
	}
	rep.Telemetry = reportTelemetry(h)
	if h.shutdownErr != nil {
		rep.Notes = append(rep.Notes, "telemetry shutdown: "+e.redact.Redact(h.shutdownErr.Error()))
	}
	// The report file is replaced whole (a full disk leaves no empty
	// report.json); when it cannot be written the report still goes to
	// stdout, and the exit says why the file is missing.
	reportPath := filepath.Join(out, "report.json")
	reportErr := errors.Join(rep.Write(reportPath), writeRenderedReports(rep, out))
	switch {
	case a.format == "json":
		b, _ := json.MarshalIndent(rep, "", "  ")
		fmt.Fprintf(e.stdout, "%s\n", b)
	case rep.AB != nil && !a.verbose:
		if err := printAB(e, rep, out, reportErr); err != nil {
			return err
		}
	default:
		if err := a.printReport(e, rep, out, reportErr); err != nil {
			return err
		}
	}
	// An A/B comparison is not one run of one configuration: the history
	// does not record it.
	if rep.AB == nil {
		if err := recordHistory(ctx, e, a.history, rep); err != nil {
			return err
		}
	}
	h.ui.hold(ctx, e, "bench", rep)
	return errors.Join(reportErr, h.outcome())
}

// printReport prints the report on stdout: the summary and where the
// report files are; the whole text report with --verbose, or when the
// bench was asked for a section the summary leaves out (a tuning sweep, a
// batch sweep, a generation, a load scenario).
func (a *benchAction) printReport(e *env, rep *report.Report, out string, reportErr error) error {
	asked := rep.Tune != nil || rep.BatchSweep != nil || rep.Generation != nil ||
		(rep.Load != nil && (rep.Load.Scenario != "single-stream" || rep.Load.SLA != nil))
	if !a.verbose && !asked {
		if err := report.WriteSummary(e.stdout, rep); err != nil {
			return err
		}
		if reportErr != nil {
			fmt.Fprintf(e.stdout, "report      not written (see the error below)\n")
			return nil
		}
		fmt.Fprintf(e.stdout, "report      %s (and report.md, report.json); --verbose prints all of it here\n", filepath.Join(out, "report.html"))
		return nil
	}
	if err := report.WriteText(e.stdout, rep); err != nil {
		return err
	}
	if err := report.WriteAnalysisText(e.stdout, rep); err != nil {
		return err
	}
	if reportErr == nil {
		fmt.Fprintf(e.stdout, "\nreport: %s (and report.md, report.html)\n", filepath.Join(out, "report.json"))
	} else {
		fmt.Fprintf(e.stdout, "\nreport: not written (see the error below)\n")
	}
	return nil
}

// writeRenderedReports writes report.md and report.html beside
// report.json, each replaced whole.
func writeRenderedReports(rep *report.Report, out string) error {
	for _, f := range []struct {
		name  string
		write func(io.Writer, *report.Report) error
	}{{"report.md", report.WriteMarkdown}, {"report.html", report.WriteHTML}} {
		var b bytes.Buffer
		if err := f.write(&b, rep); err != nil {
			return fmt.Errorf("render %s: %w", f.name, err)
		}
		if err := atomicfile.Write(filepath.Join(out, f.name), b.Bytes(), 0o644); err != nil {
			return fmt.Errorf("write %s: %w", f.name, err)
		}
	}
	return nil
}

// inputsCommand adds to an error listing unresolved inputs the whole
// command that fills them: the model, the --shape and --value given, and
// one for each input left.
func (a *benchAction) inputsCommand(err error, model string) error {
	var u *bench.UnresolvedInputsError
	if !errors.As(err, &u) {
		return err
	}
	args := []string{"ortel", "bench", bench.ShellQuote(model)}
	for _, s := range a.shapes {
		args = append(args, "--shape", bench.ShellQuote(s))
	}
	for _, v := range a.values {
		args = append(args, "--value", bench.ShellQuote(v))
	}
	for _, in := range u.Inputs {
		if in.Shape != nil {
			args = append(args, "--shape", in.Name+"="+in.ShapeText())
		} else {
			args = append(args, "--value", in.Name+"="+in.Value)
		}
	}
	return fmt.Errorf("%w\nthis fills them all (use your data's sizes where they differ):\n  %s", err, strings.Join(args, " "))
}

// catalogName is arg when it named a known model (not a file), else "".
func catalogName(arg, path string) string {
	if k, ok := models.Lookup(arg); ok && path != arg {
		return k.Name
	}
	return ""
}

// reportTelemetry is the report's account of the bench's telemetry.
func reportTelemetry(h *harness) report.Telemetry {
	tel, st := h.tel, h.tel.Stats()
	t := report.Telemetry{
		Mode:          tel.Resolved.Mode,
		Files:         tel.Files(),
		SpansExported: st.SpansExported,
		SpansDropped:  st.SpansDropped,

		SpansSpooled:         st.SpansSpooled,
		MetricExportsFailed:  st.MetricExportFailures,
		MetricExportsSpooled: st.MetricExportsSpooled,
	}
	if tel.Resolved.Mode == "otlp" {
		t.Endpoint = tel.Resolved.TracesEndpoint
	}
	if st.SpansSpooled > 0 || st.MetricExportsSpooled > 0 {
		t.SpoolDir = tel.Resolved.SpoolDir
	}
	return t
}

// prefixWriter prefixes each write (one progress line) with p.
type prefixWriter struct {
	w interface{ Write([]byte) (int, error) }
	p string
}

func (p prefixWriter) Write(b []byte) (int, error) {
	if _, err := p.w.Write([]byte(p.p)); err != nil {
		return 0, err
	}
	return p.w.Write(b)
}
