package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ortel-dev/ortel/internal/telemetry"
)

const replayIntro = `Usage:
  ortel replay [flags] DIR|FILE...

Sends OTLP/JSON lines files to a collector: the spool a command wrote when
its collector was down (OUT/spool/), the embedded default's traces.jsonl and
metrics.jsonl, or the collector file exporter's output. A folder means every
.jsonl file in it. Each record (line) is one export request, sent in order,
once:
  - progress is committed to FILE.replayed after each record the collector
    accepted, before the next is sent, so a replay that stops part way
    (collector down again, Ctrl-C) can simply be run again, and one run after
    more records were appended sends only those;
  - the progress names the file it belongs to (its first record's SHA-256,
    device and inode): a FILE.replayed left by a removed or replaced file is
    ignored, so a new file is sent whole, never skipped;
  - one replay at a time per file: a second one started while the first
    sends the file refuses at once (exit 1) and can be run again after.
A damaged record (a line that is not a whole OTLP/JSON request, such as one
cut by a crash before this ortel repaired its files) is skipped and counted,
never sent; a last line without its line end (a record still being written)
waits for a later replay.

The collector, protocol, headers and TLS come from the OTEL_* variables, as
for every command (ortel doctor shows them).
`

const replayOutro = `
Exit code 1 when a record cannot be sent or read: everything before it was
sent and is recorded as sent.

Examples:
  OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4317 ortel replay ortel-out/agent/spool
  ortel replay --otlp-endpoint http://127.0.0.1:4317 ortel-out/det-20261128-050000/traces.jsonl
`

func replayCommand() *command {
	return &command{
		name:    "replay",
		summary: "send a spool or any OTLP/JSON lines output to a collector, once per record",
		intro:   replayIntro,
		outro:   replayOutro,
		args:    anyFile,
		new:     func() action { return new(replayAction) },
	}
}

// replayAction is one ortel replay.
type replayAction struct {
	export exportFlags
	format string
}

func (a *replayAction) flags(fs *flagSet) {
	a.export.register(fs, exportTimeout)
	fs.stringFlag(&a.format, "format", "F", "text", "text (default), or json: one object on stdout, what each file sent")
	fs.choices("format", "text", "json")
}

func (a *replayAction) run(ctx context.Context, e *env, pos []string) error {
	format, err := checkFormat(a.format, "text", "json")
	if err != nil {
		return err
	}
	if err := a.export.validate(); err != nil {
		return err
	}
	if len(pos) == 0 {
		return usagef("replay needs a folder or file to send")
	}
	cfg := telemetryConfig("replay", "")
	a.export.apply(&cfg)
	r, err := telemetry.Resolve(cfg)
	if err != nil {
		return usagef("%v", err)
	}
	if telemetryResolved != nil {
		telemetryResolved("replay", r)
	}
	for _, w := range r.Warnings {
		fmt.Fprintf(e.stderr, "ortel replay: warning: %s\n", w)
	}
	if r.Mode != telemetry.ModeOTLP {
		return usagef("replay sends to a collector, and none is configured: set OTEL_EXPORTER_OTLP_ENDPOINT or --otlp-endpoint")
	}
	files, err := replayFiles(pos)
	if err != nil {
		return err
	}
	result := replayResult{Files: []replayedFile{}}
	for i, f := range files {
		res, err := telemetry.Replay(ctx, r, f)
		for _, n := range res.Notes {
			fmt.Fprintf(e.stderr, "ortel replay: %s\n", n)
		}
		result.add(f, res, err)
		if err != nil {
			result.NotTried = files[i+1:]
			return result.finish(e, format, err)
		}
		if format == "text" {
			printReplayed(e, f, res)
		}
		if res.Damaged > 0 {
			fmt.Fprintf(e.stderr, "ortel replay: %s: skipped %d damaged records, not sent (the first: %s)\n", f, res.Damaged, res.FirstDamaged)
		}
		if res.Incomplete > 0 {
			fmt.Fprintf(e.stderr, "ortel replay: %s: the last %d bytes are a record without its line end (still being written, or cut by a crash): not sent; a later replay sends it once it is whole\n", f, res.Incomplete)
		}
	}
	return result.finish(e, format, nil)
}

