package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/ortel-dev/ortel/instrument/ortlib"
	"github.com/ortel-dev/ortel/internal/attach"
	"github.com/ortel-dev/ortel/internal/hardware"
	"github.com/ortel-dev/ortel/internal/models"
	"github.com/ortel-dev/ortel/internal/telemetry"
)

const doctorIntro = `Usage:
  ortel doctor [flags]

Says what ortel can use on this machine, and why not where it cannot:
  - the ONNX Runtime library (and every place looked at when it is missing)
  - every hardware source: cpu, memory, process, perf (hardware counters and
    software events), rapl, thermal, nvml
  - whether ortel attach can work here (eBPF uprobes), and why not
  - the OTLP export configuration resolved from the OTEL_* variables
    (header values are never printed), and per command (bench, agent,
    attach, import, replay) the folder, files or endpoints, metric interval
    and spool it uses with its default flags
  - which catalog models are fetched

With --otlp-endpoint, the export is resolved as if that endpoint were given.
`

const doctorOutro = `
Old spelling, still accepted with a notice: --json (now --format json).

Examples:
  ortel doctor
  OTEL_EXPORTER_OTLP_ENDPOINT=https://collector:4317 ortel doctor
`

func doctorCommand() *command {
	return &command{
		name:    "doctor",
		summary: "list what ortel can use here: ONNX Runtime, hardware sources, OTLP setup",
		intro:   doctorIntro,
		outro:   doctorOutro,
		args:    noArgs,
		new:     func() action { return new(doctorAction) },
	}
}

// doctorReport is what doctor found.
type doctorReport struct {
	ORT struct {
		Found   bool   `json:"found"`
		Path    string `json:"path,omitempty"`
		Version string `json:"version,omitempty"`
		// Source says where the library was found (ortel cache, npm or
		// pip package, system folder), Note warns about its version,
		// Skipped lists libraries passed over and why.
		Source  string   `json:"source,omitempty"`
		Note    string   `json:"note,omitempty"`
		Skipped []string `json:"skipped,omitempty"`
		Error   string   `json:"error,omitempty"`
	} `json:"onnxruntime"`
	Sources []hardware.Status `json:"hardware_sources"`
	Attach  attach.Status     `json:"attach"`
	OTLP    []string          `json:"otlp"`
	// Commands says, per command that exports telemetry, where it goes
	// with its default flags: folder, files or endpoints, interval, spool.
	Commands []doctorCmd   `json:"commands"`
	Models   []doctorModel `json:"models"`
}

type doctorCmd struct {
	Name  string   `json:"name"`
	Lines []string `json:"lines"`
}

// describeCommand says where command c's telemetry goes when it resolved
// r: what doctor prints for it, and what the doctor test compares with the
// configuration each command really resolves.
func describeCommand(c telemetryCommand, r telemetry.Resolved) []string {
	if c.name == "replay" {
		if r.Mode != telemetry.ModeOTLP {
			return []string{"refuses to run: no collector is configured (set OTEL_EXPORTER_OTLP_ENDPOINT or --otlp-endpoint)"}
		}
		return []string{"traces records: sent to " + r.Traces.Where(), "metrics records: sent to " + r.Metrics.Where()}
	}
	lines := []string{"folder: " + r.OutputDir + " (--out)", "service: " + r.ServiceName}
	return append(lines, r.Destinations()...)
}

// doctorCommands resolves each command's telemetry with its default flags
// (and --otlp-endpoint).
func doctorCommands(endpoint string) []doctorCmd {
	var out []doctorCmd
	for _, c := range telemetryCommands {
		cfg := telemetryConfig(c.name, c.out)
		cfg.Endpoint = endpoint
		r, err := telemetry.Resolve(cfg)
		lines := []string{"configuration error: " + fmt.Sprint(err)}
		if err == nil {
			lines = describeCommand(c, r)
		}
		out = append(out, doctorCmd{Name: c.name, Lines: lines})
	}
	return out
}

type doctorModel struct {
	Name    string `json:"name"`
	Fetched bool   `json:"fetched"`
	Path    string `json:"path"`
}

// doctorAction is one ortel doctor.
type doctorAction struct {
	format string
	export exportFlags
}

func (a *doctorAction) flags(fs *flagSet) {
	fs.stringFlag(&a.format, "format", "F", "text", "text (default) or json")
	fs.choices("format", "text", "json")
	fs.deprecate("json", "--format json", true, func(v string) error {
		on, err := strconv.ParseBool(v)
		if on {
			a.format = "json"
		}
		return err
	})
	a.export.register(fs, 0)
}

