//go:build linux

package attach

import (
	"bufio"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cilium/ebpf"

	"github.com/ortel-dev/ortel/instrument/ortlib"
	"github.com/ortel-dev/ortel/test/testenv"
)

// requireEBPF skips (locally) or fails (CI) when attach cannot work here.
func requireEBPF(t testing.TB) {
	t.Helper()
	if st := Check(); !st.Available {
		testenv.Missing(t, "attach cannot use eBPF here: %s (run the tests as root on Linux 5.8+)", st.Reason)
	}
}

// nodeModules returns the node_modules folder holding onnxruntime-node
// at version, installed by scripts/fetch.sh node.
func nodeModules(t testing.TB, version string) string {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		testenv.Missing(t, "needs Node.js (node) on PATH: %v", err)
	}
	dir := filepath.Join(ortlib.CacheDir(), "node", version, "node_modules")
	if _, err := os.Stat(filepath.Join(dir, "onnxruntime-node", "package.json")); err != nil {
		testenv.Missing(t, "needs onnxruntime-node %s (%v); install it with: scripts/fetch.sh node", version, err)
	}
	return dir
}

// nodeClient is a running testdata/client.js.
type nodeClient struct {
	t     testing.TB
	cmd   *exec.Cmd
	stdin io.WriteCloser
	out   *bufio.Scanner
}

// startNode starts the client on onnxruntime-node at version and waits
// until it has loaded ONNX Runtime.
func startNode(t testing.TB, version string) *nodeClient {
	t.Helper()
	return startNodeIn(t, nodeModules(t, version))
}

// privateNodeModules copies onnxruntime-node at version, with the
// onnxruntime-common it needs, into a folder of the test's own: its
// libonnxruntime.so.1 is a file no other process maps, so a probe on that
// library (WithLibrary) sees only this test's clients, not those of tests
// of other packages, or other programs, running at the same time on the
// shared copy.
func privateNodeModules(t testing.TB, version string) string {
	t.Helper()
	shared := nodeModules(t, version)
	mods := filepath.Join(t.TempDir(), "node_modules")
	if err := os.MkdirAll(mods, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, pkg := range []string{"onnxruntime-node", "onnxruntime-common"} {
		if out, err := exec.Command("cp", "-a", filepath.Join(shared, pkg), mods).CombinedOutput(); err != nil {
			t.Fatalf("copy %s: %v\n%s", pkg, err, out)
		}
	}
	return mods
}

// startNodeIn starts the client on the onnxruntime-node in the folder
// mods and waits until it has loaded ONNX Runtime.
func startNodeIn(t testing.TB, mods string) *nodeClient {
	t.Helper()
	cmd := exec.Command("node", "testdata/client.js", mods)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &nodeClient{t: t, cmd: cmd, stdin: stdin, out: bufio.NewScanner(stdout)}
	t.Cleanup(func() {
		stdin.Close()
		cmd.Process.Kill()
		cmd.Wait()
	})
	if got := c.read(); got != "ready" {
		t.Fatalf("node client: want ready, got %q", got)
	}
	return c
}

func (c *nodeClient) pid() int { return c.cmd.Process.Pid }

func (c *nodeClient) read() string {
	c.t.Helper()
	if !c.out.Scan() {
		c.t.Fatalf("node client ended: %v", c.out.Err())
	}
	return c.out.Text()
}

// do sends one command and returns the answer, failing on "error ...".
func (c *nodeClient) do(cmd string) string {
	c.t.Helper()
	if _, err := io.WriteString(c.stdin, cmd+"\n"); err != nil {
		c.t.Fatal(err)
	}
	got := c.read()
	if strings.HasPrefix(got, "error") {
		c.t.Fatalf("node client %q: %s", cmd, got)
	}
	return got
}

// runTracer runs tr in the background; the returned stop cancels it and
// waits for it to have read every event already sent.
func runTracer(t testing.TB, tr *Tracer) (stop func() StopReason) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	type result struct {
		r   StopReason
		err error
	}
	done := make(chan result, 1)
	go func() {
		r, err := tr.Run(ctx)
		done <- result{r, err}
	}()
	return func() StopReason {
		cancel()
		res := <-done
		if res.err != nil {
			t.Errorf("Run: %v", res.err)
		}
		return res.r
	}
}

// tracefsProbes lists uprobe_events lines of ortel's group, where tracefs
// is mounted (uprobes attached through perf events do not appear there;
// those the tracefs fallback creates do).
func tracefsProbes(t testing.TB) []string {
	t.Helper()
	var out []string
	for _, p := range []string{"/sys/kernel/tracing/uprobe_events", "/sys/kernel/debug/tracing/uprobe_events"} {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		for _, l := range strings.Split(string(b), "\n") {
			if strings.Contains(l, "ortel") {
				out = append(out, l)
			}
		}
	}
	return out
}

// programIDs returns the ids of the programs tr loaded.
func programIDs(t testing.TB, tr *Tracer) []ebpf.ProgramID {
	t.Helper()
	var ids []ebpf.ProgramID
	for name, p := range tr.probes.coll.Programs {
		info, err := p.Info()
		if err != nil {
			t.Fatalf("info of %s: %v", name, err)
		}
		id, ok := info.ID()
		if !ok {
			t.Fatalf("no id for %s", name)
		}
		ids = append(ids, id)
	}
	return ids
}

// requireDetached fails when any program of a closed Tracer is still
// loaded (an attached probe holds its program), or tracefs still lists
// an ortel uprobe. Only this Tracer's programs are looked at, so tests of
// other packages attaching at the same time do not disturb it.
func requireDetached(t testing.TB, ids []ebpf.ProgramID) {
	t.Helper()
	if len(ids) == 0 {
		t.Fatal("no program ids: the check would prove nothing")
	}
	for _, id := range ids {
		p, err := ebpf.NewProgramFromID(id)
		if err == nil {
			info, _ := p.Info()
			p.Close()
			t.Errorf("program %d (%s) still loaded after Close", id, info.Name)
		} else if !errors.Is(err, os.ErrNotExist) {
			t.Errorf("look up program %d: %v", id, err)
		}
	}
	if left := tracefsProbes(t); len(left) > 0 {
		t.Errorf("uprobe events left in tracefs after Close: %v", left)
	}
}
