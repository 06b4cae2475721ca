package profreport

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/ortel-dev/ortel/instrument"
	"github.com/ortel-dev/ortel/instrument/profile"
	"github.com/ortel-dev/ortel/internal/profimport"
	"github.com/ortel-dev/ortel/internal/report"
	"github.com/ortel-dev/ortel/internal/stats"
)

// Kind is what a JSON file holds, told by its content.
type Kind int

// The kinds Sniff tells apart.
const (
	// KindUnknown is neither: not JSON, or JSON of another shape.
	KindUnknown Kind = iota
	// KindProfile is an ONNX Runtime profile: a JSON array of trace events.
	KindProfile
	// KindReport is an ortel report: a JSON object with a schema_version.
	KindReport
)

// sniffBytes is how much of a file Sniff reads.
const sniffBytes = 4096

var (
	schemaKey = regexp.MustCompile(`^\{\s*"schema_version"\s*:`)
	eventKey  = regexp.MustCompile(`^\[\s*(\]|\{\s*"(cat|pid|tid|ts|dur|ph|name|args)"\s*:)`)
)

// Sniff reads the start of r and says whether it is an ONNX Runtime
// profile (a JSON array whose first element is a trace event, with keys
// such as "cat", "ph" and "ts") or an ortel report (a JSON object that
// starts with "schema_version", as report.Write writes it). A UTF-8 byte
// order mark and white space before either are skipped. The file's name
// plays no part.
func Sniff(r io.Reader) (Kind, error) {
	b, err := io.ReadAll(io.LimitReader(r, sniffBytes))
	if err != nil {
		return KindUnknown, err
	}
	return sniff(b), nil
}

func sniff(b []byte) Kind {
	b = bytes.TrimLeft(bytes.TrimPrefix(b, []byte("\xef\xbb\xbf")), " \t\r\n")
	switch {
	case eventKey.Match(b):
		return KindProfile
	case schemaKey.Match(b):
		return KindReport
	}
	return KindUnknown
}

// SniffFile is Sniff on the file at path.
func SniffFile(path string) (Kind, error) {
	f, err := os.Open(path)
	if err != nil {
		return KindUnknown, err
	}
	defer f.Close()
	return Sniff(f)
}

// Source layouts: what kind of profile file a report was made from.
const (
	// LayoutSession is a session-level profile: SessionOptions.EnableProfiling,
	// model loading, session initialization and every run until profiling
	// ended, in one file.
	LayoutSession = "session"
	// LayoutRun is run-level profiles (RunOptions, ONNX Runtime 1.25 and
	// later): one file per profiled run, without the session's events.
	LayoutRun = "run"
)

// Config configures Build. Its zero value is valid.
type Config struct {
	// ModelName is the report's model name; default: the base name of
	// the first profile without ORT's time stamp.
	ModelName string
}

// ErrNoRuns is returned (wrapped) by Build when the profiles hold no
// model_run event that encloses an operator: nothing to report on.
var ErrNoRuns = errors.New("no profiled run (no model_run event enclosing operator events)")

// Build reads the profiles at paths (one session-level profile, or the
// run-level files of one session, in any order) and returns their report:
// the operators of every run (top operators by self time, the memory
// arena, the last run's timeline), the runs' durations as the latency
// samples, the session's loading and initialization when the profile has
// them, and a Source section saying where the numbers came from. Host and
// Runtime are left empty: a profile does not say them. The analysis is
// not run: that is package analysis's work.
func Build(ctx context.Context, paths []string, cfg Config) (*report.Report, error) {
	if len(paths) == 0 {
		return nil, errors.New("no profile to read")
	}
	b := &builder{ops: NewCollector(), src: &report.Source{Kind: report.SourceProfile}}
	for _, p := range paths {
		if err := b.file(ctx, p); err != nil {
			return nil, err
		}
	}
	if len(b.runs) == 0 {
		return nil, fmt.Errorf("profile %q: %w", strings.Join(paths, ", "), ErrNoRuns)
	}
	return b.report(paths, cfg), nil
}

type builder struct {
	ops      *Collector
	src      *report.Source
	runs     []run
	load     float64 // s; model_loading_uri
	init     float64 // s; session_initialization
	sessions int     // files with session events
	next     int64   // index of the next run across files
}

// run is one profiled run: when it started (wall clock) and how long it took.
type run struct {
	start time.Time
	dur   float64 // s
}

// file reads one profile.
func (b *builder) file(ctx context.Context, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("read profile %q: %w", path, err)
	}
	defer f.Close()
	origin, from := profimport.StartTime(path)
	pf := report.ProfileFile{Path: path, Start: origin, StartFrom: from}
	if err := b.read(ctx, f, &pf); err != nil {
		return fmt.Errorf("read profile %q: %w", path, err)
	}
	b.src.Files = append(b.src.Files, pf)
	return nil
}

