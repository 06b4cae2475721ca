package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/ortel-dev/ortel/internal/telemetry/otlpjson"
	"github.com/ortel-dev/ortel/test/otlptest"
)

// decodeJSON decodes stdout as one JSON document into v, and fails the
// test when anything else is on stdout.
func decodeJSON(t *testing.T, stdout string, v any) {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(stdout))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("stdout is not the JSON object: %v\n%s", err, stdout)
	}
	var rest bytes.Buffer
	if _, err := rest.ReadFrom(dec.Buffered()); err != nil || strings.TrimSpace(rest.String()) != "" {
		t.Fatalf("stdout holds more than the JSON object: %q", rest.String())
	}
}

// importCI imports a sequence of n runs of vad into a new SQLite history
// and returns the database and the report files.
func importCI(t *testing.T, n int) (string, []string) {
	t.Helper()
	dir := t.TempDir()
	db := filepath.Join(dir, "history.db")
	files := writeCISequence(t, filepath.Join(dir, "runs"), 7, repeat(n, ciRun{1, "1.30.0"}))
	if code, out, errOut := ortel(t, append([]string{"history", "import", "--db", db}, files...)...); code != exitOK {
		t.Fatalf("import: exit %d\n%s%s", code, out, errOut)
	}
	return db, files
}

