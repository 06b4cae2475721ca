package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/ortel-dev/ortel/instrument"
	"github.com/ortel-dev/ortel/instrument/ortlib"
	"github.com/ortel-dev/ortel/instrument/views"
	"github.com/ortel-dev/ortel/internal/bench"
	"github.com/ortel-dev/ortel/internal/hardware"
	"github.com/ortel-dev/ortel/internal/liveview"
	"github.com/ortel-dev/ortel/internal/models"
	"github.com/ortel-dev/ortel/internal/report"
)

const benchUsage = `Usage:
  ortel bench [flags] MODEL

MODEL is an .onnx file, or the name of a fetched model: ` + "{models}" + `.

Loads the model, feeds it synthesized inputs matching its declared inputs,
measures cold start and steady-state latency and throughput with every run
traced, then profiles operators in a separate, bounded pass (latency is never
measured with ONNX Runtime's profiler on). Prints a report, writes it as JSON
to the output folder, and ships traces and metrics over OTLP — or, when no
OTLP endpoint is configured, writes them as OTLP/JSON lines files
(traces.jsonl, metrics.jsonl) that any collector can replay.

Flags:
  --runs N|auto       measured runs, or requests of a load scenario (default 100);
                      auto runs until the 95% confidence interval of the
                      --auto-percentile is within --auto-width of it, or
                      --duration passes (default 60s then); single-stream and
                      concurrent scenarios
  --auto-percentile P percentile --runs auto watches, e.g. p99 or 95 (default p99)
  --auto-width W      widest interval --runs auto accepts, relative to the
                      percentile, e.g. 5% or 0.05 (default 5%)
  --duration D        measure for a duration instead, e.g. 30s
  --warmup N|auto     runs after the first, not measured (default 10); auto warms
                      up until latency is steady (two 10-run windows whose
                      medians differ by at most 5%)
  --warmup-max N      most warm-up runs of --warmup auto (default 200)
  --threads N         intra-op threads (default: ONNX Runtime's choice)
  --inter-threads N   inter-op threads (default: ONNX Runtime's choice)
  --opt-level L       graph optimization level: disable, basic, extended or
                      all (default: ONNX Runtime's, all)
  --execution-mode M  sequential (default) or parallel (inter-op threads run
                      independent branches)
  --save-optimized PATH
                      write the model as ONNX Runtime optimized it to PATH
  --session-config KEY=VALUE
                      an ONNX Runtime session configuration entry, e.g.
                      session.intra_op.allow_spinning=0 (repeatable)
  --provider NAME[,NAME...]
                      execution providers in order of preference: cpu, cuda,
                      tensorrt, openvino, coreml, directml, xnnpack, qnn,
                      webgpu, vitisai, azure (or ONNX Runtime's names); cpu is
                      always the last fallback. One this ONNX Runtime build
                      lacks fails with the list of those it has
  --provider-option KEY=VALUE
                      option of the first provider other than cpu, e.g.
                      device_id=0 (repeatable)
` + tuneFlagsUsage + `  --batch N[,N...]    size of a dynamic first dimension (default 1); a list,
                      e.g. 1,2,4,8,16, sweeps the sizes: latency, items/s and
                      scaling efficiency per size, and the best size
  --scenario S        load pattern of the measured phase (default single-stream):
                        single-stream  one request at a time (closed loop)
                        concurrent     --concurrency workers in a closed loop
                        server         open-loop Poisson arrivals at --qps;
                                       latency counts from the scheduled
                                       arrival, so queueing is included
                        offline        every request at once, maximum throughput
  --concurrency N     workers (default 1 for single-stream and server, the
                      number of CPUs for concurrent and offline)
  --sessions M        shared (default: workers share one session) or per-worker
  --qps R             server scenario: target arrival rate, requests/s
  --sla D[@pP]        latency SLA, e.g. 20ms (at p99) or 20ms@p95: violations,
                      compliance and a verdict; with --scenario server, also
                      searches the peak rate meeting it (--qps then starts
                      the search)
  --trial-duration D  shortest trial of the SLA search (default 2s); a trial
                      also holds at least the requests its percentile needs
                      for a verdict at 99% confidence (662 for p99), and goes
                      on past a stray stall until the verdict is known
  --sla-trials N      most trials of the SLA search (default 20; a failing
                      trial is repeated once before the search moves down)
  --generate N        LLM generation: greedy generations of N tokens on a
                      decoder with a key/value cache (input_ids,
                      past_key_values.*; attention_mask, position_ids,
                      use_cache_branch and encoder_hidden_states when it has
                      them); reports time to first token, time per output
                      token, tokens/s and KV-cache bytes per step (each
                      measured run is one generation)
  --prompt-tokens N   prompt length of --generate (default 32)
  --encoder MODEL     with --generate on an encoder-decoder's decoder: run this
                      encoder once on seeded input and feed its output as
                      encoder_hidden_states (default for moonshine-tiny:
                      moonshine-tiny-encoder on 10 s of input, 415 states)
  --encoder-tokens N  instead of --encoder: feed seeded encoder_hidden_states
                      of N positions (default: the model's declared length;
                      Whisper: 1500)
  --shape NAME=DIMS   whole shape of input NAME, e.g. x=1,3,640,640 (repeatable)
  --value NAME=NUM    fill input NAME with the constant NUM, e.g. sr=16000 (repeatable)
  --profile-runs N    runs of the operator-profiling pass, 0 to skip (default 10)
  --profile-on-demand K
                      on SIGUSR1, and on POST /api/v1/profile?runs=K of the --ui
                      live view, profile the next K runs of the measured sessions
                      while they run, at most once per 10s; their operator spans
                      join the traces and the live timeline (default 10; 0 = off,
                      at most 1000)
  --out DIR           output folder (default ortel-out/MODEL-TIME)
  --model-name NAME   onnxruntime.model.name in telemetry (default: file name)
  --history DB        record the run in a history (a SQLite file or a postgres://
                      URL; default: ORTEL_HISTORY): see ortel help history
  --seed N            seed of the random input data (default 1)
  --otlp-endpoint URL send OTLP here (default: OTEL_EXPORTER_OTLP_ENDPOINT)
  --export-timeout D  give up on one OTLP export, and on a dead collector at exit,
                      after D (default: OTEL_EXPORTER_OTLP_TIMEOUT, else 10s)
` + spoolFlagsUsage + `  --format F          text (default) or json: the report printed on stdout
  --quiet             no progress lines on stderr
  --no-hardware       do not start the hardware receivers (CPU, memory, perf,
                      RAPL, thermal, NVIDIA GPU) or sample them
  --hw-interval D     how often the measured phase samples the hardware (default 200ms)
` + uiFlagsUsage + analysisFlagsUsage + `
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
  ortel bench --generate 64 --prompt-tokens 128 decoder.onnx
  ortel bench --generate 32 --prompt-tokens 4 moonshine-tiny
  ortel bench --shape input=1,512 --shape state=2,1,128 --value sr=16000 silero_vad.onnx
  OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4317 ortel bench model.onnx
`

