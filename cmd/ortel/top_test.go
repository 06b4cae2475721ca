package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/ortel-dev/ortel/internal/hardware"
	"github.com/ortel-dev/ortel/internal/liveview"
	"github.com/ortel-dev/ortel/semconv"
	"github.com/ortel-dev/ortel/test/testenv"
)

// TestTopInTmux runs `ortel top` in an 80x24 tmux pane against a live view
// fed by a real run.duration histogram and the real hardware receivers: it
// shows latency (4ms runs fall in the 2.5-5ms bucket: p50 3.75ms) and
// hardware lines within the pane, follows a resize to
// 60x20, and exits on q.
func TestTopInTmux(t *testing.T) {
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		const msg = "needs tmux for the ortel top test: apt-get install -y tmux"
		testenv.Missing(t, "%s", msg)
	}
	bin := buildOrtel(t)

	reader := liveview.NewReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer func() { _ = mp.Shutdown(context.Background()) }()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	hw := hardware.Open(ctx, hardware.Config{MeterProvider: mp})
	defer hw.Shutdown(context.Background())
	runs, err := semconv.NewOnnxruntimeRunDuration(mp.Meter("test"))
	if err != nil {
		t.Fatal(err)
	}
	view := liveview.New(reader, liveview.Config{})
	srv, err := liveview.Serve(view, "0", false, "")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	go view.Run(ctx)
	go func() { // runs keep ending while top watches
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				runs.Record(ctx, 0.004)
			}
		}
	}()

	sock := filepath.Join(t.TempDir(), "tmux.sock")
	tm := func(args ...string) string {
		t.Helper()
		out, err := exec.Command(tmux, append([]string{"-S", sock}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("tmux %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	tm("-f", os.DevNull, "new-session", "-d", "-x", "80", "-y", "24", "-s", "top",
		bin+" top "+srv.Addr().String())
	defer func() { _ = exec.Command(tmux, "-S", sock, "kill-server").Run() }()

	// capture waits until the pane shows every word of want.
	capture := func(want ...string) []string {
		t.Helper()
		deadline := time.Now().Add(time.Minute)
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for range tick.C {
			pane := tm("capture-pane", "-p", "-t", "top")
			ok := true
			for _, w := range want {
				ok = ok && strings.Contains(pane, w)
			}
			if ok {
				return strings.Split(strings.TrimRight(pane, "\n"), "\n")
			}
			if time.Now().After(deadline) {
				t.Fatalf("after a minute the pane still lacks %q:\n%s", want, pane)
			}
		}
		return nil
	}
	fits := func(lines []string, w, h int) {
		t.Helper()
		if len(lines) > h {
			t.Errorf("%d lines in a %d-line pane", len(lines), h)
		}
		for _, l := range lines {
			if n := utf8.RuneCountInString(l); n > w {
				t.Errorf("line of %d columns in a %d-column pane: %q", n, w, l)
			}
		}
	}
	lines := capture("latency  p50 3.75ms", "cpu ", "memory ", "q quits")
	fits(lines, 80, 24)

	tm("resize-window", "-t", "top", "-x", "60", "-y", "20")
	lines = capture("latency", "q quits")
	fits(lines, 60, 20)

	tm("send-keys", "-t", "top", "q")
	deadline := time.Now().Add(30 * time.Second)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for range tick.C {
		if exec.Command(tmux, "-S", sock, "has-session", "-t", "top").Run() != nil {
			return // top exited, and its session with it
		}
		if time.Now().After(deadline) {
			t.Fatalf("ortel top still runs 30 s after q:\n%s", tm("capture-pane", "-p", "-t", "top"))
		}
	}
}

// TestTopRefusesAPipe: with its standard output a pipe, ortel top draws
// nothing (no escape codes), says why and what works, and exits with 2;
// no live view is needed to find that out.
func TestTopRefusesAPipe(t *testing.T) {
	bin := buildOrtel(t)
	// A bound for a broken top that would draw into the pipe for ever.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "top", "127.0.0.1:1")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output() // stdout is a pipe
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitUsage {
		t.Errorf("exit: %v, want status %d", err, exitUsage)
	}
	if strings.Contains(string(out), "\x1b[") {
		t.Errorf("escape codes written into the pipe: %q", out)
	}
	if !strings.Contains(stderr.String(), "not a terminal") || !strings.Contains(stderr.String(), "--once") {
		t.Errorf("stderr does not say why and what works:\n%s", stderr.String())
	}
}
