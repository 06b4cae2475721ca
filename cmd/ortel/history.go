package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ortel-dev/ortel/internal/analysis"
	"github.com/ortel-dev/ortel/internal/history"
	"github.com/ortel-dev/ortel/internal/report"
)

const historyIntro = `Usage:
  ortel history list                      the series in the history
  ortel history show [flags] MODEL        trend table, change points and what changed
  ortel history check [flags] [RUN.json]  CI gate: exit 3 when the newest run sits after a regression
  ortel history import [flags] RUN.json|DIR...
                                          add saved reports (report.json) to the history
  ortel history prune --before T | --keep N
  ortel history prometheus --url URL      the same detection over a Prometheus range query

The history remembers every run that ortel bench --history DB recorded (or
that import added): when and where it ran, the model file, ONNX Runtime
version, providers, session options and threads, the latency percentiles
with their intervals, throughput, memory, energy and each op type's self
time. Runs of one model, workload (scenario, batch, input shapes) and kind
of machine form a series. Change points are found per series and metric by
E-divisive means with a Student's t-test (as Apache Otava does): a lasting
shift of the level, with its size and 95% interval, and what differed
between the runs on each side: settings, commits, and the op types whose
self time moved most.

check judges the newest run of each series (or RUN.json files, checked
against the history without being recorded): exit 3 when it sits after a
change for the worse at most --recent runs ago, 0 otherwise (an improvement
is noted). --format md writes a pull-request comment.
`

const historyOutro = `
bench --history DB records each run; the commit comes from ORTEL_COMMIT,
GITHUB_SHA or CI_COMMIT_SHA when set.

Examples:
  ortel bench --history runs.db --runs 200 silero-vad
  ortel history show --db runs.db --format html --file vad.html silero-vad
  ortel history check --db postgres://ci@db/ortel --format md head/report.json >> comment.md
  ortel history import --db runs.db --commit v1.2.0 ortel-out/
  ortel history prometheus --url http://127.0.0.1:9090 --quantile 0.99 --model det
`

func historyCommand() *command {
	return &command{
		name:    "history",
		summary: "every run remembered: trends, change points and what changed, CI gate",
		intro:   historyIntro,
		outro:   historyOutro,
		args:    historyArgs,
		new:     func() action { return new(historyFlags) },
	}
}

// historyFlags are the flags of every history subcommand.
type historyFlags struct {
	db, metric, format, file, model, commit, before, url, quantile string
	minChange                                                      string
	pValue                                                         float64
	minRuns, recent, keep                                          int
	rangeD, step                                                   time.Duration
	labels                                                         listFlag
}

func (f *historyFlags) flags(fs *flagSet) {
	fs.stringFlag(&f.db, "db", "DB", os.Getenv("ORTEL_HISTORY"),
		"the history: a SQLite file, or a postgres:// URL (default: ORTEL_HISTORY)")
	fs.stringFlag(&f.metric, "metric", "M", "p50", "metric: "+history.MetricNames()+" (default p50)")
	var metrics []string
	for _, m := range history.Metrics {
		metrics = append(metrics, m.Name)
	}
	fs.choices("metric", metrics...)
	fs.float64Flag(&f.pValue, "p-value", "P", history.DefaultPValue, "significance a change point must reach (default 0.001)")
	fs.stringFlag(&f.minChange, "min-change", "C", "5%", "smallest change reported, e.g. 5% (default 5%)")
	fs.intFlag(&f.minRuns, "min-runs", "N", history.DefaultMinRuns, "fewest runs on each side of a change (default 3)")
	fs.stringFlag(&f.format, "format", "F", "text", "text (default), json, md (check), html (show)")
	fs.choices("format", "text", "json", "md", "html")
	fs.stringFlag(&f.file, "file", "PATH", "", "write the output there instead of stdout")
	fs.stringFlag(&f.model, "model", "M", "", "check: only this model's series")
	fs.intFlag(&f.recent, "recent", "N", history.DefaultRecent,
		"check: a change point fails the gate while at most N runs follow it (default 10)")
	fs.stringFlag(&f.commit, "commit", "REV", "", "import: the source revision the reports measured")
	fs.stringFlag(&f.before, "before", "T", "", "prune: runs before a time (2026-01-31) or age (90d)")
	fs.intFlag(&f.keep, "keep", "N", 0, "prune: all but the newest N runs of each series")
	fs.stringFlag(&f.url, "url", "URL", "", "prometheus: the server, e.g. http://127.0.0.1:9090")
	fs.stringFlag(&f.quantile, "quantile", "Q", "0.99", "prometheus: the run duration's quantile (default 0.99), or mean")
	fs.funcFlag("range", "D", "prometheus: how far back (default 7d)", func(v string) error { d, err := parseAge(v); f.rangeD = d; return err })
	fs.durationFlag(&f.step, "step", "D", time.Hour, "prometheus: the points' spacing (default 1h)")
	fs.valueFlag(&f.labels, "label", "L",
		"prometheus: a label to attribute changes to (repeatable; default onnxruntime_version, service_version)")
}

