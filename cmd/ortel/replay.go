package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/ortel-dev/ortel/internal/telemetry"
)

const replayUsage = `Usage:
  ortel replay [flags] DIR|FILE...

Sends OTLP/JSON lines files to a collector: the spool a command wrote when
its collector was down (OUT/spool/), the embedded default's traces.jsonl and
metrics.jsonl, or the collector file exporter's output. A folder means every
.jsonl file in it. Each record (line) is one export request, sent in order,
once: progress is kept in FILE.replayed after each record, so a replay that
stops part way (collector down again) can simply be run again, and one run
after more records were appended sends only those.

The collector, protocol, headers and TLS come from the OTEL_* variables, as
for every command (ortel doctor shows them).

Flags:
  --otlp-endpoint URL send OTLP here (default: OTEL_EXPORTER_OTLP_ENDPOINT)
  --export-timeout D  give up on one OTLP export, and on a dead collector at exit,
                      after D (default: OTEL_EXPORTER_OTLP_TIMEOUT, else 10s)

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
		usage:   replayUsage,
		run:     runReplay,
	}
}

func runReplay(ctx context.Context, e *env, args []string) error {
	fs := flag.NewFlagSet("replay", flag.ContinueOnError)
	var endpoint string
	var exportTimeout time.Duration
	fs.StringVar(&endpoint, "otlp-endpoint", "", "")
	fs.DurationVar(&exportTimeout, "export-timeout", 0, "")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if err := checkExportTimeout(exportTimeout); err != nil {
		return err
	}
	if len(pos) == 0 {
		return usagef("replay needs a folder or file to send")
	}
	cfg := telemetryConfig("replay", "")
	cfg.Endpoint, cfg.ExportTimeout = endpoint, exportTimeout
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
		if err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "%s: sent %d %s records", f, res.Sent, res.Signal)
		if res.Earlier > 0 {
			fmt.Fprintf(e.stdout, " (%d sent by an earlier replay)", res.Earlier)
		}
		fmt.Fprintln(e.stdout)
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