func benchCommand() *command {
	return &command{
		name:    "bench",
		summary: "profile a model: cold start, latency percentiles, throughput, top operators",
		usage:   strings.Replace(benchUsage, "{models}", strings.Join(models.Names(), ", "), 1),
		run:     runBench,
	}
}

type benchFlags struct {
	runsArg, autoPct, autoWidth       string
	runs, threads, inter, profileRuns int
	profileOnDemand                   int
	warmupMax, concurrency, slaTrials int
	generate, promptTokens            int
	encoderTokens                     int
	encoder                           string
	seed                              uint64
	qps                               float64
	duration, trialDuration           time.Duration
	shapes, values                    listFlag
	sessionConfig, providerOptions    listFlag
	optLevel, execMode, saveOptimized string
	providers                         string
	warmup, batch, scenario, sessions string
	sla                               string
	out, name, endpoint, format       string
	history                           string
	quiet, noHardware                 bool
	analysis                          analysisFlags
	hwInterval                        time.Duration
	exportTimeout                     time.Duration
	spool                             spoolFlags
	ui                                uiFlags
	tune                              tuneFlags

	// Parsed by validate.
	warmupN    int
	warmupAuto bool
	batches    []int64
	scen       bench.Scenario
	sessMode   bench.SessionMode
	slaParsed  *bench.SLA
	auto       *bench.AutoRuns
	session    bench.SessionOptions
}