// config maps the flags to the engine's Config, which validates itself
// (its errors name its fields; the CLI prints the flags).
func (f *historyFlags) config() (history.Config, error) {
	c := history.Config{Model: f.model, Metric: f.metric, Recent: f.recent,
		Detection: history.Detection{PValue: f.pValue, MinRuns: f.minRuns}}
	var err error
	if c.Detection.MinChange, err = analysis.ParseThreshold(f.minChange); err != nil {
		return c, usagef("--min-change: %v", err)
	}
	if f.recent < 1 {
		return c, usagef("--recent must be 1 or more (got %d)", f.recent)
	}
	return c, usage(c.Validate())
}

// history's subcommands.
var historySubcommands = map[string]func(context.Context, *env, *historyFlags, []string) error{
	"list": historyList, "show": historyShow, "check": historyCheck, "import": historyImport,
	"prune": historyPrune, "prometheus": historyPrometheus,
}

func (f *historyFlags) run(ctx context.Context, e *env, pos []string) error {
	if len(pos) == 0 {
		return usagef("want a subcommand: list, show, check, import, prune or prometheus")
	}
	sub := historySubcommands[pos[0]]
	if sub == nil {
		return usagef("unknown subcommand %q: want list, show, check, import, prune or prometheus", pos[0])
	}
	return sub(ctx, e, f, pos[1:])
}

// open opens the history --db names.
func (f *historyFlags) open(ctx context.Context) (*history.Store, error) {
	if strings.TrimSpace(f.db) == "" {
		return nil, usagef("no history: give --db FILE (SQLite) or --db postgres://..., or set ORTEL_HISTORY")
	}
	return history.Open(ctx, f.db)
}

func historyList(ctx context.Context, e *env, f *historyFlags, pos []string) error {
	if len(pos) != 0 {
		return usagef("list takes no arguments, got %d", len(pos))
	}
	format, err := checkFormat(f.format, "text", "json")
	if err != nil {
		return err
	}
	s, err := f.open(ctx)
	if err != nil {
		return err
	}
	defer s.Close()
	series, err := s.Series(ctx)
	if err != nil {
		return err
	}
	if format == "json" {
		return writeJSON(e.stdout, historyListResult{History: s.Where(), Series: listed(series)})
	}
	if len(series) == 0 {
		fmt.Fprintf(e.stdout, "history %s has no runs yet: record some with ortel bench --history %s\n", s.Where(), s.Where())
		return nil
	}
	return history.WriteList(e.stdout, series)
}

func historyShow(ctx context.Context, e *env, f *historyFlags, pos []string) error {
	if len(pos) != 1 {
		return usagef("show wants one MODEL, got %d arguments", len(pos))
	}
	format, err := checkFormat(f.format, "text", "json", "html")
	if err != nil {
		return err
	}
	f.model = pos[0]
	cfg, err := f.config()
	if err != nil {
		return err
	}
	s, err := f.open(ctx)
	if err != nil {
		return err
	}
	defer s.Close()
	series, err := history.Analyze(ctx, s, cfg)
	if err != nil {
		return err
	}
	return f.render(e, format, series, nil)
}

// render writes series (and, for check, verdicts) in format to --file or
// stdout.
func (f *historyFlags) render(e *env, format string, series []history.Series, verdicts []history.Verdict) error {
	w := e.stdout
	if f.file != "" {
		out, err := os.Create(f.file)
		if err != nil {
			return fmt.Errorf("create %q: %w", f.file, err)
		}
		defer out.Close()
		w = e.redact.Writer(out)
	}
	var err error
	switch {
	case format == "json" && verdicts != nil:
		err = writeJSON(w, struct {
			Verdicts []history.Verdict `json:"verdicts"`
		}{verdicts})
	case format == "json":
		err = writeJSON(w, struct {
			Series []history.Series `json:"series"`
		}{series})
	case format == "html":
		err = report.WriteSeriesHTML(w, history.Page(series, "ortel "+version))
	case format == "md":
		err = history.WriteCheckMarkdown(w, series, verdicts)
	case verdicts != nil:
		err = history.WriteCheckText(w, series, verdicts)
	default:
		err = history.WriteText(w, series)
	}
	if err == nil && f.file != "" {
		fmt.Fprintf(e.stderr, "ortel history: wrote %s\n", f.file)
	}
	return err
}

