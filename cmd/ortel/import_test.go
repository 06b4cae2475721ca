package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ortel-dev/ortel/test/otlptest"
)

// TestImportOutputRules: a second import into the same --out is refused
// unless --append (which adds) or --overwrite (which replaces); the counts
// printed match the spans in the file. It catches silent duplicates and an
// --overwrite that appends.
func TestImportOutputRules(t *testing.T) {
	dir := t.TempDir()
	prof := gunzipTo(t, "../../instrument/profile/testdata/vad_ort1.30.0.json.gz",
		filepath.Join(dir, "onnxruntime_profile__2026-11-22_01-05-14_373.json"))
	out := filepath.Join(dir, "out")
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	code, stdout, stderr := ortel(t, "import", "--model", "vad", "--out", out, prof)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	once := len(readSpans(t, filepath.Join(out, "traces.jsonl")))
	if !strings.Contains(stdout, "1 runs") || !strings.Contains(stdout, "wrote 60 spans") || once != 60 {
		t.Fatalf("%d spans in the file; stdout:\n%s", once, stdout)
	}
	// The 1.30 file name carries milliseconds: the run starts at them.
	want := time.Date(2026, 11, 22, 1, 5, 14, 373e6, time.Local)
	if !strings.Contains(stderr, "from the time stamp in ORT's file name") {
		t.Errorf("stderr does not say where the start came from:\n%s", stderr)
	}
	for _, s := range readSpans(t, filepath.Join(out, "traces.jsonl")) {
		if s.Name == "model_loading_uri" {
			if got := time.Unix(0, int64(s.StartTimeUnixNano)); got.Sub(want) < 0 || got.Sub(want) > time.Millisecond {
				t.Errorf("model loading starts at %v, want %v plus its ts", got, want)
			}
		}
	}

	code, _, stderr = ortel(t, "import", "--model", "vad", "--out", out, prof)
	if code != 2 || !strings.Contains(stderr, "--append") {
		t.Fatalf("second import into the same folder: exit %d\n%s", code, stderr)
	}
	if n := len(readSpans(t, filepath.Join(out, "traces.jsonl"))); n != once {
		t.Fatalf("a refused import changed the file: %d spans", n)
	}
	if code, _, stderr = ortel(t, "import", "--append", "--model", "vad", "--out", out, prof); code != 0 {
		t.Fatalf("--append: exit %d\n%s", code, stderr)
	}
	if n := len(readSpans(t, filepath.Join(out, "traces.jsonl"))); n != 2*once {
		t.Fatalf("--append: %d spans, want %d", n, 2*once)
	}
	if code, _, stderr = ortel(t, "import", "--overwrite", "--model", "vad", "--out", out, prof); code != 0 {
		t.Fatalf("--overwrite: exit %d\n%s", code, stderr)
	}
	if n := len(readSpans(t, filepath.Join(out, "traces.jsonl"))); n != once {
		t.Fatalf("--overwrite: %d spans, want %d", n, once)
	}
	if code, _, _ = ortel(t, "import", "--overwrite", "--append", prof); code != 2 {
		t.Fatalf("--overwrite with --append: exit %d, want 2", code)
	}
}

// TestImportNothingImported: a JSON array that is no ORT profile, and one
// with operators but no run, exit 1 naming why and leave no output behind.
func TestImportNothingImported(t *testing.T) {
	dir := t.TempDir()
	notORT := filepath.Join(dir, "a.json")
	os.WriteFile(notORT, []byte(`[{"a":1}]`), 0o644)
	noRuns := filepath.Join(dir, "b.json")
	os.WriteFile(noRuns, []byte(`[{"cat":"Node","name":"c_kernel_time","ts":1,"dur":2,"args":{"op_name":"Conv"}}]`), 0o644)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	for _, tc := range []struct{ file, why string }{
		{notORT, "not an ONNX Runtime profile"},
		{noRuns, "no model_run"},
	} {
		out := filepath.Join(dir, "out")
		code, stdout, stderr := ortel(t, "import", "--out", out, tc.file)
		if code != 1 || !strings.Contains(stderr, tc.why) || !strings.Contains(stderr, "nothing was imported") {
			t.Errorf("%s: exit %d\n%s\n%s", tc.file, code, stdout, stderr)
		}
		if strings.Contains(stdout, "wrote") {
			t.Errorf("%s: stdout claims a write:\n%s", tc.file, stdout)
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Errorf("%s: output folder left behind (%v)", tc.file, err)
		}
	}
}

// TestImportOTLP sends a real profile to the in-process OTLP receiver: the
// count printed is the count the receiver holds.
//
// Over both protocols: with OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf the
// spans go to the receiver's OTLP/HTTP port (a gRPC client there gets
// nothing through).
func TestImportOTLP(t *testing.T) {
	for _, proto := range []string{"grpc", "http/protobuf"} {
		t.Run(proto, func(t *testing.T) {
			rcv, err := otlptest.Start(otlptest.WithHTTP("127.0.0.1:0"))
			if err != nil {
				t.Fatal(err)
			}
			defer rcv.Close()
			dir := t.TempDir()
			prof := gunzipTo(t, "../../instrument/profile/testdata/det_ort1.30.0.json.gz", filepath.Join(dir, "det.json"))
			endpoint := rcv.Endpoint()
			if proto != "grpc" {
				endpoint = rcv.HTTPEndpoint()
			}
			t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://"+endpoint)
			t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", proto)
			code, stdout, stderr := ortel(t, "import", "--model-name", "det", prof)
			if code != 0 {
				t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
			}
			n := len(rcv.Spans())
			if n == 0 || !strings.Contains(stdout, "sent "+strconv.Itoa(n)+" spans") {
				t.Fatalf("receiver holds %d spans; stdout:\n%s", n, stdout)
			}
		})
	}
}