// read reads one profile from r; pf has its path and start, and gets what
// the file held.
func (b *builder) read(ctx context.Context, r io.Reader, pf *report.ProfileFile) error {
	origin := pf.Start
	g := profile.NewGrouper()
	defer g.Reset()
	rd := profile.NewReader(bufio.NewReaderSize(r, 1<<16))
	at := func(ts int64) time.Time { return origin.Add(time.Duration(ts) * time.Microsecond) }
	session := false
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		ev, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		if pf.PID == 0 && ev.PID != 0 {
			pf.PID = ev.PID
		}
		switch {
		case ev.Category == "Session" && ev.Name == "model_loading_uri":
			b.load += float64(ev.Dur) / 1e6
			session = true
			continue
		case ev.Category == "Session" && ev.Name == "session_initialization":
			b.init += float64(ev.Dur) / 1e6
			session = true
			continue
		case ev.Category == "Node" && !ev.IsKernel():
			continue
		case ev.Category != "Node" && ev.Category != "Session":
			continue
		case ev.Category == "Session" && ev.Name != "model_run" && !ev.IsExecute():
			continue
		}
		grp, err := g.Add(ev)
		if err != nil {
			return err
		}
		if grp == nil {
			continue
		}
		idx := b.next
		b.next++
		pf.Runs++
		b.runs = append(b.runs, run{start: at(grp.Run.TS), dur: float64(grp.Run.Dur) / 1e6})
		for i := range grp.Events {
			e := &grp.Events[i]
			if !e.IsKernel() {
				continue
			}
			pl := grp.Placements[i]
			b.ops.Observe(instrument.ProfiledNode{
				Run: idx, Start: at(e.TS), End: at(e.TS + e.Dur), Node: *e,
				Self: time.Duration(pl.Self) * time.Microsecond, Depth: pl.Depth,
			})
		}
	}
	outside, err := g.Outside()
	if err != nil {
		return err
	}
	pf.OperatorsOutside = outside
	pf.Repairs = rd.WarningCount()
	pf.Rejected = rd.RejectedCount()
	if session {
		b.sessions++
	}
	return nil
}

// stampSuffix is ORT's time stamp at the end of a profile's file name.
var stampSuffix = regexp.MustCompile(`_*\d{4}-\d{2}-\d{2}_\d{2}-\d{2}-\d{2}(_\d{3})?$`)

// defaultName names the model after the first profile's file.
func defaultName(path string) string {
	base := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	if s := strings.TrimRight(stampSuffix.ReplaceAllString(base, ""), "_-"); s != "" {
		return s
	}
	return "model"
}

func (b *builder) report(paths []string, cfg Config) *report.Report {
	slices.SortStableFunc(b.runs, func(x, y run) int { return x.start.Compare(y.start) })
	lat := make([]float64, len(b.runs))
	for i, r := range b.runs {
		lat[i] = r.dur
	}
	name := cfg.ModelName
	if name == "" {
		name = defaultName(paths[0])
	}
	src := b.src
	src.Layout = LayoutRun
	if b.sessions > 0 {
		src.Layout = LayoutSession
	}
	src.Latency = fmt.Sprintf("the %d profiled runs' model_run events: real run times, including the profiler's overhead (each operator's event is timed and recorded), so slower than unprofiled runs", len(lat))
	rep := &report.Report{
		SchemaVersion: report.SchemaVersion,
		CreatedAt:     b.runs[0].start,
		Model:         report.Model{Name: name},
		Config:        report.Config{Runs: len(lat), ProfileRuns: len(lat)},
		Latency:       report.Latency{Summary: stats.Summarize(lat), Samples: lat},
		Operators:     b.ops.Summary(),
		Source:        src,
	}
	var provs []string
	for p := range rep.Operators.NodesByProvider {
		provs = append(provs, p)
	}
	slices.Sort(provs)
	rep.Runtime.Providers = provs
	if b.sessions > 0 {
		rep.Session.CreationS = b.load + b.init
		rep.Session.FirstRunS = lat[0]
		src.ModelLoadS, src.InitializationS = b.load, b.init
	}
	for _, f := range src.Files {
		if f.OperatorsOutside > 0 {
			rep.Notes = append(rep.Notes, fmt.Sprintf("%s: %d operator events lie in no model_run (a cut profile) and are not counted", f.Path, f.OperatorsOutside))
		}
		if f.Repairs > 0 || f.Rejected > 0 {
			rep.Notes = append(rep.Notes, fmt.Sprintf("%s: the reader repaired %d places and skipped %d events with impossible times (ortel import lists them)", f.Path, f.Repairs, f.Rejected))
		}
	}
	rep.Notes = append(rep.Notes, "made from an ONNX Runtime profile: the latency is that of "+src.Latency+
		"; a profile holds no unprofiled runs, throughput, machine or ONNX Runtime version")
	return rep
}

// AssumeHere records that the profile ran on this machine (host) with the
// ONNX Runtime version ortel loads here, as `ortel report --model` takes
// it: the machine peaks for the roofline are then this machine's. The
// report's Source says so.
func AssumeHere(rep *report.Report, host report.Host, ortVersion string) {
	rep.Host = host
	rep.Runtime.ORTVersion = ortVersion
	if rep.Source != nil {
		rep.Source.Assumed = append(rep.Source.Assumed, fmt.Sprintf(
			"the profile ran on this machine (%s, %d logical CPUs) with ONNX Runtime %s: the roofline compares its operators with this machine's peaks (give --peak-flops and --peak-bw for another machine)",
			host.CPUModel, host.LogicalCPUs, ortVersion))
	}
}