func writeJSON(w interface{ Write([]byte) (int, error) }, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}

func historyCheck(ctx context.Context, e *env, f *historyFlags, pos []string) error {
	format, err := checkFormat(f.format, "text", "md", "json")
	if err != nil {
		return err
	}
	cfg, err := f.config()
	if err != nil {
		return err
	}
	var candidates []history.Run
	for _, p := range pos {
		r, err := report.Read(p)
		if err != nil {
			return err
		}
		run, err := history.FromReport(r, history.CommitFromEnv(os.Getenv), p)
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		candidates = append(candidates, run)
	}
	s, err := f.open(ctx)
	if err != nil {
		return err
	}
	defer s.Close()
	series, err := history.Analyze(ctx, s, cfg, candidates...)
	if err != nil {
		return err
	}
	verdicts := history.Check(series, cfg)
	if err := f.render(e, format, series, verdicts); err != nil {
		return err
	}
	var worse []string
	for i, v := range verdicts {
		if v.Status == history.StatusRegression {
			worse = append(worse, fmt.Sprintf("%s %s: %s", series[i].Model, v.Metric, series[i].Headline(*v.Change)))
		}
	}
	if len(worse) > 0 {
		return fmt.Errorf("%w: %s", errRegression, strings.Join(worse, "; "))
	}
	return nil
}

func historyImport(ctx context.Context, e *env, f *historyFlags, pos []string) error {
	if len(pos) == 0 {
		return usagef("import wants report.json files or folders holding them")
	}
	format, err := checkFormat(f.format, "text", "json")
	if err != nil {
		return err
	}
	var files []string
	for _, p := range pos {
		found, err := reportFiles(p)
		if err != nil {
			return err
		}
		files = append(files, found...)
	}
	s, err := f.open(ctx)
	if err != nil {
		return err
	}
	defer s.Close()
	result := historyImportResult{History: s.Where(), Reports: []importedReport{}}
	var errs []error
	for _, p := range files {
		id, ok, err := recordReport(ctx, s, p, f.commit)
		result.add(p, id, ok, err)
		if err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		err = fmt.Errorf("%s not imported: %w", report.Plural(len(errs), "report"), errors.Join(errs...))
	}
	if format == "json" {
		return result.print(e, err)
	}
	fmt.Fprintf(e.stdout, "imported %s into %s (%d already there)\n", report.Plural(result.Imported, "run"), s.Where(), result.AlreadyThere)
	return err
}

// reportFiles returns p if it is a file, else the report.json files under
// the folder p.
func reportFiles(p string) ([]string, error) {
	fi, err := os.Stat(p)
	if err != nil {
		return nil, fmt.Errorf("import %q: %w", p, err)
	}
	if !fi.IsDir() {
		return []string{p}, nil
	}
	var out []string
	err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && d.Name() == "report.json" {
			out = append(out, path)
		}
		return err
	})
	if err == nil && len(out) == 0 {
		err = errors.New("no report.json in it")
	}
	if err != nil {
		return nil, fmt.Errorf("import %q: %w", p, err)
	}
	return out, nil
}

// recordReport records the report at path: its run's id, and whether it
// was added (false: the history held it already).
func recordReport(ctx context.Context, s *history.Store, path, commit string) (int64, bool, error) {
	r, err := report.Read(path)
	if err != nil {
		return 0, false, err
	}
	run, err := history.FromReport(r, commit, path)
	if err != nil {
		return 0, false, fmt.Errorf("%s: %w", path, err)
	}
	return s.Record(ctx, run)
}

// recordHistory records a bench's report into the history at db ("" does
// nothing), with the commit named by the environment.
func recordHistory(ctx context.Context, e *env, db string, rep *report.Report) error {
	if strings.TrimSpace(db) == "" {
		return nil
	}
	s, err := history.Open(ctx, db)
	if err != nil {
		return fmt.Errorf("--history: %w", err)
	}
	defer s.Close()
	run, err := history.FromReport(rep, history.CommitFromEnv(os.Getenv), "bench")
	if err != nil {
		return fmt.Errorf("--history: %w", err)
	}
	id, _, err := s.Record(ctx, run)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stderr, "ortel bench: recorded as run %d in history %s\n", id, s.Where())
	return nil
}

