package main

import (
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// helpFlag matches a flag documented in a usage text: a line that starts,
// after indentation, with --name.
var helpFlag = regexp.MustCompile(`(?m)^\s+--([a-z][a-z0-9-]*)`)

// TestEveryFlagIsInItsHelp parses each command's help text and compares
// it with the flags the command really registers (captured from parse on
// `COMMAND --help`): every flag is documented, every documented flag
// exists, and every old spelling is named in the help as such.
func TestEveryFlagIsInItsHelp(t *testing.T) {
	var got *flag.FlagSet
	parsedFlags = func(fs *flag.FlagSet) { got = fs }
	defer func() { parsedFlags = nil }()
	for _, c := range commands() {
		t.Run(c.name, func(t *testing.T) {
			got = nil
			if code, _, stderr := ortel(t, c.name, "--help"); code != 0 {
				t.Fatalf("%s --help: exit %d: %s", c.name, code, stderr)
			}
			if got == nil {
				t.Fatalf("%s parsed no flags", c.name)
			}
			help := c.help()
			documented := map[string]bool{}
			for _, m := range helpFlag.FindAllStringSubmatch(help, -1) {
				documented[m[1]] = true
			}
			registered := map[string]bool{}
			got.VisitAll(func(f *flag.Flag) {
				registered[f.Name] = true
				switch {
				case isDeprecated(f):
					if documented[f.Name] {
						t.Errorf("old spelling --%s is documented as a flag of its own", f.Name)
					}
					if !strings.Contains(help, "--"+f.Name+" (now ") {
						t.Errorf("help does not name the old spelling --%s and what replaces it", f.Name)
					}
				case !documented[f.Name]:
					t.Errorf("flag --%s is missing from the help", f.Name)
				}
			})
			for name := range documented {
				if !registered[name] {
					t.Errorf("help documents --%s, which %s does not accept", name, c.name)
				}
			}
		})
	}
}

// TestOldFlagSpellings: each renamed flag still works under its old name,
// with one notice on stderr naming the new one.
func TestOldFlagSpellings(t *testing.T) {
	dir := t.TempDir()
	run := filepath.Join(dir, "run.json")
	gunzipTo(t, "../../internal/report/testdata/det_report.json.gz", run)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	tests := []struct {
		name, notice string
		args         []string
		check        func(t *testing.T, stdout string)
	}{
		{"doctor --json", "ortel doctor: --json is deprecated and will be removed: use --format json", []string{"doctor", "--json"},
			func(t *testing.T, stdout string) {
				if !strings.HasPrefix(stdout, "{") {
					t.Errorf("doctor --json printed no JSON:\n%.300s", stdout)
				}
			}},
		{"report --out FILE", "ortel report: --out is deprecated and will be removed: use --file FILE",
			[]string{"report", run, "--out", filepath.Join(dir, "r.md"), "--peak-flops", "100G", "--peak-bw", "10G"},
			func(t *testing.T, _ string) {
				if b, err := os.ReadFile(filepath.Join(dir, "r.md")); err != nil || !strings.HasPrefix(string(b), "# ortel report") {
					t.Errorf("report --out wrote no Markdown file: %v", err)
				}
			}},
		{"import --model", "ortel import: --model is deprecated and will be removed: use --model-name NAME",
			[]string{"import", "--model", "cls", "--out", filepath.Join(dir, "imp"), "--start", "2026-11-22T10:31:07Z", filepath.Join(dir, "nope.json")},
			nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := ortel(t, tt.args...)
			if n := strings.Count(stderr, tt.notice); n != 1 {
				t.Errorf("stderr has the notice %d times, want once:\n%s", n, stderr)
			}
			if tt.check != nil {
				if code != 0 {
					t.Fatalf("exit %d:\n%s", code, stderr)
				}
				tt.check(t, stdout)
			}
		})
	}
}

// TestBenchOldFlagSpellings: bench --name and --json still set the model
// name and the JSON report.
func TestBenchOldFlagSpellings(t *testing.T) {
	model := chainModel(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	code, stdout, stderr := ortel(t, "bench", model, "--runs", "3", "--warmup", "0", "--profile-runs", "0", "--no-hardware",
		"--quiet", "--out", t.TempDir(), "--name", "renamed", "--json")
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, stderr)
	}
	for _, n := range []string{"--name is deprecated and will be removed: use --model-name NAME", "--json is deprecated and will be removed: use --format json"} {
		if strings.Count(stderr, n) != 1 {
			t.Errorf("stderr lacks one %q:\n%s", n, stderr)
		}
	}
	if !strings.Contains(stdout, `"name": "renamed"`) || !strings.HasPrefix(stdout, "{") {
		t.Errorf("--name/--json were not applied:\n%.500s", stdout)
	}
}
