package main

import (
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/ortel-dev/ortel/internal/attach"
	"github.com/ortel-dev/ortel/internal/hardware"
)

// registerTextOrJSON registers --format for a command that prints its
// result as text or, for scripts, as one JSON document on stdout; what
// says what is printed.
func registerTextOrJSON(fs *flagSet, p *string, what string) {
	fs.stringFlag(p, "format", "F", "text", "text (default) or json: "+what)
	fs.choices("format", "text", "json")
}

// checkTextOrJSON checks a --format that registerTextOrJSON registered.
func checkTextOrJSON(format string) error {
	if format != "text" && format != "json" {
		return usagef("--format %q: want text or json", format)
	}
	return nil
}

// printJSON writes v as indented JSON and a newline.
func printJSON(w io.Writer, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}

// versionInfo is ortel version --format json.
type versionInfo struct {
	Ortel       string      `json:"ortel"`
	Instrument  string      `json:"instrument"`
	Go          string      `json:"go"`
	OS          string      `json:"os"`
	Arch        string      `json:"arch"`
	ONNXRuntime runtimeInfo `json:"onnxruntime"`
}

// runtimeInfo is the ONNX Runtime library ortel finds, or why none.
type runtimeInfo struct {
	Loaded  bool   `json:"loaded"`
	Version string `json:"version,omitempty"`
	Library string `json:"library,omitempty"`
	Error   string `json:"error,omitempty"`
}

// attachSummary is what ortel attach --format json prints when it
// detaches: what the probes saw.
type attachSummary struct {
	DurationS       float64         `json:"duration_s"`
	StoppedBecause  string          `json:"stopped_because"`
	Runs            int64           `json:"runs"`
	FailedRuns      int64           `json:"failed_runs"`
	Sessions        int64           `json:"sessions"`
	LostRuns        int64           `json:"lost_runs"`
	MalformedEvents int64           `json:"malformed_events"`
	Targets         []attachTarget  `json:"targets"`
	Libraries       []attachLibrary `json:"libraries"`
}

// attachTarget is one process attach probed.
type attachTarget struct {
	PID       int      `json:"pid"`
	Exe       string   `json:"exe"`
	Libraries []string `json:"libraries"`
}

// attachLibrary is one ONNX Runtime library file the probes are on.
type attachLibrary struct {
	Path    string `json:"path"`
	Version string `json:"version"`
	BuildID string `json:"build_id,omitempty"`
}

func newAttachSummary(tr *attach.Tracer, took time.Duration, why string) attachSummary {
	st := tr.Stats()
	s := attachSummary{DurationS: took.Seconds(), StoppedBecause: why, Runs: st.Runs, FailedRuns: st.Errors,
		Sessions: st.Sessions, LostRuns: st.Lost, MalformedEvents: st.Bad,
		Targets: []attachTarget{}, Libraries: []attachLibrary{}}
	for _, tg := range tr.Targets() {
		t := attachTarget{PID: tg.PID, Exe: tg.Exe, Libraries: []string{}}
		for _, l := range tg.Libraries {
			t.Libraries = append(t.Libraries, l.Path)
		}
		s.Targets = append(s.Targets, t)
	}
	for _, o := range tr.Libraries() {
		s.Libraries = append(s.Libraries, attachLibrary{Path: o.Path, Version: o.Version, BuildID: o.BuildID})
	}
	return s
}

// agentSummary is what ortel agent --format json prints when it stops.
type agentSummary struct {
	DurationS            float64           `json:"duration_s"`
	MetricExports        int64             `json:"metric_exports"`
	MetricExportFailures int64             `json:"metric_export_failures"`
	MetricExportsSpooled int64             `json:"metric_exports_spooled"`
	PeakRSSBytes         int64             `json:"peak_rss_bytes"`
	Sources              []hardware.Status `json:"sources"`
}