func historyPrune(ctx context.Context, e *env, f *historyFlags, pos []string) error {
	if len(pos) != 0 {
		return usagef("prune takes no arguments, got %d", len(pos))
	}
	format, err := checkFormat(f.format, "text", "json")
	if err != nil {
		return err
	}
	var cutoff time.Time
	if f.before != "" {
		t, err := parseCutoff(f.before)
		if err != nil {
			return usagef("--before %q: %v", f.before, err)
		}
		cutoff = t
	}
	if cutoff.IsZero() && f.keep <= 0 {
		return usagef("prune needs --before T (a date or an age such as 90d) or --keep N (runs per series)")
	}
	s, err := f.open(ctx)
	if err != nil {
		return err
	}
	defer s.Close()
	n, err := s.Prune(ctx, cutoff, f.keep)
	if err != nil {
		return err
	}
	if format == "text" {
		fmt.Fprintf(e.stdout, "pruned %s from %s\n", report.Plural(n, "run"), s.Where())
		return nil
	}
	left, err := s.Series(ctx)
	if err != nil {
		return err
	}
	res := historyPruneResult{History: s.Where(), Removed: n, Keep: f.keep, Series: listed(left)}
	if !cutoff.IsZero() {
		res.Before = &cutoff
	}
	return writeJSON(e.stdout, res)
}

// parseCutoff reads a date (2026-01-31), an RFC 3339 time or an age (90d,
// 36h) into a time.
func parseCutoff(v string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, v); err == nil {
		return t, nil
	}
	if t, err := time.Parse("2006-01-02", v); err == nil {
		return t, nil
	}
	d, err := parseAge(v)
	if err != nil {
		return time.Time{}, errors.New("want a date (2026-01-31), an RFC 3339 time or an age (90d, 36h)")
	}
	return time.Now().Add(-d), nil
}

// parseAge reads a duration that may be in days: 7d, 36h, 90m.
func parseAge(v string) (time.Duration, error) {
	if n, ok := strings.CutSuffix(v, "d"); ok {
		days, err := strconv.ParseFloat(n, 64)
		if err != nil || days <= 0 {
			return 0, fmt.Errorf("%q: want a positive number of days, such as 7d", v)
		}
		return time.Duration(days * float64(24*time.Hour)), nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%q: want a positive duration, such as 7d or 36h", v)
	}
	return d, nil
}

func historyPrometheus(ctx context.Context, e *env, f *historyFlags, pos []string) error {
	if len(pos) != 0 {
		return usagef("prometheus takes no arguments, got %d (name the server with --url)", len(pos))
	}
	format, err := checkFormat(f.format, "text", "json", "html")
	if err != nil {
		return err
	}
	q := history.PromQuery{URL: f.url, Model: f.model, Step: f.step, Labels: f.labels, End: time.Now()}
	if f.rangeD == 0 {
		f.rangeD = 7 * 24 * time.Hour
	}
	q.Start = q.End.Add(-f.rangeD)
	if f.quantile != "mean" {
		if q.Quantile, err = strconv.ParseFloat(f.quantile, 64); err != nil || q.Quantile <= 0 {
			return usagef("--quantile %q: want a fraction such as 0.99, or mean", f.quantile)
		}
	}
	if err := q.Validate(); err != nil {
		return usage(err)
	}
	f.metric, f.model = history.PromMetric(q), ""
	cfg, err := f.config()
	if err != nil {
		return err
	}
	runs, err := history.QueryPrometheus(ctx, &http.Client{Timeout: time.Minute}, q)
	if err != nil {
		return err
	}
	if len(runs) == 0 {
		return fmt.Errorf("the Prometheus at %s returned no points for %s", q.URL, q.PromQL())
	}
	series, err := history.AnalyzeRuns(runs, cfg)
	if err != nil {
		return err
	}
	return f.render(e, format, series, nil)
}

// historyArgs completes history's arguments: the subcommand, then
// report files for check and import.
func historyArgs(before []string) completion {
	if len(before) == 0 {
		var subs []string
		for s := range historySubcommands {
			subs = append(subs, s)
		}
		slices.Sort(subs)
		return completion{words: subs}
	}
	if before[0] == "check" || before[0] == "import" {
		return completion{files: true}
	}
	return completion{}
}
