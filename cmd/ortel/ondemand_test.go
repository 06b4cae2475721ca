package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ortel-dev/ortel/test/testenv"
)

// benchOnDemandArgs runs a short bench with no profiling pass, so that
// every operator span in its traces comes from an on-demand request.
func benchOnDemandArgs(t *testing.T, out string, extra ...string) []string {
	return append([]string{"bench", "--scenario", "server", "--qps", "500", "--duration", "4s", "--warmup", "3", "--profile-runs", "0",
		"--profile-on-demand", "3", "--no-hardware", "--quiet", "--out", out}, append(extra, chainModel(t))...)
}

// checkOnDemandRuns checks that the bench's traces hold operator spans and
// its report notes the runs profiled on demand.
func checkOnDemandRuns(t *testing.T, out string) {
	t.Helper()
	ops := 0
	for _, sp := range readSpans(t, filepath.Join(out, "traces.jsonl")) {
		for _, a := range sp.Attributes {
			if a.Key == "onnxruntime.node.op_type" {
				ops++
			}
		}
	}
	if ops == 0 {
		t.Error("no operator spans in traces.jsonl: the on-demand runs were not profiled")
	}
	b, err := os.ReadFile(filepath.Join(out, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Notes []string `json:"notes"`
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	for _, n := range rep.Notes {
		if strings.Contains(n, "profiled on demand") {
			return
		}
	}
	t.Errorf("report notes %q: none says runs were profiled on demand", rep.Notes)
}

// TestBenchProfilesOnSignal sends SIGUSR1 to a running `ortel bench` until
// it accepts, then checks that the next runs carried operator spans.
func TestBenchProfilesOnSignal(t *testing.T) {
	out := t.TempDir()
	watching := make(chan struct{}, 1)
	onDemandStarted = func() { watching <- struct{}{} }
	defer func() { onDemandStarted = nil }()
	var stderr testenv.SyncBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(context.Background(), &env{stdout: io.Discard, stderr: &stderr}, benchOnDemandArgs(t, out))
	}()
	select {
	case <-watching:
	case code := <-done:
		t.Fatalf("bench exited %d before watching the signal:\n%s", code, stderr.String())
	}
	accepted := false
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for !accepted {
		if err := syscall.Kill(os.Getpid(), syscall.SIGUSR1); err != nil {
			t.Fatal(err)
		}
		select {
		case code := <-done:
			t.Fatalf("bench exited %d before accepting the signal:\n%s", code, stderr.String())
		case <-tick.C:
		}
		accepted = strings.Contains(stderr.String(), "profiling the next 3 runs")
	}
	if code := <-done; code != 0 {
		t.Fatalf("bench exited %d:\n%s", code, stderr.String())
	}
	checkOnDemandRuns(t, out)
}

// TestBenchProfilesOnEndpoint calls POST /api/v1/profile on the live view of
// a running `ortel bench --ui`: bad run counts and other origins are
// refused, the first good request is accepted (after the sessions opened),
// the next one within 10s is rate-limited, and the runs carry operator
// spans.
func TestBenchProfilesOnEndpoint(t *testing.T) {
	out := t.TempDir()
	urls := make(chan string, 1)
	uiStarted = func(u string) { urls <- u }
	defer func() { uiStarted = nil }()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stderr testenv.SyncBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, &env{stdout: io.Discard, stderr: &stderr}, benchOnDemandArgs(t, out, "--ui", "0"))
	}()
	var base string
	select {
	case base = <-urls:
	case code := <-done:
		t.Fatalf("bench exited %d before serving the live view:\n%s", code, stderr.String())
	}
	base = strings.TrimSuffix(base, "/")
	post := func(query string, origin string) int {
		req, err := http.NewRequest(http.MethodPost, base+"/api/v1/profile"+query, nil)
		if err != nil {
			t.Fatal(err)
		}
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, q := range []string{"?runs=0", "?runs=1001", "?runs=x"} {
		if code := post(q, ""); code != http.StatusBadRequest {
			t.Errorf("POST %s: %d, want 400", q, code)
		}
	}
	if code := post("?runs=2", "http://elsewhere.example"); code != http.StatusForbidden {
		t.Errorf("POST from another origin: %d, want 403", code)
	}
	// The bench measures for 4s after loading; its sessions stay open
	// until then, so a request must be accepted well within a minute.
	deadline := time.Now().Add(time.Minute)
	for {
		code := post("?runs=2", "")
		if code == http.StatusAccepted {
			break
		}
		if code != http.StatusConflict || time.Now().After(deadline) {
			t.Fatalf("POST ?runs=2: %d, want 202, or 409 before the sessions open:\n%s", code, stderr.String())
		}
		select {
		case code := <-done:
			t.Fatalf("bench exited %d before accepting a request:\n%s", code, stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	if code := post("", ""); code != http.StatusTooManyRequests {
		t.Errorf("second POST within 10s: %d, want 429", code)
	}
	// The report is served once the bench finished; then stop the view.
	deadline = time.Now().Add(2 * time.Minute)
	for {
		resp, err := http.Get(base + "/api/v1/report")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no report 2 minutes after the request:\n%s", stderr.String())
		}
		select {
		case code := <-done:
			t.Fatalf("bench exited %d before its report:\n%s", code, stderr.String())
		case <-time.After(50 * time.Millisecond):
		}
	}
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("bench exited %d:\n%s", code, stderr.String())
	}
	checkOnDemandRuns(t, out)
}
