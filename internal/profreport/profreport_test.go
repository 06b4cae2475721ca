package profreport

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ortel-dev/ortel/internal/report"
	"github.com/ortel-dev/ortel/test/testenv"
)

// TestSniff tells profiles from reports by content, as ONNX Runtime
// 1.24 (compact) and 1.30 (spaces around colons) write them and as
// report.Write writes a report; other JSON is neither.
func TestSniff(t *testing.T) {
	tests := []struct {
		name, in string
		want     Kind
	}{
		{"ORT 1.24 profile", "[\n{\"cat\":\"Session\",\"pid\":1,\"dur\":3,\"ts\":2,\"ph\":\"X\",\"name\":\"model_loading_uri\",\"args\":{}},", KindProfile},
		{"ORT 1.30 profile", "[\n{\"cat\" : \"Node\",\"pid\" :15104", KindProfile},
		{"empty profile", "[]", KindProfile},
		{"byte order mark and blank lines", "\xef\xbb\xbf\n\n  [ {\"name\":\"model_run\"", KindProfile},
		{"report.json", "{\n  \"schema_version\": \"ortel.report/v1\",\n  \"tool\": {", KindReport},
		{"other object", `{"traceEvents": []}`, KindUnknown},
		{"array of numbers", `[1, 2, 3]`, KindUnknown},
		{"array of other objects", `[{"id": 1}]`, KindUnknown},
		{"text", "hello", KindUnknown},
		{"empty", "", KindUnknown},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Sniff(strings.NewReader(tt.in))
			if err != nil || got != tt.want {
				t.Errorf("Sniff(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
			}
		})
	}
}

// FuzzSniff: Sniff never fails on bytes, and says profile only for a JSON
// array and report only for a JSON object.
func FuzzSniff(f *testing.F) {
	for _, s := range []string{"[]", "[{\"cat\":\"Node\"}]", "{\"schema_version\":1}", "\xef\xbb\xbf[", " {"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		k, err := Sniff(strings.NewReader(string(b)))
		if err != nil {
			t.Fatal(err)
		}
		first := strings.TrimLeft(strings.TrimPrefix(string(b), "\xef\xbb\xbf"), " \t\r\n")
		switch {
		case k == KindProfile && !strings.HasPrefix(first, "["):
			t.Fatalf("%q: profile, yet not a JSON array", b)
		case k == KindReport && !strings.HasPrefix(first, "{"):
			t.Fatalf("%q: report, yet not a JSON object", b)
		}
	})
}

