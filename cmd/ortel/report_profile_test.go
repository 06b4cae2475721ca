package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ortel-dev/ortel/internal/report"
	"github.com/ortel-dev/ortel/test/ortprofile"
	"github.com/ortel-dev/ortel/test/testenv"
)

// TestWriteProfilesChild writes real profiles for ortprofile.Write.
func TestWriteProfilesChild(t *testing.T) { ortprofile.Child(t) }

// profileCase is one set of real profiles ortel report reads.
type profileCase struct {
	name   string
	files  []string
	layout string
}

// realProfileCases has ONNX Runtime 1.24.3 and 1.30.0 profile PaddleOCR
// det: per version the session-level file enable_profiling writes (what
// Python, C#, C++ users get), the one onnxruntime-node writes with
// enableProfiling (Node.js users), and the files of profiled runs
// (run-level, one per run, on 1.30; a profiled session copy's file on
// 1.24).
func realProfileCases(t *testing.T) []profileCase {
	testenv.RequireORT(t)
	var out []profileCase
	for _, v := range []string{"1.24.3", "1.30.0"} {
		dir := ortprofile.Write(t, v, "ch_PP-OCRv4_det_infer.onnx")
		for _, k := range []struct{ sub, layout string }{{"session", "session"}, {"run", "run"}} {
			files, _ := filepath.Glob(filepath.Join(dir, k.sub, "*.json"))
			layout := k.layout
			if v == "1.24.3" {
				layout = "session" // no run-level profiling before 1.25
			}
			out = append(out, profileCase{v + " " + k.sub, files, layout})
		}
		out = append(out, profileCase{v + " node", []string{ortprofile.Node(t, v, "ch_PP-OCRv4_det_infer.onnx")}, "session"})
	}
	return out
}

