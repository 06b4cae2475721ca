package main

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ortel-dev/ortel/instrument/ortlib"
	"github.com/ortel-dev/ortel/internal/attach"
	"github.com/ortel-dev/ortel/internal/telemetry"
	"github.com/ortel-dev/ortel/test/otlptest"
	"github.com/ortel-dev/ortel/test/testenv"
)

// captureTelemetry records the configuration each command resolves.
func captureTelemetry(t *testing.T) func(command string) (telemetry.Resolved, bool) {
	t.Helper()
	var mu sync.Mutex
	got := map[string]telemetry.Resolved{}
	telemetryResolved = func(command string, r telemetry.Resolved) {
		mu.Lock()
		got[command] = r
		mu.Unlock()
	}
	t.Cleanup(func() { telemetryResolved = nil })
	return func(command string) (telemetry.Resolved, bool) {
		mu.Lock()
		defer mu.Unlock()
		r, ok := got[command]
		return r, ok
	}
}

// TestDoctorDescribesEachCommand runs every command that exports telemetry
// with its default flags (in a temporary working folder) and checks that
// doctor's lines for it equal the description of the configuration the
// command really resolved: folder, files or endpoints, metric interval,
// spool, rotation. With files and with a collector.
func TestDoctorDescribesEachCommand(t *testing.T) {
	prof, err := filepath.Abs("../../instrument/profile/testdata/cls_2runs.json.gz")
	if err != nil {
		t.Fatal(err)
	}
	rcv, err := otlptest.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer rcv.Close()
	for _, mode := range []struct {
		name string
		env  map[string]string
	}{
		{"files", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "", "OTEL_METRIC_EXPORT_INTERVAL": "3000"}},
		{"collector", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://" + rcv.Endpoint(), "OTEL_METRIC_EXPORT_INTERVAL": ""}},
	} {
		t.Run(mode.name, func(t *testing.T) {
			for k, v := range mode.env {
				t.Setenv(k, v)
			}
			dir := t.TempDir()
			profile := gunzipTo(t, prof, filepath.Join(dir, "onnxruntime_profile__2026-11-22_10-31-07.json"))
			t.Chdir(dir)
			resolved := captureTelemetry(t)
			_, doctorOut, _ := ortel(t, "doctor", "--format", "json")
			doctor := doctorJSON(t, doctorOut)

			runs := map[string][]string{
				"agent":  {"agent", "--duration", "10ms", "--quiet"},
				"import": {"import", "--model-name", "cls", profile},
				"replay": {"replay", filepath.Join(dir, "no-such-spool")}, // resolves, then fails on the path
			}
			lib, ortErr := ortlib.Init()
			if ortErr == nil {
				runs["bench"] = []string{"bench", chainModel(t), "--runs", "3", "--warmup", "1", "--profile-runs", "0", "--quiet"}
			}
			st := attach.Check()
			if ortErr == nil && st.Available {
				runs["attach"] = []string{"attach", "--lib", lib, "--duration", "10ms", "--quiet"}
			}
			defer func() {
				// After the other commands were checked.
				if ortErr != nil {
					testenv.Missing(t, "bench and attach need ONNX Runtime: %v", ortErr)
				}
				if !st.Available {
					testenv.Missing(t, "attach cannot use eBPF here: %s", st.Reason)
				}
			}()
			for _, c := range telemetryCommands {
				args, ok := runs[c.name]
				if !ok {
					continue
				}
				code, stdout, stderr := ortel(t, args...)
				r, ok := resolved(c.name)
				if !ok {
					t.Errorf("%s did not set up telemetry (exit %d)\n%s\n%s", c.name, code, stdout, stderr)
					continue
				}
				if c.name == "bench" {
					// The default folder holds the model's name and the time.
					if !regexp.MustCompile(`^ortel-out/chain-\d{8}-\d{6}$`).MatchString(r.OutputDir) {
						t.Errorf("bench wrote to %q, want %s", r.OutputDir, benchOutPattern)
					}
					r = withOutputDir(r, benchOutPattern)
				}
				want := strings.Join(describeCommand(c, r), "\n")
				got := strings.Join(doctor[c.name], "\n")
				if got != want {
					t.Errorf("doctor says for %s:\n%s\nthe command did:\n%s", c.name, got, want)
				}
			}
		})
	}
}

// withOutputDir is r as if it had been resolved for the folder out.
func withOutputDir(r telemetry.Resolved, out string) telemetry.Resolved {
	r.OutputDir = out
	if r.SpoolDir != "" {
		r.SpoolDir = filepath.Join(out, "spool")
	}
	return r
}

func doctorJSON(t *testing.T, out string) map[string][]string {
	t.Helper()
	var d doctorReport
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatalf("doctor --format json: %v\n%s", err, out)
	}
	m := map[string][]string{}
	for _, c := range d.Commands {
		m[c.Name] = c.Lines
	}
	if len(m) != len(telemetryCommands) {
		t.Fatalf("doctor describes %d commands, want %d:\n%s", len(m), len(telemetryCommands), out)
	}
	return m
}

// TestAgentMetricInterval checks that OTEL_METRIC_EXPORT_INTERVAL sets the
// agent's interval, and so its number of exports, and that --interval wins
// over it.
func TestAgentMetricInterval(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	exportsRE := regexp.MustCompile(`(\d+) metric exports`)
	tests := []struct {
		name, env     string
		flags         []string
		interval      time.Duration
		exportsAbove  int // more exports than this
		exportsAtMost int
	}{
		// One export per 50ms over a second: far more than the final one.
		{name: "variable, short", env: "50", interval: 50 * time.Millisecond, exportsAbove: 1, exportsAtMost: 1 << 20},
		// No periodic export within the second: only the final one.
		{name: "variable, long", env: "1000000", interval: 1000 * time.Second, exportsAtMost: 1},
		{name: "flag wins", env: "50", flags: []string{"--interval", "1000s"}, interval: 1000 * time.Second, exportsAtMost: 1},
		{name: "neither: 1s", interval: time.Second, exportsAtMost: 1 << 20},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("OTEL_METRIC_EXPORT_INTERVAL", tt.env)
			resolved := captureTelemetry(t)
			args := append([]string{"agent", "--duration", "1s", "--out", t.TempDir()}, tt.flags...)
			code, _, stderr := ortel(t, args...)
			if code != 0 {
				t.Fatalf("exit %d\n%s", code, stderr)
			}
			r, _ := resolved("agent")
			if r.MetricInterval != tt.interval {
				t.Errorf("interval %s, want %s", r.MetricInterval, tt.interval)
			}
			if !strings.Contains(stderr, "collecting every "+tt.interval.String()) {
				t.Errorf("the agent does not say it collects every %s:\n%s", tt.interval, stderr)
			}
			m := exportsRE.FindStringSubmatch(stderr)
			if m == nil {
				t.Fatalf("no export count in:\n%s", stderr)
			}
			n, _ := strconv.Atoi(m[1])
			if n <= tt.exportsAbove || n > tt.exportsAtMost {
				t.Errorf("%d metric exports, want more than %d and at most %d", n, tt.exportsAbove, tt.exportsAtMost)
			}
		})
	}
}
