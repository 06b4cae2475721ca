package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	metricspb "go.opentelemetry.io/proto/otlp/metrics/v1"

	"github.com/ortel-dev/ortel/instrument/ortlib"
	"github.com/ortel-dev/ortel/internal/attach/discover"
	"github.com/ortel-dev/ortel/receivers/process"
	"github.com/ortel-dev/ortel/test/otlptest"
	"github.com/ortel-dev/ortel/test/testenv"
)

// memoryPIDs returns the process.pid values of the process.memory.usage
// points in rms.
func memoryPIDs(rms []*metricspb.ResourceMetrics) map[int64]bool {
	out := map[int64]bool{}
	for _, rm := range rms {
		for _, sm := range rm.GetScopeMetrics() {
			for _, m := range sm.GetMetrics() {
				if m.GetName() != "process.memory.usage" {
					continue
				}
				for _, attrs := range pointAttrs(m) {
					if pid, ok := otlptest.AttrInt(attrs, "process.pid"); ok {
						out[pid] = true
					}
				}
			}
		}
	}
	return out
}

// agentRun is an agent running in this process, its stderr read line by
// line.
type agentRun struct {
	t        *testing.T
	deadline context.Context
	stop     context.CancelFunc
	lines    chan string
	done     chan int
	log      []string
}

// startAgent runs `ortel args...` in the background until finish; every
// wait is bounded by deadline.
func startAgent(t *testing.T, deadline context.Context, args ...string) *agentRun {
	t.Helper()
	ctx, stop := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	a := &agentRun{t: t, deadline: deadline, stop: stop, lines: make(chan string, 100), done: make(chan int, 1)}
	go func() {
		code := run(ctx, &env{stdout: io.Discard, stderr: pw}, args)
		pw.Close()
		a.done <- code
	}()
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			a.lines <- sc.Text()
		}
		close(a.lines)
	}()
	t.Cleanup(stop)
	return a
}

// waitLine reads the agent's lines until one holds want, and returns it.
func (a *agentRun) waitLine(want string) string {
	a.t.Helper()
	for {
		select {
		case l, ok := <-a.lines:
			if !ok {
				a.t.Fatalf("the agent ended before saying %q:\n%s", want, a.text())
			}
			a.log = append(a.log, l)
			if strings.Contains(l, want) {
				return l
			}
		case <-a.deadline.Done():
			a.t.Fatalf("the agent did not say %q:\n%s", want, a.text())
		}
	}
}

func (a *agentRun) text() string { return strings.Join(a.log, "\n") }

// finish stops the agent and returns its exit code and everything it said.
func (a *agentRun) finish() (int, string) {
	a.stop()
	for l := range a.lines {
		a.log = append(a.log, l)
	}
	return <-a.done, a.text()
}