// printReplayed writes a file's text line on stdout: what it sent.
func printReplayed(e *env, f string, res telemetry.ReplayResult) {
	if res.Signal == "" {
		fmt.Fprintf(e.stdout, "%s: holds no record yet, nothing to send\n", f)
		return
	}
	fmt.Fprintf(e.stdout, "%s: sent %d %s records", f, res.Sent, res.Signal)
	if res.Earlier > 0 {
		fmt.Fprintf(e.stdout, " (%d sent or skipped by an earlier replay)", res.Earlier)
	}
	fmt.Fprintln(e.stdout)
}

// replayResult is what ortel replay --format json prints: one object,
// each file's counts and the totals.
type replayResult struct {
	Files []replayedFile `json:"files"`
	// Sent, Earlier, Damaged: the files' counts added up.
	Sent    int `json:"sent"`
	Earlier int `json:"sent_earlier"`
	Damaged int `json:"damaged"`
	// NotTried are the files left untouched after the one that failed.
	NotTried []string `json:"not_tried,omitempty"`
	// Error is why the replay stopped (exit 1), absent when it did not.
	Error string `json:"error,omitempty"`
}

// replayedFile is one file's replay: a record is one export request.
type replayedFile struct {
	Path string `json:"path"`
	// Signal is traces or metrics, absent for a file with no record yet.
	Signal string `json:"signal,omitempty"`
	// Sent now; Earlier, by earlier replays (skipped now); Damaged,
	// skipped and never sent; IncompleteBytes, a last line without its
	// line end, left for a later replay.
	Sent            int    `json:"sent"`
	Earlier         int    `json:"sent_earlier"`
	Damaged         int    `json:"damaged"`
	FirstDamaged    string `json:"first_damaged,omitempty"`
	IncompleteBytes int64  `json:"incomplete_bytes"`
	// Error is why this file's replay stopped: the records after Sent
	// were not sent.
	Error string `json:"error,omitempty"`
}

func (r *replayResult) add(path string, res telemetry.ReplayResult, err error) {
	f := replayedFile{Path: path, Signal: res.Signal, Sent: res.Sent, Earlier: res.Earlier,
		Damaged: res.Damaged, FirstDamaged: res.FirstDamaged, IncompleteBytes: res.Incomplete}
	if err != nil {
		f.Error = err.Error()
	}
	r.Files = append(r.Files, f)
	r.Sent += res.Sent
	r.Earlier += res.Earlier
	r.Damaged += res.Damaged
}

// finish writes the JSON object (with err, if any) and returns err.
func (r *replayResult) finish(e *env, format string, err error) error {
	if format != "json" {
		return err
	}
	if err != nil {
		r.Error = err.Error()
	}
	if werr := writeJSON(e.stdout, r); werr != nil && err == nil {
		return werr
	}
	return err
}

// replayFiles expands folders to their .jsonl files, sorted.
func replayFiles(args []string) ([]string, error) {
	var files []string
	for _, a := range args {
		st, err := os.Stat(a)
		if err != nil {
			return nil, err
		}
		if !st.IsDir() {
			files = append(files, a)
			continue
		}
		entries, err := os.ReadDir(a)
		if err != nil {
			return nil, err
		}
		var found []string
		for _, en := range entries {
			if !en.IsDir() && strings.HasSuffix(en.Name(), ".jsonl") {
				found = append(found, filepath.Join(a, en.Name()))
			}
		}
		if len(found) == 0 {
			return nil, errors.New("replay: folder " + a + " holds no .jsonl file")
		}
		slices.Sort(found)
		files = append(files, found...)
	}
	return files, nil
}