// TestHistoryImportJSON: history import --format json prints one object
// saying each report's fate (imported, already_there, failed) with the
// counts, also when one report fails (exit 1, the error in the object);
// any other format is a usage error.
func TestHistoryImportJSON(t *testing.T) {
	db, files := importCI(t, 2)
	more := writeCISequence(t, t.TempDir(), 8, repeat(1, ciRun{1.1, "1.30.0"}))
	broken := filepath.Join(t.TempDir(), "report.json")
	if err := os.WriteFile(broken, []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	args := append([]string{"history", "import", "--format", "json", "--db", db}, append(files, more[0], broken)...)
	code, stdout, stderr := ortel(t, args...)
	if code != exitFailure {
		t.Errorf("import with a broken report: exit %d, want %d\n%s", code, exitFailure, stderr)
	}
	var res historyImportResult
	decodeJSON(t, stdout, &res)
	if res.History != db || res.Imported != 1 || res.AlreadyThere != 2 || res.Failed != 1 || len(res.Reports) != 4 ||
		!strings.Contains(res.Error, "1 report not imported") {
		t.Errorf("import result = %+v, want 1 imported, 2 already there, 1 failed, 4 reports, the error", res)
	}
	want := []string{"already_there", "already_there", "imported", "failed"}
	for i, r := range res.Reports {
		if i < len(want) && (r.Status != want[i] || (r.RunID == 0) != (r.Status == "failed")) {
			t.Errorf("report %d = %+v, want status %s with a run id unless failed", i, r, want[i])
		}
	}
	if code, _, _ := ortel(t, "history", "import", "--format", "md", "--db", db, files[0]); code != exitUsage {
		t.Errorf("import --format md: exit %d, want %d", code, exitUsage)
	}
}

// TestHistoryListJSON: history list --format json prints the series with
// their run counts and first and last times, and [] for an empty history.
func TestHistoryListJSON(t *testing.T) {
	db, _ := importCI(t, 3)
	code, stdout, stderr := ortel(t, "history", "list", "--format", "json", "--db", db)
	if code != exitOK {
		t.Fatalf("list: exit %d\n%s", code, stderr)
	}
	var res historyListResult
	decodeJSON(t, stdout, &res)
	if len(res.Series) != 1 || res.Series[0].Model != "vad" || res.Series[0].Runs != 3 || res.Series[0].Machine == "" ||
		!res.Series[0].First.Before(res.Series[0].Last) {
		t.Errorf("list = %+v, want one series of vad, 3 runs, first before last", res)
	}
	empty := filepath.Join(t.TempDir(), "empty.db")
	if code, stdout, _ := ortel(t, "history", "list", "--format", "json", "--db", empty); code != exitOK || !strings.Contains(stdout, `"series": []`) {
		t.Errorf("list of an empty history: exit %d\n%s", code, stdout)
	}
	if code, _, _ := ortel(t, "history", "list", "--format", "html", "--db", db); code != exitUsage {
		t.Errorf("list --format html: exit %d, want %d", code, exitUsage)
	}
}

// TestHistoryPruneJSON: history prune --keep 2 --format json says how many
// runs it removed, the rule, and the series left.
func TestHistoryPruneJSON(t *testing.T) {
	db, _ := importCI(t, 5)
	code, stdout, stderr := ortel(t, "history", "prune", "--keep", "2", "--format", "json", "--db", db)
	if code != exitOK {
		t.Fatalf("prune: exit %d\n%s", code, stderr)
	}
	var res historyPruneResult
	decodeJSON(t, stdout, &res)
	if res.Removed != 3 || res.Keep != 2 || res.Before != nil || len(res.Series) != 1 || res.Series[0].Runs != 2 {
		t.Errorf("prune = %+v, want 3 removed, keep 2, one series of 2 runs left", res)
	}
	if code, _, _ := ortel(t, "history", "prune", "--keep", "2", "--format", "csv", "--db", db); code != exitUsage {
		t.Errorf("prune --format csv: exit %d, want %d", code, exitUsage)
	}
}

// replayRecord is one OTLP/JSON traces record holding a span named name.
func replayRecord(t *testing.T, name string, id byte) []byte {
	t.Helper()
	req := &coltracepb.ExportTraceServiceRequest{ResourceSpans: []*tracepb.ResourceSpans{{ScopeSpans: []*tracepb.ScopeSpans{{Spans: []*tracepb.Span{{
		TraceId: bytes.Repeat([]byte{1}, 16), SpanId: []byte{0, 0, 0, 0, 0, 0, 0, id}, Name: name, StartTimeUnixNano: 1, EndTimeUnixNano: 2,
	}}}}}}}
	var buf bytes.Buffer
	if err := otlpjson.AppendLine(&buf, req); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestReplayJSON: ortel replay --format json of a spool folder (two good
// records and a damaged one in traces.jsonl, an empty metrics.jsonl) sends
// the good records to a live receiver and prints one object with each
// file's counts and the totals, the warnings on stderr; a replay to a dead
// collector prints the error and the files not tried (exit 1).
func TestReplayJSON(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "")
	t.Setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "60000") // a live receiver on a loaded machine
	spool := t.TempDir()
	traces := filepath.Join(spool, "traces.jsonl")
	content := append(append(replayRecord(t, "a", 1), "{cut\n"...), replayRecord(t, "b", 2)...)
	if err := os.WriteFile(traces, content, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(spool, "metrics.jsonl"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	rcv, err := otlptest.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer rcv.Close()
	code, stdout, stderr := ortel(t, "replay", "--format", "json", "--otlp-endpoint", "http://"+rcv.Endpoint(), spool)
	if code != exitOK {
		t.Fatalf("replay: exit %d\n%s%s", code, stdout, stderr)
	}
	var res replayResult
	decodeJSON(t, stdout, &res)
	if len(res.Files) != 2 || res.Sent != 2 || res.Damaged != 1 || res.Error != "" {
		t.Fatalf("replay = %+v, want 2 files, 2 sent, 1 damaged", res)
	}
	if m, tr := res.Files[0], res.Files[1]; m.Signal != "" || m.Sent != 0 || tr.Path != traces || tr.Signal != "traces" || tr.Sent != 2 || tr.Damaged != 1 || !strings.Contains(tr.FirstDamaged, "line 2") {
		t.Errorf("files = %+v, want metrics.jsonl empty, traces.jsonl 2 sent, 1 damaged on line 2", res.Files)
	}
	if got := len(rcv.Spans()); got != 2 || !strings.Contains(stderr, "skipped 1 damaged record") {
		t.Errorf("receiver got %d spans, want 2; stderr:\n%s", got, stderr)
	}

	// A second file after a dead collector's: the first fails, the second is not tried.
	if err := os.WriteFile(filepath.Join(spool, "z.jsonl"), replayRecord(t, "z", 3), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(traces + ".replayed"); err != nil { // forget the progress: traces.jsonl is sent again
		t.Fatal(err)
	}
	t.Setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "500")
	code, stdout, _ = ortel(t, "replay", "--format", "json", "--otlp-endpoint", "http://"+closedPort(t), filepath.Join(spool, "traces.jsonl"), filepath.Join(spool, "z.jsonl"))
	res = replayResult{}
	decodeJSON(t, stdout, &res)
	if code != exitFailure || res.Error == "" || len(res.Files) != 1 || res.Files[0].Error == "" || len(res.NotTried) != 1 {
		t.Errorf("replay to a dead collector: exit %d, result %+v, want exit 1, the error, z.jsonl not tried", code, res)
	}
	if code, _, _ := ortel(t, "replay", "--format", "md", "--otlp-endpoint", "http://"+rcv.Endpoint(), spool); code != exitUsage {
		t.Errorf("replay --format md: exit %d, want %d", code, exitUsage)
	}
}