// TestAgentDiscoversONNXRuntimeProcesses starts the agent with --discover,
// then a real Node.js process that loads ONNX Runtime (onnxruntime-node):
// the agent must say it watches it and export its process.* readings to a
// real OTLP receiver, with its process.pid; when it exits, the agent must
// say so and its readings must stop. Every wait is on an event (a stderr
// line, an export) under one generous deadline.
func TestAgentDiscoversONNXRuntimeProcesses(t *testing.T) {
	if _, err := exec.LookPath("node"); err != nil {
		testenv.Missing(t, "needs Node.js (node) on PATH: %v", err)
	}
	mods := filepath.Join(ortlib.CacheDir(), "node", "1.30.0", "node_modules")
	if _, err := os.Stat(filepath.Join(mods, "onnxruntime-node")); err != nil {
		testenv.Missing(t, "needs onnxruntime-node 1.30.0 (%v): scripts/fetch.sh node", err)
	}
	rcv, err := otlptest.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer rcv.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
	deadline, cancelDeadline := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancelDeadline()

	a := startAgent(t, deadline, "agent", "--discover", "--discover-interval", "200ms",
		"--interval", "100ms", "--otlp-endpoint", "http://"+rcv.Endpoint(), "--out", t.TempDir())
	a.waitLine("discovering processes that load ONNX Runtime every 200ms")

	// Node.js starts after the agent, and loads ONNX Runtime.
	node := exec.Command("node", "../../internal/attach/testdata/client.js", mods)
	in, _ := node.StdinPipe()
	outPipe, _ := node.StdoutPipe()
	if err := node.Start(); err != nil {
		testenv.Missing(t, "node: %v", err)
	}
	reaped := false
	defer func() {
		in.Close()
		if !reaped {
			node.Process.Kill()
			node.Wait()
		}
	}()
	if sc := bufio.NewScanner(outPipe); !sc.Scan() || sc.Text() != "ready" {
		t.Fatalf("node client did not say ready: %q", sc.Text())
	}
	pid := node.Process.Pid
	named := fmt.Sprintf("process %d (node)", pid)
	a.waitLine("watching " + named + ", which loaded ONNX Runtime ")
	err = rcv.WaitMetrics(deadline, func(r *otlptest.Receiver) bool { return memoryPIDs(r.ResourceMetrics())[int64(pid)] })
	if err != nil {
		t.Fatalf("no process.memory.usage point with process.pid %d: %v\n%s", pid, err, a.text())
	}
	if len(rcv.Metric("process.cpu.time")) == 0 {
		t.Error("no process.cpu.time exported")
	}

	// It exits: said once, and its readings stop.
	node.Process.Kill()
	node.Wait()
	reaped = true
	a.waitLine(named + " exited")
	// The export after next was collected after the agent dropped it.
	_, n := rcv.Requests()
	if err := rcv.WaitRequests(deadline, 0, n+2); err != nil {
		t.Fatal(err)
	}
	rms := rcv.ResourceMetrics()
	if last := rms[len(rms)-1:]; memoryPIDs(last)[int64(pid)] {
		t.Errorf("process %d is still reported after it exited", pid)
	}
	code, all := a.finish()
	// Stopping the agent aborts an export in flight, which is spooled
	// (exit 4, nothing lost): the stop may land in one.
	if code != exitOK && (code != exitTelemetryLost || strings.Contains(all, "telemetry lost")) {
		t.Fatalf("agent exit %d:\n%s", code, all)
	}
	if strings.Count(all, "watching "+named) != 1 || strings.Count(all, named+" exited") != 1 {
		t.Errorf("the start and the exit must each be said once:\n%s", all)
	}
	// The agent (this test process) is not watched unless it maps ONNX
	// Runtime itself (an earlier test in this process may have loaded it).
	self := os.Getpid()
	if memoryPIDs(rcv.ResourceMetrics())[int64(self)] && !strings.Contains(all, fmt.Sprintf("watching process %d ", self)) {
		t.Errorf("the agent watched itself without --pid and without loading ONNX Runtime")
	}
}

// TestDiscoveryLeavesPIDFlagsAlone: a process given with --pid stays
// watched when discovery sees it go (the receiver reports its exit
// itself), while one discovery added is dropped; each change is said once.
func TestDiscoveryLeavesPIDFlagsAlone(t *testing.T) {
	start := func() int {
		cmd := exec.Command("sleep", "600")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		return cmd.Process.Pid
	}
	given, found := start(), start()
	proc, err := process.New(process.WithPIDs(given))
	if err != nil {
		t.Fatal(err)
	}
	defer proc.Shutdown(context.Background())
	var out strings.Builder
	d := &discovery{w: &out, proc: proc, explicit: map[int]bool{given: true}, every: time.Second, first: true}
	ps := []discover.Process{{PID: given, Exe: "sleep", Library: "/lib/libonnxruntime.so.1"}, {PID: found, Exe: "sleep", Library: "/lib/libonnxruntime.so.1"}}
	d.apply(discover.Change{Started: ps, Unreadable: 2}, nil)
	if got := proc.PIDs(); !slices.Equal(got, []int{given, found}) {
		t.Fatalf("watching %v, want [%d %d]", got, given, found)
	}
	d.apply(discover.Change{Exited: ps[:1], Unloaded: ps[1:]}, nil)
	if got := proc.PIDs(); !slices.Equal(got, []int{given}) {
		t.Fatalf("watching %v after both went, want the --pid one, [%d]", got, given)
	}
	d.apply(discover.Change{}, errors.New("discover: list processes: boom"))
	d.apply(discover.Change{}, errors.New("discover: list processes: boom"))
	want := []string{
		"discovering processes that load ONNX Runtime every 1s: 2 found",
		"2 processes could not be read and are not watched",
		fmt.Sprintf("watching process %d (sleep), which loaded ONNX Runtime /lib/libonnxruntime.so.1", found),
		fmt.Sprintf("process %d (sleep) no longer maps ONNX Runtime", found),
		"boom; rescanning every 1s",
	}
	for _, w := range want {
		if strings.Count(out.String(), w) != 1 {
			t.Errorf("said %q %d times, want once:\n%s", w, strings.Count(out.String(), w), out.String())
		}
	}
	if strings.Contains(out.String(), fmt.Sprintf("process %d", given)) {
		t.Errorf("discovery spoke of the --pid process %d:\n%s", given, out.String())
	}
}
