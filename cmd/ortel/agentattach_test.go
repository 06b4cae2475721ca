package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ortel-dev/ortel/instrument/ortlib"
	"github.com/ortel-dev/ortel/internal/attach"
	"github.com/ortel-dev/ortel/test/otlptest"
	"github.com/ortel-dev/ortel/test/testenv"
)

// The fixture pod of TestAgentAttachesDiscoveredProcesses: a burstable
// pod under the kubelet's systemd driver and containerd.
const (
	fixturePodUID      = "7c9e6679-7425-40de-944b-e07fc1f90ae7"
	fixtureContainerID = "3f1b2c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f801"
	fixtureCgroup      = "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod7c9e6679_7425_40de_944b_e07fc1f90ae7.slice/" +
		"cri-containerd-" + fixtureContainerID + ".scope\n"
)

// addFixtureProcess puts process pid into the fixture host root: every
// entry of its real /proc folder, linked, except its cgroup file, which
// places it in the fixture pod. The folder appears whole (renamed into
// place), so a scan never sees half of it.
func addFixtureProcess(t *testing.T, root string, pid int) {
	t.Helper()
	real := filepath.Join("/proc", fmt.Sprint(pid))
	entries, err := os.ReadDir(real)
	if err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(root, "proc", fmt.Sprintf(".%d", pid))
	if err := os.Mkdir(tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() == "cgroup" {
			continue
		}
		to := filepath.Join(real, e.Name())
		if e.Name() == "exe" { // read as a link: its target names the executable
			if to, err = os.Readlink(to); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Symlink(to, filepath.Join(tmp, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(tmp, "cgroup"), []byte(fixtureCgroup), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(root, "proc", fmt.Sprint(pid))); err != nil {
		t.Fatalf("the fixture host already has a process %d: %v", pid, err)
	}
}

// perfEventFDs counts this process's open perf events: each attached
// uprobe holds one.
func perfEventFDs(t *testing.T) int {
	t.Helper()
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range entries {
		if l, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name())); err == nil && l == "anon_inode:[perf_event]" {
			n++
		}
	}
	return n
}

// TestAgentAttachesDiscoveredProcesses is issue 22's "done when": the
// agent starts with discovery and attach on, on a fixture host root; then
// a real Node.js onnxruntime-node client starts, in a fixture pod (its
// cgroup file), and runs Silero VAD. The agent must say it attached it,
// and a real OTLP receiver must get its run spans and its
// onnxruntime.run.duration points, each with the pod's k8s.pod.uid and
// container.id. When the client exits, the agent must say its probes are
// removed, and the uprobes' perf events it held must be closed. Every
// wait is on an event under one generous deadline. Planted: the agent not
// removing an exited process (Remove not called): the perf events stayed
// open and the test failed; the pod read from /proc instead of the host
// root: no k8s.pod.uid, failed.
func TestAgentAttachesDiscoveredProcesses(t *testing.T) {
	if st := attach.Check(); !st.Available {
		testenv.Missing(t, "attach cannot use eBPF here: %s (run the tests as root on Linux 5.8+)", st.Reason)
	}
	if _, err := exec.LookPath("node"); err != nil {
		testenv.Missing(t, "needs Node.js (node) on PATH: %v", err)
	}
	mods := filepath.Join(ortlib.CacheDir(), "node", "1.30.0", "node_modules")
	if _, err := os.Stat(filepath.Join(mods, "onnxruntime-node")); err != nil {
		testenv.Missing(t, "needs onnxruntime-node 1.30.0 (%v): scripts/fetch.sh node", err)
	}
	model := testenv.Model(t, "silero_vad_v5.onnx")
	rcv, err := otlptest.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer rcv.Close()
	root := hostRoot(t, false)
	t.Setenv("ORTEL_HOST_ROOT", root)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
	deadline, cancelDeadline := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancelDeadline()
	baseFDs := perfEventFDs(t)

	a := startAgent(t, deadline, "agent", "--discover", "--discover-interval", "200ms",
		"--attach", "--attach-span-ratio", "1", "--attach-duty", "always",
		"--interval", "100ms", "--otlp-endpoint", "http://"+rcv.Endpoint(), "--out", t.TempDir())
	a.waitLine("discovering processes that load ONNX Runtime every 200ms")

	// The client starts after the agent, in the fixture pod.
	node := exec.Command("node", "../../internal/attach/testdata/client.js", mods)
	in, _ := node.StdinPipe()
	outPipe, _ := node.StdoutPipe()
	if err := node.Start(); err != nil {
		t.Fatal(err)
	}
	reaped := false
	defer func() {
		in.Close()
		if !reaped {
			node.Process.Kill()
			node.Wait()
		}
	}()
	answers := bufio.NewScanner(outPipe)
	ask := func(cmd string) string {
		t.Helper()
		fmt.Fprintln(in, cmd)
		if !answers.Scan() {
			t.Fatalf("node client ended after %q", cmd)
		}
		return answers.Text()
	}
	if !answers.Scan() || answers.Text() != "ready" {
		t.Fatalf("node client did not say ready: %q", answers.Text())
	}
	pid := node.Process.Pid
	addFixtureProcess(t, root, pid)
	named := fmt.Sprintf("process %d (node)", pid)
	if l := a.waitLine("watching " + named + ", which loaded ONNX Runtime "); !strings.HasSuffix(l, "; probes attached") {
		t.Fatalf("the agent did not attach the client:\n%s", a.text())
	}
	if n := perfEventFDs(t) - baseFDs; n < 9 {
		t.Errorf("%d perf events opened for the client's probes, want 9 or more", n)
	}
	if got := ask("create " + model); got != "created" {
		t.Fatalf("client create: %q", got)
	}
	if got := ask("run 50"); !strings.HasPrefix(got, "ran 50 ") {
		t.Fatalf("client run: %q", got)
	}

	// Its run spans and run histogram reach the receiver, with its pod.
	inPod := func(s otlptest.Span) bool {
		p, _ := otlptest.AttrInt(s.Attributes, "process.pid")
		uid, _ := otlptest.AttrString(s.Attributes, "k8s.pod.uid")
		cid, _ := otlptest.AttrString(s.Attributes, "container.id")
		return p == int64(pid) && uid == fixturePodUID && cid == fixtureContainerID
	}
	err = rcv.WaitSpans(deadline, func(spans []otlptest.Span) bool {
		n := 0
		for _, s := range otlptest.SpansNamed(spans, "run silero_vad_v5") {
			if inPod(s) {
				n++
			}
		}
		return n == 50
	})
	if err != nil {
		t.Fatalf("50 run spans of process %d in pod %s: %v\n%s", pid, fixturePodUID, err, a.text())
	}
	err = rcv.WaitMetrics(deadline, func(r *otlptest.Receiver) bool {
		for _, m := range r.Metric("onnxruntime.run.duration") {
			for _, p := range m.GetHistogram().GetDataPoints() {
				uid, _ := otlptest.AttrString(p.Attributes, "k8s.pod.uid")
				pp, _ := otlptest.AttrInt(p.Attributes, "process.pid")
				if uid == fixturePodUID && pp == int64(pid) && p.GetCount() == 50 {
					return true
				}
			}
		}
		return false
	})
	if err != nil {
		t.Fatalf("no onnxruntime.run.duration point counting 50 runs of process %d in pod %s: %v", pid, fixturePodUID, err)
	}

	// It exits: its probes are removed.
	node.Process.Kill()
	node.Wait()
	reaped = true
	// Said as an exit, or as an unload when a scan caught it exiting (its
	// memory map already gone, not yet a zombie).
	if l := a.waitLine(named); !strings.HasSuffix(l, "; its probes are removed") {
		t.Errorf("the agent did not remove the client's probes: %q", l)
	}
	if n := perfEventFDs(t) - baseFDs; n != 0 {
		t.Errorf("%d perf events still open after the client exited and was detached", n)
	}
	code, all := a.finish()
	if code != exitOK && (code != exitTelemetryLost || strings.Contains(all, "telemetry lost")) {
		t.Fatalf("agent exit %d:\n%s", code, all)
	}
	if !strings.Contains(all, "attach: 1 process attached") || !strings.Contains(all, "50 runs seen (0 failed), 50 spans, 0 shed, 0 lost") {
		t.Errorf("the agent's summary does not count the client's runs:\n%s", all)
	}
}

// TestAgentAttachBadFlags: each bad use of the attach flags is a usage
// error (exit 2) naming the flag, before anything is attached; the
// engine's rules (attach.ValidateFleet) reach the user as flags.
func TestAgentAttachBadFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--attach"}, "--attach needs --discover"},
		{[]string{"--attach-duty", "3s/1m"}, "--attach-duty needs --attach"},
		{[]string{"--discover", "--attach", "--attach-duty", "3s"}, `--attach-duty "3s": want ON/PERIOD`},
		{[]string{"--discover", "--attach", "--attach-duty", "2m/1m"}, "--attach-duty 2m0s/1m0s: want a time attached no longer than its period"},
		{[]string{"--discover", "--attach", "--attach-duty", "100ms/1m"}, "--attach-duty 100ms/1m0s: attach for 1s or more"},
		{[]string{"--discover", "--attach", "--attach-span-ratio", "1.5"}, "--attach-span-ratio 1.5: want a share from 0 to 1"},
		{[]string{"--discover", "--attach", "--attach-max-probes", "3"}, "--attach-max-process-probes and --attach-max-probes must allow one library's 9 probes"},
		{[]string{"--discover", "--attach", "--attach-max-runs", "-1"}, "--attach-max-runs -1: want a number above 0"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, _, stderr := ortel(t, append([]string{"agent", "--out", t.TempDir()}, tc.args...)...)
			if code != exitUsage || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, want %d with %q:\n%s", code, exitUsage, tc.want, stderr)
			}
		})
	}
}

// TestAgentAttachDefaultDuty: --attach-duty's default is the engine's
// fleet default, the one BenchmarkFleetCostNode measures, and the chart's.
func TestAgentAttachDefaultDuty(t *testing.T) {
	x := attachFlags{on: true, duty: defaultDuty, spanRatio: 0.01}
	fs := newFlagSet("agent")
	if err := x.validate(fs, true); err != nil {
		t.Fatal(err)
	}
	if x.dutyOn != attach.FleetDutyOn || x.dutyPeriod != attach.FleetDutyPeriod {
		t.Errorf("--attach-duty default %q is %s/%s, want attach's %s/%s", defaultDuty, x.dutyOn, x.dutyPeriod, attach.FleetDutyOn, attach.FleetDutyPeriod)
	}
	values, err := os.ReadFile("../../otelcol-config/helm/ortel/values.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(values), "\n    duty: "+defaultDuty+"\n") {
		t.Errorf("the chart's agent.attach.duty is not %s", defaultDuty)
	}
}
