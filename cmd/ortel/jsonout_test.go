package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ortel-dev/ortel/test/testenv"
)

// TestVersionJSON: version --format json is one JSON object with the
// same facts as the text, the ONNX Runtime library found and loaded; a
// format it does not have is a usage error.
func TestVersionJSON(t *testing.T) {
	testenv.RequireORT(t)
	code, stdout, stderr := ortel(t, "version", "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var v versionInfo
	if err := json.Unmarshal([]byte(stdout), &v); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, stdout)
	}
	if v.Ortel != version || v.Go == "" || v.OS != "linux" || !v.ONNXRuntime.Loaded || v.ONNXRuntime.Version == "" ||
		v.ONNXRuntime.Library == "" {
		t.Errorf("version --format json: %+v", v)
	}
	_, text, _ := ortel(t, "version")
	if !strings.Contains(text, "onnxruntime "+v.ONNXRuntime.Version+" ("+v.ONNXRuntime.Library+")") {
		t.Errorf("the text and the JSON disagree:\n%s\n%s", text, stdout)
	}
	if code, _, stderr := ortel(t, "version", "--format", "yaml"); code != exitUsage || !strings.Contains(stderr, `--format "yaml": want text or json`) {
		t.Errorf("--format yaml: exit %d, %s", code, stderr)
	}
}

// TestAgentJSON runs the agent for a second with --format json: stdout is
// exactly one JSON object (the status lines stay on stderr) with its
// metric exports and its hardware sources, the CPU among them.
func TestAgentJSON(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	code, stdout, stderr := ortel(t, "agent", "--duration", "1s", "--interval", "100ms", "--out", t.TempDir(), "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var s agentSummary
	dec := json.NewDecoder(strings.NewReader(stdout))
	if err := dec.Decode(&s); err != nil || dec.More() {
		t.Fatalf("stdout is not one JSON object (%v):\n%s", err, stdout)
	}
	if s.MetricExports < 1 || s.DurationS < 1 || s.PeakRSSBytes <= 0 {
		t.Errorf("agent --format json: %+v", s)
	}
	cpu := false
	for _, src := range s.Sources {
		cpu = cpu || (src.Source == "cpu" && src.Available)
	}
	if !cpu {
		t.Errorf("no available cpu source: %+v", s.Sources)
	}
	if !strings.Contains(stderr, "ortel agent: stopped after") {
		t.Errorf("the status lines left stderr:\n%s", stderr)
	}
	if code, _, stderr := ortel(t, "agent", "--format", "xml"); code != exitUsage {
		t.Errorf("--format xml: exit %d, %s", code, stderr)
	}
}
