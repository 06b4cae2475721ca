package main

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
)

// resourcesIn returns the resource attributes of every line of an
// OTLP/JSON lines file (traces or metrics), as strings.
func resourcesIn(t *testing.T, path string) []map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	type attrs struct {
		Resource struct {
			Attributes []struct {
				Key   string `json:"key"`
				Value struct {
					S string `json:"stringValue"`
					I string `json:"intValue"`
				} `json:"value"`
			} `json:"attributes"`
		} `json:"resource"`
	}
	var out []map[string]string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var line struct {
			Spans   []attrs `json:"resourceSpans"`
			Metrics []attrs `json:"resourceMetrics"`
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatal(err)
		}
		for _, r := range append(line.Spans, line.Metrics...) {
			m := map[string]string{}
			for _, a := range r.Resource.Attributes {
				m[a.Key] = a.Value.S + a.Value.I
			}
			out = append(out, m)
		}
	}
	if len(out) == 0 {
		t.Fatalf("%s holds no resource", path)
	}
	return out
}

// TestImportResource: the imported spans and metrics describe the profiled
// process — the profile's pid, file and start — not ortel (no host.name,
// not ortel's pid or service name); --service-name and --resource win over
// OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES, which win over the
// profile; --format json prints one result object with the same resource.
func TestImportResource(t *testing.T) {
	dir := t.TempDir()
	prof := gunzipTo(t, "../../instrument/profile/testdata/vad_ort1.30.0.json.gz",
		filepath.Join(dir, "onnxruntime_profile__2026-11-22_01-05-14_373.json"))
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	t.Setenv("OTEL_SERVICE_NAME", "")
	t.Setenv("OTEL_RESOURCE_ATTRIBUTES", "service.name=from-env,team=env,deployment.environment.name=prod")
	tests := []struct {
		name string
		args []string
		want map[string]string
	}{
		{"environment over profile", nil, map[string]string{"service.name": "from-env", "team": "env", "deployment.environment.name": "prod"}},
		{"flags over environment", []string{"--service-name", "vad-service", "--resource", "team=flag"},
			map[string]string{"service.name": "vad-service", "team": "flag", "deployment.environment.name": "prod"}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(dir, "out"+strconv.Itoa(i))
			code, stdout, stderr := ortel(t, append(append([]string{"import", "--format", "json", "--out", out}, tt.args...), prof)...)
			if code != 0 {
				t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
			}
			var res importResult
			if err := json.Unmarshal([]byte(stdout), &res); err != nil {
				t.Fatalf("stdout is not one JSON object: %v\n%s", err, stdout)
			}
			if res.Spans != 60 || len(res.Profiles) != 1 || res.Profiles[0].Runs != 1 || res.TracesFile != filepath.Join(out, "traces.jsonl") {
				t.Errorf("result %+v: want 60 spans of 1 run in %s", res, out)
			}
			want := map[string]string{"process.pid": "17888", "ortel.profile.file": filepath.Base(prof)}
			for k, v := range tt.want {
				want[k] = v
			}
			for _, f := range []string{"traces.jsonl", "metrics.jsonl"} {
				for _, r := range resourcesIn(t, filepath.Join(out, f)) {
					for k, v := range want {
						if r[k] != v {
							t.Errorf("%s: resource %s = %q, want %q", f, k, r[k], v)
						}
					}
					if _, ok := r["host.name"]; ok || r["process.pid"] == strconv.Itoa(os.Getpid()) {
						t.Errorf("%s: resource %v describes ortel, not the profiled process", f, r)
					}
					if !strings.HasPrefix(r["ortel.profile.start"], "2026-11-22T01:05:14.373") {
						t.Errorf("%s: profile start %q", f, r["ortel.profile.start"])
					}
				}
			}
			for _, sp := range readSpans(t, filepath.Join(out, "traces.jsonl")) {
				if !hasIntAttr(sp, "thread.id") {
					t.Fatalf("span %s has no thread.id: the profile's tid is lost", sp.Name)
				}
			}
			for k, v := range want {
				if res.Resource[k] != v {
					t.Errorf("JSON result resource %s = %q, want %q", k, res.Resource[k], v)
				}
			}
		})
	}
	if code, _, stderr := ortel(t, "import", "--resource", "novalue", "--out", filepath.Join(dir, "bad"), prof); code != 2 || !strings.Contains(stderr, "KEY=VALUE") {
		t.Errorf("--resource novalue: exit %d, %s; want a usage error", code, stderr)
	}
}

// TestImportDefaultFolderTwice: a second import into the default folder
// goes to a new folder (ortel-out/import-2), said on stderr, instead of
// being refused; the first folder is untouched.
func TestImportDefaultFolderTwice(t *testing.T) {
	src := gunzipTo(t, "../../instrument/profile/testdata/vad_ort1.30.0.json.gz", filepath.Join(t.TempDir(), "prof.json"))
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	t.Chdir(t.TempDir())
	def := commandTelemetry("import").out
	for i, want := range []string{def, def + "-2", def + "-3"} {
		code, stdout, stderr := ortel(t, "import", src)
		if code != 0 {
			t.Fatalf("import %d: exit %d\n%s", i+1, code, stderr)
		}
		if !strings.Contains(stdout, filepath.Join(want, "traces.jsonl")) {
			t.Errorf("import %d wrote elsewhere than %s:\n%s", i+1, want, stdout)
		}
		if i > 0 && !strings.Contains(stderr, "already holds an import: writing to "+want) {
			t.Errorf("import %d does not say it moved to %s:\n%s", i+1, want, stderr)
		}
		if n := len(readSpans(t, filepath.Join(want, "traces.jsonl"))); n != 60 {
			t.Errorf("%s: %d spans, want 60", want, n)
		}
	}
	if n := len(readSpans(t, filepath.Join(def, "traces.jsonl"))); n != 60 {
		t.Errorf("the first folder changed: %d spans", n)
	}
}

// hasIntAttr reports whether sp has the integer attribute key.
func hasIntAttr(sp *tracepb.Span, key string) bool {
	for _, a := range sp.Attributes {
		if a.Key == key && a.Value.GetIntValue() != 0 {
			return true
		}
	}
	return false
}