// TestReportProfiles: ortel report on real profiles of both ONNX Runtime
// releases gives the operator table and findings in text, JSON and HTML,
// says the latency is of profiled runs and that no machine is known; with
// --model the model is described and the roofline classifies the
// operators against this machine's peaks (here given as flags, so no
// microbenchmark runs).
func TestReportProfiles(t *testing.T) {
	model := testenv.Model(t, "ch_PP-OCRv4_det_infer.onnx")
	for _, pc := range realProfileCases(t) {
		t.Run(pc.name, func(t *testing.T) {
			code, stdout, stderr := ortel(t, append([]string{"report"}, pc.files...)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			for _, w := range []string{"from an ONNX Runtime profile", "Profiled-run latency (6 runs)", "Top operators (6 profiled runs",
				"Conv ", "Findings (", "the profile does not say which machine ran it"} {
				if !strings.Contains(stdout, w) {
					t.Errorf("text lacks %q:\n%s", w, stdout)
				}
			}
			if strings.Contains(stdout, "Throughput") || strings.Contains(stdout, "Steady-state") {
				t.Errorf("text claims a throughput or steady state a profile cannot give:\n%s", stdout)
			}

			// Findings from measured shares sit near their thresholds on
			// a 64×64 model (Conv at 39-49% against dominant-op-type's
			// 40%); given peaks, the roofline classifies the element-wise
			// nodes (about 45% of operator time) and a finding fires on
			// any machine, loaded or quiet.
			peaks := []string{"--peak-flops", "100G", "--peak-bw", "10G"}
			code, stdout, stderr = ortel(t, append(append([]string{"report", "--format", "json"}, peaks...), pc.files...)...)
			if code != 0 {
				t.Fatalf("json: exit %d: %s", code, stderr)
			}
			var r report.Report
			if err := json.Unmarshal([]byte(stdout), &r); err != nil {
				t.Fatal(err)
			}
			if !r.FromProfile() || r.Source.Layout != pc.layout || len(r.Source.Files) != len(pc.files) {
				t.Errorf("source %+v: want %s layout, %d files", r.Source, pc.layout, len(pc.files))
			}
			if len(r.Latency.Samples) != ortprofile.ProfiledRuns || r.Operators == nil || len(r.Operators.ByType) == 0 ||
				r.Analysis == nil || len(r.Analysis.Findings) == 0 {
				t.Fatalf("json: %d samples, operators %v, analysis %v: want the runs, the table and findings", len(r.Latency.Samples), r.Operators, r.Analysis)
			}
			if (pc.layout == "session") != (r.Session.CreationS > 0) {
				t.Errorf("cold start %g s: want one exactly from a session-level profile", r.Session.CreationS)
			}

			html := filepath.Join(t.TempDir(), "r.html")
			if code, _, stderr = ortel(t, append(append([]string{"report", "--file", html}, peaks...), pc.files...)...); code != 0 {
				t.Fatalf("html: exit %d: %s", code, stderr)
			}
			b, _ := os.ReadFile(html)
			for _, w := range []string{"<h2>Profiled-run latency</h2>", `<section id="findings">`, template(r.Analysis.Findings[0].Title), "machine not in the profile"} {
				if !strings.Contains(string(b), w) {
					t.Errorf("HTML lacks %q", w)
				}
			}

			save := t.TempDir()
			code, stdout, stderr = ortel(t, append([]string{"report", "--model", model, "--peak-flops", "50G", "--peak-bw", "10G", "--save", save}, pc.files...)...)
			if code != 0 {
				t.Fatalf("--model: exit %d: %s", code, stderr)
			}
			if !strings.HasPrefix(stdout, "ortel report — ch_PP-OCRv4_det_infer, from an ONNX Runtime profile") {
				t.Errorf("summary does not come first:\n%s", stdout)
			}
			m, err := report.Read(filepath.Join(save, "report.json"))
			if err != nil {
				t.Fatal(err)
			}
			if m.Model.SHA256 == "" || m.Host.LogicalCPUs == 0 || len(m.Source.Assumed) == 0 {
				t.Errorf("--model: model %+v, host %+v, assumed %v: want the model described and this machine assumed", m.Model, m.Host, m.Source.Assumed)
			}
			rf := m.Analysis.Roofline
			if rf == nil || rf.FLOPs <= 0 || rf.Bytes <= 0 {
				t.Fatalf("--model: roofline %+v: want FLOPs and bytes", rf)
			}
			classified := 0
			for _, o := range rf.ByOpType {
				if o.Bound != "" && o.Bound != "unknown" {
					classified++
				}
			}
			if classified == 0 {
				t.Errorf("--model: no op type classified against the roof: %+v", rf.ByOpType)
			}
			for _, f := range []string{"report.md", "report.html"} {
				if _, err := os.Stat(filepath.Join(save, f)); err != nil {
					t.Error(err)
				}
			}
		})
	}
}

// template is s as html/template escapes text.
func template(s string) string {
	return strings.NewReplacer("'", "&#39;", "\"", "&#34;", "&", "&amp;").Replace(s)
}

// TestCompareProfiles: two reports made from profiles compare; a profile
// against a bench run is refused, saying why (profiled runs are slowed by
// the profiler), exit 1.
func TestCompareProfiles(t *testing.T) {
	testenv.RequireORT(t)
	dir := ortprofile.Write(t, "1.30.0", "ch_PP-OCRv4_det_infer.onnx")
	var saved []string
	for _, sub := range []string{"session", "run"} {
		files, _ := filepath.Glob(filepath.Join(dir, sub, "*.json"))
		out := t.TempDir()
		if code, _, stderr := ortel(t, append([]string{"report", "--save", out, "--format", "json", "--file", filepath.Join(out, "x.json")}, files...)...); code != 0 {
			t.Fatalf("report %s: exit %d: %s", sub, code, stderr)
		}
		saved = append(saved, filepath.Join(out, "report.json"))
	}
	code, stdout, stderr := ortel(t, "compare", saved[0], saved[1])
	if code != 0 || !strings.Contains(stdout, "p50") {
		t.Fatalf("compare two profiles: exit %d\n%s%s", code, stdout, stderr)
	}
	code, _, stderr = ortel(t, "compare", realRun(t), saved[0])
	if code != 1 || !strings.Contains(stderr, "made from an ONNX Runtime profile") || !strings.Contains(stderr, "slowed by the profiler") {
		t.Fatalf("compare bench with profile: exit %d, %s; want 1 and the reason", code, stderr)
	}
}

// TestReportNeitherProfileNorReport: a JSON file that is neither is an
// error naming it, exit 1, and nothing is written.
func TestReportNeitherProfileNorReport(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "other.json")
	if err := os.WriteFile(p, []byte(`{"traceEvents": []}`), 0o644); err != nil {
		t.Fatal(err)
	}
	save := filepath.Join(dir, "out")
	code, stdout, stderr := ortel(t, "report", "--save", save, p)
	if code != 1 || !strings.Contains(stderr, p) || !strings.Contains(stderr, "neither a report.json") || stdout != "" {
		t.Fatalf("exit %d, stdout %q, stderr %q: want 1 and an error naming %s", code, stdout, stderr, p)
	}
	if _, err := os.Stat(save); !os.IsNotExist(err) {
		t.Errorf("--save folder created for an unreadable input: %v", err)
	}
}