func (f *benchFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.runsArg, "runs", "100", "")
	fs.StringVar(&f.autoPct, "auto-percentile", "p99", "")
	fs.StringVar(&f.autoWidth, "auto-width", "5%", "")
	fs.DurationVar(&f.duration, "duration", 0, "")
	fs.StringVar(&f.warmup, "warmup", "10", "")
	fs.IntVar(&f.warmupMax, "warmup-max", bench.DefaultWarmupMax, "")
	fs.IntVar(&f.threads, "threads", 0, "")
	fs.IntVar(&f.inter, "inter-threads", 0, "")
	fs.StringVar(&f.optLevel, "opt-level", "", "")
	fs.StringVar(&f.execMode, "execution-mode", "", "")
	fs.StringVar(&f.saveOptimized, "save-optimized", "", "")
	fs.Var(&f.sessionConfig, "session-config", "")
	fs.StringVar(&f.providers, "provider", "", "")
	fs.Var(&f.providerOptions, "provider-option", "")
	fs.StringVar(&f.batch, "batch", "1", "")
	fs.StringVar(&f.scenario, "scenario", string(bench.SingleStream), "")
	fs.IntVar(&f.concurrency, "concurrency", 0, "")
	fs.StringVar(&f.sessions, "sessions", string(bench.SharedSession), "")
	fs.Float64Var(&f.qps, "qps", 0, "")
	fs.StringVar(&f.sla, "sla", "", "")
	fs.DurationVar(&f.trialDuration, "trial-duration", bench.DefaultTrialDuration, "")
	fs.IntVar(&f.slaTrials, "sla-trials", bench.DefaultMaxTrials, "")
	fs.IntVar(&f.generate, "generate", 0, "")
	fs.IntVar(&f.promptTokens, "prompt-tokens", bench.DefaultPromptTokens, "")
	fs.IntVar(&f.encoderTokens, "encoder-tokens", 0, "")
	fs.StringVar(&f.encoder, "encoder", "", "")
	fs.Var(&f.shapes, "shape", "")
	fs.Var(&f.values, "value", "")
	fs.IntVar(&f.profileRuns, "profile-runs", 10, "")
	fs.IntVar(&f.profileOnDemand, "profile-on-demand", 10, "")
	fs.StringVar(&f.out, "out", "", "")
	fs.StringVar(&f.name, "model-name", "", "")
	fs.StringVar(&f.history, "history", os.Getenv("ORTEL_HISTORY"), "")
	deprecate(fs, "name", "--model-name NAME", false, func(v string) error { f.name = v; return nil })
	fs.Uint64Var(&f.seed, "seed", 1, "")
	fs.StringVar(&f.endpoint, "otlp-endpoint", "", "")
	fs.DurationVar(&f.exportTimeout, "export-timeout", 0, "")
	f.spool.register(fs)
	fs.StringVar(&f.format, "format", "text", "")
	deprecate(fs, "json", "--format json", true, func(v string) error {
		on, err := strconv.ParseBool(v)
		if on {
			f.format = "json"
		}
		return err
	})
	fs.BoolVar(&f.quiet, "quiet", false, "")
	fs.BoolVar(&f.noHardware, "no-hardware", false, "")
	f.analysis.register(fs)
	fs.DurationVar(&f.hwInterval, "hw-interval", hardware.DefaultInterval, "")
	f.ui.register(fs)
	f.tune.register(fs)
}