func (a *doctorAction) run(ctx context.Context, e *env, pos []string) error {
	if len(pos) > 0 {
		return usagef("doctor takes no arguments, got %q", pos[0])
	}
	format, err := checkFormat(a.format, "text", "json")
	if err != nil {
		return err
	}
	d := diagnose(ctx, a.export.endpoint)
	if format == "json" {
		b, _ := json.MarshalIndent(d, "", "  ")
		fmt.Fprintf(e.stdout, "%s\n", b)
		return nil
	}
	d.writeText(e.stdout)
	return nil
}

// diagnose looks at what ortel can use here; endpoint is --otlp-endpoint.
func diagnose(ctx context.Context, endpoint string) doctorReport {
	var d doctorReport
	if p, err := ortlib.Init(); err != nil {
		d.ORT.Error = err.Error()
	} else {
		lib := ortlib.Loaded()
		d.ORT.Found, d.ORT.Path, d.ORT.Version = true, p, ort.GetVersion()
		d.ORT.Source, d.ORT.Note, d.ORT.Skipped = lib.Source, lib.Note, lib.Skipped
	}
	set := hardware.Open(ctx, hardware.Config{GPUWait: 3 * time.Second})
	d.Sources = set.Statuses()
	set.Shutdown(ctx)
	d.Attach = attach.Check()
	res, err := telemetry.Resolve(telemetry.Config{Endpoint: endpoint})
	if err != nil {
		d.OTLP = []string{"configuration error: " + err.Error()}
	} else {
		d.OTLP = res.Settings()
		d.Commands = doctorCommands(endpoint)
	}
	for _, k := range models.Catalog {
		_, err := os.Stat(k.Path())
		d.Models = append(d.Models, doctorModel{Name: k.Name, Fetched: err == nil, Path: k.Path()})
	}
	return d
}

// writeText prints the report for a person.
func (d *doctorReport) writeText(w io.Writer) {
	fmt.Fprintf(w, "ONNX Runtime\n")
	if d.ORT.Found {
		fmt.Fprintf(w, "  ok            %s (version %s)\n", d.ORT.Path, d.ORT.Version)
		if d.ORT.Source != "" {
			fmt.Fprintf(w, "  found in      %s\n", d.ORT.Source)
		}
		if d.ORT.Note != "" {
			fmt.Fprintf(w, "  warning       %s\n", d.ORT.Note)
		}
		for _, s := range d.ORT.Skipped {
			fmt.Fprintf(w, "  passed over   %s\n", s)
		}
	} else {
		fmt.Fprintf(w, "  not found     %s\n", strings.ReplaceAll(d.ORT.Error, "\n", "\n                "))
	}
	fmt.Fprintf(w, "\nHardware sources\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, s := range d.Sources {
		state := "ok"
		if !s.Available {
			state = "not available"
		}
		detail := s.Reason
		if s.Detail != "" {
			detail += " (" + s.Detail + ")"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", s.Source, state, detail)
	}
	tw.Flush()
	printAttach(w, d.Attach)
	fmt.Fprintf(w, "\nOTLP export\n")
	for _, l := range d.OTLP {
		fmt.Fprintf(w, "  %s\n", l)
	}
	fmt.Fprintf(w, "\nWhere each command's telemetry goes (default flags)\n")
	for _, c := range d.Commands {
		fmt.Fprintf(w, "  %s\n", c.Name)
		for _, l := range c.Lines {
			fmt.Fprintf(w, "    %s\n", l)
		}
	}
	fmt.Fprintf(w, "\nModels (ortel fetch model NAME)\n")
	for _, m := range d.Models {
		state := "fetched"
		if !m.Fetched {
			state = "missing"
		}
		fmt.Fprintf(w, "  %-22s %-8s %s\n", m.Name, state, m.Path)
	}
}

// printAttach prints the attach section of doctor's report.
func printAttach(w io.Writer, st attach.Status) {
	yes := func(b bool) string {
		if b {
			return "yes"
		}
		return "no"
	}
	fmt.Fprintf(w, "\nAttach (eBPF uprobes on running processes)\n")
	if st.Available {
		fmt.Fprintf(w, "  ok            ortel attach --pid PID works here\n")
	} else {
		fmt.Fprintf(w, "  not available %s\n", st.Reason)
	}
	fmt.Fprintf(w, "  kernel %s, uprobes %s, privileges %s, BTF %s (not needed)\n",
		st.Kernel, yes(st.Uprobes), yes(st.Privileged), yes(st.BTF))
}
