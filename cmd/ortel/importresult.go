package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"time"

	"go.opentelemetry.io/otel/sdk/resource"

	"github.com/ortel-dev/ortel/internal/profimport"
)

// importResult is what ortel import --format json prints: one object.
type importResult struct {
	Profiles []importedProfile `json:"profiles"`
	// Spans is every span written, over all profiles.
	Spans int64 `json:"spans"`
	// Output is the folder of TracesFile and MetricsFile (traces to
	// files), or Endpoint where the spans were sent.
	Output      string `json:"output,omitempty"`
	TracesFile  string `json:"traces_file,omitempty"`
	MetricsFile string `json:"metrics_file,omitempty"`
	Endpoint    string `json:"endpoint,omitempty"`
	// Resource is the resource the spans and metrics carry.
	Resource map[string]string `json:"resource"`
	// Error is why the import failed (exit 1), absent when it did not.
	Error string `json:"error,omitempty"`
}

// importedProfile is one profile's counts: what was written and lost.
type importedProfile struct {
	Path           string `json:"path"`
	Runs           int64  `json:"runs"`
	OperatorSpans  int64  `json:"operator_spans"`
	OperatorEvents int64  `json:"operator_events"`
	OtherSpans     int64  `json:"other_spans"`
	// Lost: operator events in no run, and events with impossible times;
	// Repairs are the places the reader repaired.
	OutsideRuns int64 `json:"operators_outside_runs"`
	Rejected    int   `json:"rejected_events"`
	Repairs     int   `json:"repairs"`
}

func (r *importResult) add(path string, st profimport.Stats) {
	r.Spans += st.Spans()
	r.Profiles = append(r.Profiles, importedProfile{
		Path: path, Runs: st.Runs, OperatorSpans: st.Nodes, OperatorEvents: st.NodeEvents, OtherSpans: st.Other,
		OutsideRuns: st.Outside, Rejected: st.RejectedCount, Repairs: st.WarningCount,
	})
}

// print writes the result: the JSON object, or the text summary line.
func (r *importResult) print(e *env, format string, err error) error {
	if format == "json" {
		if err != nil {
			r.Error = e.redact.Redact(err.Error())
		}
		b, _ := json.MarshalIndent(r, "", "  ")
		_, werr := fmt.Fprintf(e.stdout, "%s\n", b)
		return werr
	}
	switch {
	case r.Spans == 0:
	case r.TracesFile != "":
		fmt.Fprintf(e.stdout, "wrote %d spans to %s and the metrics to %s\n", r.Spans, r.TracesFile, r.MetricsFile)
	default:
		fmt.Fprintf(e.stdout, "sent %d spans to %s (each batch acknowledged)\n", r.Spans, r.Endpoint)
	}
	return nil
}

// resourceOf is the resource of the imported spans and metrics: the
// profiled process (profimport.Resource), with --service-name and
// --resource over the environment over the profile.
func (a *importAction) resourceOf(ctx context.Context, e *env, pos []string, start time.Time) (*resource.Resource, error) {
	cfg := profimport.ResourceConfig{ServiceName: a.serviceName, Profiles: pos, Start: start}
	for _, kv := range a.resource {
		attr, err := profimport.ParseResourceAttr(kv)
		if err != nil {
			return nil, usagef("--resource %v", err)
		}
		cfg.Attrs = append(cfg.Attrs, attr)
	}
	res, notes, err := profimport.Resource(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("resource of the imported spans: %w", err)
	}
	for _, n := range notes {
		fmt.Fprintf(e.stderr, "ortel import: %s\n", n)
	}
	return res, nil
}

// resourceMap is res as strings, for the JSON result.
func resourceMap(res *resource.Resource) map[string]string {
	m := map[string]string{}
	for _, kv := range res.Attributes() {
		m[string(kv.Key)] = kv.Value.String()
	}
	return m
}

// nextFreeOut is where import writes: out itself, unless out is the
// default folder and already holds an import (and neither --append nor
// --overwrite says what to do with it): then the first of out-2, out-3,
// ... that is absent or empty, said on stderr.
func nextFreeOut(e *env, out string, told bool) string {
	if told || out != commandTelemetry("import").out || emptyOrAbsent(out) {
		return out
	}
	for n := 2; n < 10000; n++ {
		dir := out + "-" + strconv.Itoa(n)
		if emptyOrAbsent(dir) {
			fmt.Fprintf(e.stderr, "ortel import: %s already holds an import: writing to %s (--out DIR picks the folder, --append adds to it)\n", out, dir)
			return dir
		}
	}
	return out // prepareOut refuses it, saying why
}

func emptyOrAbsent(dir string) bool {
	ents, err := os.ReadDir(dir)
	return os.IsNotExist(err) || (err == nil && len(ents) == 0)
}