func (f *benchFlags) validate() error {
	if err := f.parseLoad(); err != nil {
		return err
	}
	if err := f.ui.validate(); err != nil {
		return err
	}
	if err := f.spool.validate(); err != nil {
		return err
	}
	var err error
	if f.format, err = checkFormat(f.format, "text", "json"); err != nil {
		return err
	}
	if err := f.parseRuns(); err != nil {
		return err
	}
	if err := f.parseSession(); err != nil {
		return err
	}
	switch {
	case f.auto == nil && f.runs <= 0 && f.duration <= 0:
		return usagef("--runs must be 1 or more (got %d)", f.runs)
	case f.duration < 0:
		return usagef("--duration must not be negative (got %s)", f.duration)
	case f.hwInterval < 10*time.Millisecond:
		return usagef("--hw-interval must be 10ms or more (got %s)", f.hwInterval)
	case f.warmupMax < 1:
		return usagef("--warmup-max must be 1 or more (got %d)", f.warmupMax)
	case f.concurrency < 0:
		return usagef("--concurrency must be 1 or more (got %d)", f.concurrency)
	case f.concurrency > 1024:
		return usagef("--concurrency %d is too many workers (at most 1024)", f.concurrency)
	case f.scen == bench.SingleStream && f.concurrency > 1:
		return usagef("--concurrency %d needs --scenario concurrent, server or offline (single-stream runs one request at a time)", f.concurrency)
	case f.sessMode == bench.PerWorkerSessions && f.scen == bench.SingleStream:
		return usagef("--sessions per-worker needs several workers: use --scenario concurrent, server or offline")
	case f.qps < 0:
		return usagef("--qps must be a positive rate in requests per second (got %g)", f.qps)
	case f.qps > 0 && f.scen != bench.Server:
		return usagef("--qps applies to --scenario server only")
	case f.scen == bench.Server && f.qps == 0 && f.slaParsed == nil:
		return usagef("--scenario server needs a target rate (--qps 20) or an SLA whose peak rate it searches (--sla 50ms)")
	case f.trialDuration <= 0:
		return usagef("--trial-duration must be positive (got %s)", f.trialDuration)
	case f.slaTrials < 1 || f.slaTrials > 100:
		return usagef("--sla-trials must be from 1 to 100 (got %d)", f.slaTrials)
	case len(f.batches) > 1 && f.scen != bench.SingleStream:
		return usagef("--batch with several sizes measures each single-stream; drop --scenario %s", f.scen)
	case f.generate < 0:
		return usagef("--generate must be 0 (off) or a number of tokens (got %d)", f.generate)
	case f.generate > 100000:
		return usagef("--generate %d is too many tokens (at most 100000)", f.generate)
	case f.promptTokens < 1:
		return usagef("--prompt-tokens must be 1 or more (got %d)", f.promptTokens)
	case f.encoderTokens < 0 || f.encoderTokens > 100000:
		return usagef("--encoder-tokens must be from 1 to 100000, or 0 for the model's length (got %d)", f.encoderTokens)
	case f.encoder != "" && f.encoderTokens != 0:
		return usagef("--encoder's output sets the encoder states' length; drop --encoder-tokens")
	case f.encoder != "" && f.generate == 0:
		return usagef("--encoder feeds the decoder that --generate drives; add --generate N")
	case f.generate > 0 && (len(f.batches) > 1 || f.batches[0] != 1):
		return usagef("--generate runs one sequence at a time; drop --batch")
	case f.generate > 0 && f.scen != bench.SingleStream:
		return usagef("--generate runs single-stream; drop --scenario %s", f.scen)
	case f.generate > 0 && f.slaParsed != nil:
		return usagef("--sla checks request latency; with --generate read the time to first token and per output token instead")
	case f.threads < 0:
		return usagef("--threads must be 0 (ORT's choice) or more (got %d)", f.threads)
	case f.inter < 0:
		return usagef("--inter-threads must be 0 (ORT's choice) or more (got %d)", f.inter)
	case f.profileRuns < 0:
		return usagef("--profile-runs must be 0 (skip) or more (got %d)", f.profileRuns)
	case f.profileOnDemand < 0 || f.profileOnDemand > bench.MaxOnDemandRuns:
		return usagef("--profile-on-demand must be 0 (off) to %d (got %d)", bench.MaxOnDemandRuns, f.profileOnDemand)
	case f.profileRuns > 1000:
		return usagef("--profile-runs %d is too many: the profiler keeps every event in memory (at most 1000)", f.profileRuns)
	}
	return nil
}

