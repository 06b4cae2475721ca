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
type replayAction struct{ export exportFlags }

func (a *replayAction) flags(fs *flagSet) { a.export.register(fs, exportTimeout) }

func (a *replayAction) run(ctx context.Context, e *env, pos []string) error {
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
	for _, f := range files {
		res, err := telemetry.Replay(ctx, r, f)
		for _, n := range res.Notes {
			fmt.Fprintf(e.stderr, "ortel replay: %s\n", n)
		}
		if err != nil {
			return err
		}
		if res.Signal == "" {
			fmt.Fprintf(e.stdout, "%s: holds no record yet, nothing to send\n", f)
			continue
		}
		fmt.Fprintf(e.stdout, "%s: sent %d %s records", f, res.Sent, res.Signal)
		if res.Earlier > 0 {
			fmt.Fprintf(e.stdout, " (%d sent or skipped by an earlier replay)", res.Earlier)
		}
		fmt.Fprintln(e.stdout)
		if res.Damaged > 0 {
			fmt.Fprintf(e.stderr, "ortel replay: %s: skipped %d damaged records, not sent (the first: %s)\n", f, res.Damaged, res.FirstDamaged)
		}
		if res.Incomplete > 0 {
			fmt.Fprintf(e.stderr, "ortel replay: %s: the last %d bytes are a record without its line end (still being written, or cut by a crash): not sent; a later replay sends it once it is whole\n", f, res.Incomplete)
		}
	}
	return nil
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