// FuzzRead: reading any bytes as a profile never panics, and every run it
// finds has a latency sample and operators (Build's invariant).
func FuzzRead(f *testing.F) {
	for _, name := range []string{"vad_ort1.30.0.json.gz", "det_ort1.24.3.json.gz"} {
		f.Add(testenv.Gunzip(f, filepath.Join("../../instrument/profile/testdata", name)))
	}
	f.Add([]byte(`[{"cat":"Session","name":"model_run","ts":0,"dur":5,"ph":"X"}]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		bd := &builder{ops: NewCollector(), src: &report.Source{Kind: report.SourceProfile}}
		pf := report.ProfileFile{Path: "fuzz.json"}
		_ = bd.read(context.Background(), strings.NewReader(string(b)), &pf)
		if pf.Runs != len(bd.runs) {
			t.Fatalf("file counted %d runs, builder has %d", pf.Runs, len(bd.runs))
		}
		if len(bd.runs) > 0 {
			rep := bd.report([]string{"fuzz.json"}, Config{})
			if len(rep.Latency.Samples) != len(bd.runs) || rep.Operators == nil {
				t.Fatalf("%d runs, %d samples", len(bd.runs), len(rep.Latency.Samples))
			}
		}
	})
}

// TestBuildRealProfiles builds reports from the real one-run profiles of
// Silero VAD (If subgraphs) and PaddleOCR det that ONNX Runtime 1.24.3
// and 1.30.0 wrote (instrument/profile/testdata): the run, its operators
// by self time, the session's loading and initialization, the arena on
// 1.30, and where the numbers came from.
func TestBuildRealProfiles(t *testing.T) {
	tests := []struct {
		file   string
		top    string // an op type in the table
		nodes  int    // per run, at least
		arena  bool
		runDur float64
	}{
		{"vad_ort1.24.3.json.gz", "LSTM", 30, false, 0},
		{"vad_ort1.30.0.json.gz", "LSTM", 30, true, 0},
		{"det_ort1.24.3.json.gz", "Conv", 300, false, 0},
		{"det_ort1.30.0.json.gz", "Conv", 300, true, 0},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), strings.TrimSuffix(tt.file, ".gz"))
			if err := os.WriteFile(path, testenv.Gunzip(t, filepath.Join("../../instrument/profile/testdata", tt.file)), 0o644); err != nil {
				t.Fatal(err)
			}
			rep, err := Build(context.Background(), []string{path}, Config{})
			if err != nil {
				t.Fatal(err)
			}
			if !rep.FromProfile() || rep.Source.Layout != LayoutSession || len(rep.Source.Files) != 1 || rep.Source.Files[0].PID == 0 {
				t.Fatalf("source %+v: want one session-level file with its pid", rep.Source)
			}
			if rep.Latency.Count != 1 || len(rep.Latency.Samples) != 1 || rep.Latency.Samples[0] <= 0 {
				t.Errorf("latency %+v: want the one run's duration", rep.Latency)
			}
			if rep.Session.CreationS <= 0 || rep.Source.ModelLoadS <= 0 || rep.Source.InitializationS <= 0 {
				t.Errorf("cold start %+v / %+v: want model_loading_uri and session_initialization", rep.Session, rep.Source)
			}
			ops := rep.Operators
			if ops == nil || ops.ProfiledRuns != 1 || ops.Nodes < tt.nodes || len(ops.Timeline) != ops.Nodes {
				t.Fatalf("operators %+v: want one run of at least %d nodes, all in the timeline", ops, tt.nodes)
			}
			var found bool
			var sum float64
			for _, o := range ops.ByType {
				found = found || o.OpType == tt.top
				sum += o.TotalS
			}
			if !found {
				t.Errorf("no %s in the operator table %+v", tt.top, ops.ByType)
			}
			if sum > rep.Latency.Samples[0] {
				t.Errorf("operators' self time %g s exceeds the run's %g s: a subgraph counted twice", sum, rep.Latency.Samples[0])
			}
			if (ops.ArenaPeakBytes > 0) != tt.arena {
				t.Errorf("arena peak %d: want one only from 1.25 on", ops.ArenaPeakBytes)
			}
			if rep.Model.Name != strings.TrimSuffix(tt.file, ".json.gz") {
				t.Errorf("model name %q: want the file's name", rep.Model.Name)
			}
		})
	}
}

// TestBuildRefusesWhatHoldsNoRun: a JSON array without ONNX Runtime runs is
// an error naming the file, not an empty report.
func TestBuildRefusesWhatHoldsNoRun(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.json")
	if err := os.WriteFile(path, []byte(`[{"cat":"Session","name":"model_loading_uri","ts":1,"dur":2,"ph":"X"}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Build(context.Background(), []string{path}, Config{})
	if !errors.Is(err, ErrNoRuns) || !strings.Contains(err.Error(), path) {
		t.Fatalf("Build = %v; want ErrNoRuns naming %s", err, path)
	}
}

// TestDefaultName strips ORT's time stamp from the file name.
func TestDefaultName(t *testing.T) {
	for in, want := range map[string]string{
		"/x/onnxruntime_profile__2026-12-02_10-34-02.json": "onnxruntime_profile",
		"det_profile_2026-12-02_10-34-08_711.json":         "det_profile",
		"ortel-det-a8b4-r1_2026-12-02_10-34-08_711.json":   "ortel-det-a8b4-r1",
		"prof.json":                 "prof",
		"_2026-12-02_10-34-02.json": "model",
	} {
		if got := defaultName(in); got != want {
			t.Errorf("defaultName(%q) = %q, want %q", in, got, want)
		}
	}
}