func runBench(ctx context.Context, e *env, args []string) error {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	var f benchFlags
	f.register(fs)
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	noteDeprecated(e, "bench", fs)
	if err := checkExportTimeout(f.exportTimeout); err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("want exactly one MODEL, got %d arguments", len(pos))
	}
	if err := f.validate(); err != nil {
		return err
	}
	tune, err := f.tune.parse(&f, pos[0])
	if err != nil {
		return err
	}
	shapes, err := bench.ParseShapes(f.shapes)
	if err != nil {
		return usagef("%v", err)
	}
	values, err := bench.ParseValues(f.values)
	if err != nil {
		return usagef("%v", err)
	}
	aopts, err := f.analysis.options(progressOf(f.quiet, e))
	if err != nil {
		return err
	}
	path, known, err := models.Resolve(pos[0])
	if err != nil {
		return err
	}
	defaults := map[string][]int64{}
	if known != nil && known.Decoder && f.generate == 0 {
		return usagef("%s is an autoregressive decoder: bench it with --generate N (for example: ortel bench --generate 32 %s)", known.Name, known.Name)
	}
	if known != nil {
		// The catalog knows what this model needs; flags still win.
		for name, dims := range known.Shapes {
			s, err := bench.ParseShapes([]string{name + "=" + dims})
			if err != nil {
				return fmt.Errorf("catalog shape of %s: %w", known.Name, err)
			}
			defaults[name] = s[name]
		}
		for name, v := range known.Values {
			if _, ok := values[name]; !ok {
				values[name] = v
			}
		}
		if f.generate > 0 && f.encoder == "" && f.encoderTokens == 0 {
			f.encoder = known.Encoder
		}
	}
	var encoderShapes map[string][]int64
	if f.encoder != "" {
		p, k, err := models.Resolve(f.encoder)
		if err != nil {
			return fmt.Errorf("--encoder: %w", err)
		}
		f.encoder, encoderShapes = p, map[string][]int64{}
		if k != nil {
			for name, dims := range k.Shapes {
				s, err := bench.ParseShapes([]string{name + "=" + dims})
				if err != nil {
					return fmt.Errorf("catalog shape of %s: %w", k.Name, err)
				}
				encoderShapes[name] = s[name]
			}
		}
	}
	if _, err := ortlib.Init(); err != nil {
		return err
	}

	out := f.out
	if out == "" {
		out = benchOutDir(instrument.ModelName(path), time.Now())
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return fmt.Errorf("create output folder %q: %w", out, err)
	}

	var uiOpts []liveview.Option
	if f.slaParsed != nil {
		uiOpts = append(uiOpts, liveview.WithSLA(f.slaParsed.Threshold, f.slaParsed.Percentile))
	}
	var od *bench.OnDemand
	if f.profileOnDemand > 0 {
		od = &bench.OnDemand{}
		uiOpts = append(uiOpts, liveview.WithProfileTrigger(od.Profile, f.profileOnDemand, bench.MaxOnDemandRuns))
		defer watchProfileSignal(e, od, f.profileOnDemand)()
	}
	ui := f.ui.newUI(uiOpts...)
	tcfg := telemetryConfig("bench", out)
	tcfg.Endpoint, tcfg.ExportTimeout, tcfg.Views, tcfg.Readers = f.endpoint, f.exportTimeout, views.FromEnv(), ui.readers()
	tcfg.SpoolMaxBytes = f.spool.maxBytes()
	tel, err := startTelemetry(ctx, e, "bench", tcfg)
	if err != nil {
		return err
	}
	if err := ui.start(ctx, e, "bench", f.ui); err != nil {
		return errors.Join(err, stopTelemetry(ctx, tel))
	}
	defer ui.stop()

	// Hardware receivers export through the bench's providers, and a sampler
	// summarizes them over the measured phase. They stop after the
	// telemetry's final export, so their last readings are in it.
	var hw *hardware.Set
	if !f.noHardware {
		hw = hardware.Open(ctx, hardware.Options{MeterProvider: tel.MeterProvider, GPUWait: 2 * time.Second})
		defer hw.Shutdown(context.WithoutCancel(ctx))
	}

	cfg := bench.Config{
		ModelPath: path, ModelName: f.name,
		Shapes: shapes, DefaultShapes: defaults, Values: values, Batch: f.batches[0],
		Runs: f.runs, Duration: f.duration, Warmup: f.warmupN,
		WarmupAuto: f.warmupAuto, WarmupMax: f.warmupMax,
		Scenario: f.scen, Concurrency: f.concurrency, Sessions: f.sessMode,
		QPS: f.qps, SLA: f.slaParsed, TrialDuration: f.trialDuration, MaxTrials: f.slaTrials,
		Generate: f.generate, PromptTokens: f.promptTokens, EncoderTokens: f.encoderTokens,
		EncoderPath: f.encoder, EncoderShapes: encoderShapes,
		Batches:        f.batches,
		IntraOpThreads: f.threads, InterOpThreads: f.inter, Session: f.session,
		ProfileRuns: f.profileRuns, Seed: f.seed, OnDemand: od, Tune: tune,
		TracerProvider: tel.TracerProvider, MeterProvider: tel.MeterProvider,
	}
	if f.duration > 0 {
		cfg.Runs = 0
	}
	if f.auto != nil {
		cfg.Auto, cfg.Runs, cfg.Duration = f.auto, 0, 0
	}
	if hw != nil {
		cfg.Hardware = hardware.NewSampler(hw, f.hwInterval, 0)
	}
	if !f.quiet {
		cfg.Progress = prefixWriter{e.stderr, "ortel bench: "}
	}
	if ui != nil {
		pw := phaseWriter{next: cfg.Progress, view: ui.view, runs: cfg.Runs, length: f.duration}
		cfg.Progress = pw
		view := ui.view
		cfg.NodeObserver = func(n instrument.ProfiledNode) {
			view.ObserveNode(n.Run, n.Node.NodeName(), n.Node.OpName, n.Start, n.End, n.Depth)
		}
	}
	rep, benchErr := bench.Run(ctx, cfg)
	if benchErr == nil {
		benchErr = analyzeAndExport(ctx, rep, tel.TracerProvider, tel.MeterProvider, aopts)
	}

	// Flush what was recorded even when the bench failed: nothing already
	// measured is lost.
	if ui != nil {
		ui.view.FlushTimeline() // the last profiled run
	}
	ui.finish(e, benchErr)
	shutdownErr := stopTelemetry(ctx, tel)
	if benchErr != nil {
		// No report, but what became of the telemetry is said all the same:
		// the spool and how to send it.
		benchErr = interrupted(ctx, benchErr, "the bench finished, so no report was written")
		return errors.Join(benchErr, errors.New(telemetryCounts(tel.Stats())), telemetryOutcome(e, "bench", tel, shutdownErr))
	}
	rep.Tool = report.Tool{Name: "ortel", Version: version}
	rep.Runtime.LibraryPath, _ = ortlib.Init()
	st := tel.Stats()
	rep.Telemetry = report.Telemetry{
		Mode:          tel.Resolved.Mode,
		Files:         tel.Files(),
		SpansExported: st.SpansExported,
		SpansDropped:  st.SpansDropped,

		SpansSpooled:         st.SpansSpooled,
		MetricExportsFailed:  st.MetricExportFailures,
		MetricExportsSpooled: st.MetricExportsSpooled,
	}
	if tel.Resolved.Mode == "otlp" {
		rep.Telemetry.Endpoint = tel.Resolved.TracesEndpoint
	}
	if st.SpansSpooled > 0 || st.MetricExportsSpooled > 0 {
		rep.Telemetry.SpoolDir = tel.Resolved.SpoolDir
	}
	if shutdownErr != nil {
		rep.Notes = append(rep.Notes, "telemetry shutdown: "+e.redact.Redact(shutdownErr.Error()))
	}
	// The report file is replaced whole (a full disk leaves no empty
	// report.json); when it cannot be written the report still goes to
	// stdout, and the exit says why the file is missing.
	reportPath := filepath.Join(out, "report.json")
	reportErr := rep.Write(reportPath)
	if f.format == "json" {
		b, _ := json.MarshalIndent(rep, "", "  ")
		fmt.Fprintf(e.stdout, "%s\n", b)
	} else {
		if err := report.WriteText(e.stdout, rep); err != nil {
			return err
		}
		if err := report.WriteAnalysisText(e.stdout, rep); err != nil {
			return err
		}
		if reportErr == nil {
			fmt.Fprintf(e.stdout, "\nreport: %s\n", reportPath)
		} else {
			fmt.Fprintf(e.stdout, "\nreport: not written (see the error below)\n")
		}
	}
	if err := recordHistory(ctx, e, f.history, rep); err != nil {
		return err
	}
	ui.hold(ctx, e, "bench", rep)
	// The report is out; telemetry that did not leave makes the exit
	// status 4, with one line per signal (1 when the report file failed).
	return errors.Join(reportErr, telemetryOutcome(e, "bench", tel, shutdownErr))
}

// parseLoad parses the flags that take words or lists: --warmup, --batch,
// --scenario, --sessions, --sla.
func (f *benchFlags) parseLoad() error {
	if strings.EqualFold(strings.TrimSpace(f.warmup), "auto") {
		f.warmupAuto = true
	} else {
		n, err := strconv.Atoi(strings.TrimSpace(f.warmup))
		if err != nil || n < 0 {
			return usagef("--warmup %q: want a number of runs, 0 or more, or auto", f.warmup)
		}
		f.warmupN = n
	}
	var err error
	if f.batches, err = bench.ParseBatches(f.batch); err != nil {
		return usagef("%v", err)
	}
	if f.scen, err = bench.ParseScenario(f.scenario); err != nil {
		return usagef("%v", err)
	}
	if f.sessMode, err = bench.ParseSessionMode(f.sessions); err != nil {
		return usagef("%v", err)
	}
	if f.sla != "" {
		s, err := bench.ParseSLA(f.sla)
		if err != nil {
			return usagef("%v", err)
		}
		f.slaParsed = &s
	}
	return nil
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

// parseRuns reads --runs (a count or auto) and, for auto, --auto-percentile,
// --auto-width and --duration as its time limit.
func (f *benchFlags) parseRuns() error {
	if strings.EqualFold(strings.TrimSpace(f.runsArg), "auto") {
		a := &bench.AutoRuns{Limit: f.duration}
		p, err := strconv.ParseFloat(strings.TrimPrefix(strings.ToLower(strings.TrimSpace(f.autoPct)), "p"), 64)
		if err != nil || !(p > 0 && p < 100) {
			return usagef("--auto-percentile %q: want a percentile between 0 and 100, such as p99 or 95", f.autoPct)
		}
		a.Percentile = p
		w := strings.TrimSpace(f.autoWidth)
		scale := 1.0
		if strings.HasSuffix(w, "%") {
			w, scale = strings.TrimSuffix(w, "%"), 0.01
		}
		v, err := strconv.ParseFloat(w, 64)
		if err != nil || !(v*scale > 0 && v*scale < 10) {
			return usagef("--auto-width %q: want a positive width relative to the percentile, such as 5%% or 0.05", f.autoWidth)
		}
		a.Width = v * scale
		if f.scen == bench.Server || f.scen == bench.Offline {
			return usagef("--runs auto needs --scenario single-stream or concurrent (the %s scenario takes a number of requests or a duration)", f.scen)
		}
		f.auto = a
		return nil
	}
	n, err := strconv.Atoi(strings.TrimSpace(f.runsArg))
	if err != nil {
		return usagef("--runs %q: want a number of runs, 1 or more, or auto", f.runsArg)
	}
	f.runs = n
	return nil
}

// parseSession reads the session-option flags. A misspelt value is a usage
// error (exit 2); a provider this ONNX Runtime build lacks is found when
// bench starts (exit 1), like a missing model.
func (f *benchFlags) parseSession() error {
	var err error
	s := &f.session
	if s.OptLevel, err = bench.ParseOptLevel(f.optLevel); err != nil {
		return usagef("%v", err)
	}
	if s.ExecutionMode, err = bench.ParseExecutionMode(f.execMode); err != nil {
		return usagef("%v", err)
	}
	if f.saveOptimized != "" {
		s.SaveOptimized = f.saveOptimized
	}
	if s.Config, err = keyValues("--session-config", f.sessionConfig); err != nil {
		return err
	}
	if s.ProviderOptions, err = keyValues("--provider-option", f.providerOptions); err != nil {
		return err
	}
	if strings.TrimSpace(f.providers) != "" {
		for _, name := range strings.Split(f.providers, ",") {
			p, err := bench.ParseProvider(name)
			if err != nil {
				return usagef("--provider %q: %v", f.providers, err)
			}
			s.Providers = append(s.Providers, p)
		}
	}
	if len(s.ProviderOptions) > 0 {
		other := false
		for _, p := range s.Providers {
			other = other || p.Name != "CPUExecutionProvider"
		}
		if !other {
			return usagef("--provider-option applies to an execution provider other than cpu; name one with --provider")
		}
	}
	return nil
}

// keyValues reads repeated KEY=VALUE flags; a key given twice is an error.
func keyValues(flagName string, kvs []string) (map[string]string, error) {
	if len(kvs) == 0 {
		return nil, nil
	}
	out := make(map[string]string, len(kvs))
	for _, kv := range kvs {
		k, v, ok := strings.Cut(kv, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return nil, usagef("%s %q: want KEY=VALUE", flagName, kv)
		}
		if _, dup := out[k]; dup {
			return nil, usagef("%s: %s given twice", flagName, k)
		}
		out[k] = v
	}
	return out, nil
}
