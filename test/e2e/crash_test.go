//go:build e2e

package e2e

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	colmetricspb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/ortel-dev/ortel/internal/onnxgen"
	"github.com/ortel-dev/ortel/internal/telemetry/otlpjson"
	"github.com/ortel-dev/ortel/test/otlptest"
	"github.com/ortel-dev/ortel/test/testenv"
)

// The crash test's schedule. ORTEL_CRASH_ITERATIONS and ORTEL_CRASH_SEED
// override the count and the seed (printed, to replay a failing run).
const (
	crashIterations = 200
	// Every crashGraceful-th iteration ends with SIGTERM instead of
	// SIGKILL: the exit must then say what it wrote and lost, and the
	// files must hold exactly that.
	crashGraceful = 10
	// crashKillWithin bounds the random moment of the kill, after the
	// process's first record reached its file.
	crashKillWithin = 250 * time.Millisecond
	crashStartLimit = time.Minute // a process's first record
	// crashDamageOneIn: one start in this many meets a file whose end holds
	// the damage of a kill or power loss in the middle of a write, made by
	// the test (see damage).
	crashDamageOneIn = 4
	crashExitLimit   = 30 * time.Second
)

// A crashKind is one of the writers the test kills again and again, each
// in its own folder, so that every start meets what the previous kill
// left.
type crashKind struct {
	name  string
	bench bool // else the agent
	spool bool // a dead collector: the spool; else the embedded default's files
	dir   string
}

// TestCrashes kills `ortel agent` and `ortel bench` (a tiny generated
// model, so runs and records are many) with SIGKILL at random moments
// while they write their spool (collector dead) or their OTLP/JSON files
// (no collector; the agent's rotated every MiB), 200 times, each start
// appending to what the last kill left; every 10th time SIGTERM instead.
// Then, on a 2 MiB tmpfs, the agent's files and a bench's spool meet a full
// disk, which is freed again. Last, every folder is replayed into an OTLP
// receiver, twice at once for one of them.
//
// What must hold:
//   - every file holds only whole records: a record a kill cut short is
//     removed by the next start (counted from its warning), never left
//     between whole ones;
//   - every whole record in the files arrives exactly once, and nothing
//     else arrives (so no damaged record is ever sent); a second replay
//     sends nothing;
//   - each run that exits says what it produced, wrote and lost, and the
//     files hold exactly what it says it wrote (written + lost =
//     produced); after the disk is freed the writers write again.
func TestCrashes(t *testing.T) {
	h := newHarness(t, "crashes")
	ortel := filepath.Join(h.root, "bin", "ortel")
	if _, err := os.Stat(ortel); err != nil {
		t.Fatalf("the ortel CLI is not built (%v): run make build", err)
	}
	testenv.RequireORT(t)
	iterations := crashIterations
	if v := os.Getenv("ORTEL_CRASH_ITERATIONS"); v != "" {
		iterations, _ = strconv.Atoi(v)
	}
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv("ORTEL_CRASH_SEED"); v != "" {
		seed, _ = strconv.ParseUint(v, 10, 64)
	}
	t.Logf("%d iterations, seed %d (ORTEL_CRASH_SEED=%d replays this schedule)", iterations, seed, seed)
	rng := rand.New(rand.NewPCG(seed, seed))

	model := filepath.Join(t.TempDir(), "chain.onnx")
	if err := onnxgen.MatMulAddChain(4, 16).WriteFile(model); err != nil {
		t.Fatal(err)
	}
	dead := deadEndpoint(t)
	work := t.TempDir()
	kinds := []*crashKind{
		{name: "agent-spool", spool: true},
		{name: "agent-files"},
		{name: "bench-spool", bench: true, spool: true},
		{name: "bench-files", bench: true},
	}
	for _, k := range kinds {
		k.dir = filepath.Join(work, k.name)
	}
	env := func(k *crashKind) []string {
		e := []string{"OTEL_EXPORTER_OTLP_ENDPOINT=", "OTEL_EXPORTER_OTLP_PROTOCOL=grpc", "OTEL_EXPORTER_OTLP_TIMEOUT=100",
			"OTEL_BSP_SCHEDULE_DELAY=50", "OTEL_METRIC_EXPORT_INTERVAL=100"}
		if k.spool {
			e[0] = "OTEL_EXPORTER_OTLP_ENDPOINT=" + dead
		}
		return e
	}
	argv := func(k *crashKind, extra ...string) []string {
		if k.bench {
			// Open loop at 300 runs/s: many small records, files that stay
			// small enough to read back whole every time. --run-spans: a
			// span per run into traces.jsonl also with no collector.
			return append([]string{ortel, "bench", model, "--scenario", "server", "--qps", "300", "--duration", "10m", "--warmup", "0",
				"--profile-runs", "0", "--no-hardware", "--quiet", "--run-spans", "--out", k.dir}, extra...)
		}
		return append([]string{ortel, "agent", "--interval", "20ms", "--rotate-mb", "1", "--rotate-keep", "1000", "--out", k.dir}, extra...)
	}

	tally := crashTally{scans: scanCache{}}
	h.step(fmt.Sprintf("%d kills of the agent and a bench while they write", iterations), 30*time.Minute, func(ctx context.Context) error {
		for i := range iterations {
			graceful := (i+1)%crashGraceful == 0
			// Two writers at once: one agent, one bench, of the same mode.
			pair := []*crashKind{kinds[0], kinds[2]}
			if i%2 == 1 {
				pair = []*crashKind{kinds[1], kinds[3]}
			}
			if err := crashIteration(ctx, h, &tally, pair, env, argv, graceful, rng); err != nil {
				return fmt.Errorf("iteration %d: %w", i+1, err)
			}
		}
		return nil
	})

	t.Run("full disk", func(t *testing.T) {
		fullDisk(t, h, &tally, env, argv, kinds)
	})

	h.check("every whole record arrives once, nothing else, after the replays", 10*time.Minute, func(ctx context.Context) error {
		return replayAll(ctx, h, &tally, ortel, work)
	})
	t.Logf("crash test figures: %s", tally.String())
	h.write("figures.txt", []byte(tally.String()+"\n"))
}

// crashTally is what the test counted, for its figures.
type crashTally struct {
	kills, terms          int
	injected              int // damaged ends made by the test before a start
	repaired              int // cut records removed by a restart (its warning)
	graceful              int // runs that exited and said their counts
	spansProduced         int64
	spansWritten          int64
	spansLost             int64
	exportsWritten        int64
	exportsLost           int64
	records               int // whole records in the files at the end
	torn                  int // cut last lines left by the last kill (never sent)
	damaged               int // damaged lines between whole records (must be 0)
	replayed, duplicates  int
	unknown, againSent    int
	fullDiskFailedExports int64

	scans scanCache
}

func (c *crashTally) String() string {
	return fmt.Sprintf("%d SIGKILLs and %d SIGTERMs; %d damaged file ends made before a start; %d cut records removed by a restart that said so (the spool says it only at a clean exit); %d runs that exited: %d spans produced = %d written + %d lost, %d metric exports written, %d lost (%d of them on the full disk); at the end %d whole records in the files, %d cut last lines (not sent), %d damaged lines between whole records; replayed %d records, %d duplicates, %d received that are no record of the files (damaged sent), %d sent again by a second replay",
		c.kills, c.terms, c.injected, c.repaired, c.graceful, c.spansProduced, c.spansWritten, c.spansLost, c.exportsWritten, c.exportsLost, c.fullDiskFailedExports,
		c.records, c.torn, c.damaged, c.replayed, c.duplicates, c.unknown, c.againSent)
}

// deadEndpoint is an OTLP endpoint where nothing listens.
func deadEndpoint(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr
}

// contents are the whole records of a writer's folder (every .jsonl file,
// rotated ones included): spans in trace records, and metric records.
type contents struct {
	records, spans, metricRecords int64
}

func (c *contents) add(m proto.Message) {
	c.records++
	switch m := m.(type) {
	case *coltracepb.ExportTraceServiceRequest:
		for _, rs := range m.GetResourceSpans() {
			for _, ss := range rs.GetScopeSpans() {
				c.spans += int64(len(ss.GetSpans()))
			}
		}
	case *colmetricspb.ExportMetricsServiceRequest:
		c.metricRecords++
	}
}

// scanCache remembers how far each file was read: files are appended to,
// and a restart only removes a cut line past the last whole one, so a
// file of the same inode is read on from there, not again whole.
type scanCache map[string]scanState

type scanState struct {
	ino uint64
	off int64 // just past the last whole line read
	c   contents
}

// folderContents counts the whole records of dir's .jsonl files and its
// spool's.
func (sc scanCache) folderContents(dir string) (contents, error) {
	var c contents
	files, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	more, _ := filepath.Glob(filepath.Join(dir, "spool", "*.jsonl"))
	for _, path := range append(files, more...) {
		st, err := os.Stat(path)
		if err != nil {
			return c, err
		}
		ino := st.Sys().(*syscall.Stat_t).Ino
		state := sc[path]
		if state.ino != ino || st.Size() < state.off {
			state = scanState{ino: ino}
		}
		f, err := os.Open(path)
		if err != nil {
			return c, err
		}
		if _, err := f.Seek(state.off, 0); err != nil {
			f.Close()
			return c, err
		}
		s := otlpjson.NewScanner(f)
		s.SetPosition(state.off, 1)
		for s.Scan() {
			if !s.Terminated() {
				break
			}
			if m := decodeLine(s.Line()); m != nil {
				state.c.add(m)
			}
			state.off = s.End()
		}
		f.Close()
		if err := s.Err(); err != nil {
			return c, err
		}
		sc[path] = state
		c.records += state.c.records
		c.spans += state.c.spans
		c.metricRecords += state.c.metricRecords
	}
	return c, nil
}

// decodeLine decodes a record of either signal; nil when it does not.
func decodeLine(line []byte) proto.Message {
	var m proto.Message = new(colmetricspb.ExportMetricsServiceRequest)
	if strings.HasPrefix(string(line[:min(len(line), 20)]), `{"resourceSpans"`) {
		m = new(coltracepb.ExportTraceServiceRequest)
	}
	if otlpjson.Unmarshal(line, m) != nil {
		return nil
	}
	return m
}

// scanRecords calls record with each whole record of path and damage with
// each damaged line (terminated) or cut last line (not), by the file's
// signal. A read error is returned.
func scanRecords(path string, record func(proto.Message), damage func(line int, terminated bool)) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := otlpjson.NewScanner(f)
	for sc.Scan() {
		m := decodeLine(sc.Line())
		if m == nil || !sc.Terminated() {
			if damage != nil {
				damage(sc.LineNumber(), sc.Terminated())
			}
			continue
		}
		record(m)
	}
	return sc.Err()
}

// crashIteration runs one writer of each kind of pair, waits until each
// wrote a record, and kills both (SIGKILL) at a random moment within
// crashKillWithin — or stops them (SIGTERM) and checks what they say.
func crashIteration(ctx context.Context, h *harness, tally *crashTally, pair []*crashKind, env func(*crashKind) []string, argv func(*crashKind, ...string) []string, graceful bool, rng *rand.Rand) error {
	type running struct {
		k      *crashKind
		p      *Process
		before contents
		target string
		mark   fileMark
	}
	var rs []running
	defer func() {
		for _, r := range rs {
			_ = r.p.Stop(time.Second)
		}
	}()
	for _, k := range pair {
		var before contents
		if graceful {
			var err error
			if before, err = tally.scans.folderContents(k.dir); err != nil {
				return err
			}
		}
		target := k.target()
		// Now and then what a kill in the middle of a write, or a power
		// loss, leaves, made for sure: a kill rarely lands inside the few
		// microseconds a write takes.
		if rng.IntN(crashDamageOneIn) == 0 && damage(target, rng) != "" {
			tally.injected++
		}
		mark := markOf(target)
		p, err := StartProcess(k.name, filepath.Join(h.logDir, k.name+".log"), env(k), argv(k)...)
		if err != nil {
			return err
		}
		rs = append(rs, running{k: k, p: p, before: before, target: target, mark: mark})
	}
	// Each has written once its file holds more than the whole records it
	// held (a restart first removes a cut record), or was rotated.
	for _, r := range rs {
		deadline := time.Now().Add(crashStartLimit)
		for !r.mark.passed(r.target) {
			if exited, err := r.p.Exited(); exited {
				return fmt.Errorf("%s exited before it wrote (%v):\n%s", r.k.name, err, Tail(r.p.LogPath, 20))
			}
			if time.Now().After(deadline) || ctx.Err() != nil {
				return fmt.Errorf("%s wrote nothing to %s within %s:\n%s", r.k.name, r.target, crashStartLimit, Tail(r.p.LogPath, 20))
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	time.Sleep(time.Duration(rng.Int64N(int64(crashKillWithin))))
	sig := syscall.SIGKILL
	if graceful {
		sig = syscall.SIGTERM
	}
	for _, r := range rs {
		_ = syscall.Kill(-r.p.Pid(), sig)
	}
	for _, r := range rs {
		wctx, cancel := context.WithTimeout(ctx, crashExitLimit)
		err := r.p.Wait(wctx)
		cancel()
		log, _ := os.ReadFile(r.p.LogPath)
		tally.repaired += strings.Count(string(log), "removed an incomplete last record")
		if !graceful {
			tally.kills++
			continue
		}
		tally.terms++
		if err := checkGraceful(tally, r.k, r.before, string(log), err); err != nil {
			return fmt.Errorf("%s stopped by SIGTERM: %w\n%s", r.k.name, err, log)
		}
	}
	return nil
}

// target is the file a writer of kind k writes most often.
func (k *crashKind) target() string {
	switch {
	case k.spool && k.bench:
		return filepath.Join(k.dir, "spool", "traces.jsonl")
	case k.spool:
		return filepath.Join(k.dir, "spool", "metrics.jsonl")
	case k.bench:
		return filepath.Join(k.dir, "traces.jsonl")
	}
	return filepath.Join(k.dir, "metrics.jsonl")
}

// fileMark is where a file's whole records ended, and which file it was.
type fileMark struct {
	ino   uint64
	whole int64
}

func markOf(path string) fileMark {
	f, err := os.Open(path)
	if err != nil {
		return fileMark{}
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return fileMark{}
	}
	m := fileMark{ino: st.Sys().(*syscall.Stat_t).Ino}
	buf := make([]byte, 64<<10)
	for end := st.Size(); end > 0; {
		n := min(int64(len(buf)), end)
		end -= n
		if _, err := f.ReadAt(buf[:n], end); err != nil {
			return m
		}
		if i := strings.LastIndexByte(string(buf[:n]), '\n'); i >= 0 {
			m.whole = end + int64(i) + 1
			return m
		}
	}
	return m
}

// passed reports whether a record was written to path since m: its whole
// records end further on, or it is another file (rotated).
func (m fileMark) passed(path string) bool {
	now := markOf(path)
	return now.ino != 0 && (now.ino != m.ino || now.whole > m.whole)
}

// damage appends to path what a kill or a power loss in the middle of a
// write leaves, as the kernel would: a cut copy of its last record, zeros,
// or both; it returns what it appended, "" when path has no whole record
// to copy.
func damage(path string, rng *rand.Rand) string {
	m := markOf(path)
	st, err := os.Stat(path)
	if err != nil || m.whole == 0 || st.Size() != m.whole {
		return "" // empty, or a cut line already
	}
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	start := max(0, m.whole-(1<<20))
	b := make([]byte, m.whole-start)
	_, err = f.ReadAt(b, start)
	f.Close()
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	last := lines[len(lines)-1]
	if len(last) < 3 {
		return ""
	}
	cut := last[:1+rng.IntN(max(1, len(last)-2))] // never the whole record
	zeros := strings.Repeat("\x00", 1+rng.IntN(4096))
	var tail, what string
	switch rng.IntN(3) {
	case 0:
		tail, what = cut, "a cut record"
	case 1:
		tail, what = zeros, "zeros"
	default:
		tail, what = cut+zeros, "a cut record and zeros"
	}
	w, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return ""
	}
	defer w.Close()
	if _, err := w.WriteString(tail); err != nil {
		return ""
	}
	return what
}

func fileSize(path string) int64 {
	st, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return st.Size()
}

var (
	// The exit's own words (cmd/ortel).
	spansCounts   = regexp.MustCompile(`telemetry: (\d+) spans ended: (\d+) exported, (\d+) spooled, (\d+) lost`)
	agentCounts   = regexp.MustCompile(`stopped after [^:]+: (\d+) metric exports \((\d+) failed(?:, (\d+) of them spooled)?\)`)
	exitStatusErr = regexp.MustCompile(`exit status (\d+)`)
)

// checkGraceful checks a run stopped by SIGTERM: its exit status, that
// its counts add up, and that its folder gained exactly what it says it
// wrote.
func checkGraceful(tally *crashTally, k *crashKind, before contents, log string, waitErr error) error {
	code := 0
	if m := exitStatusErr.FindStringSubmatch(fmt.Sprint(waitErr)); m != nil {
		code, _ = strconv.Atoi(m[1])
	} else if waitErr != nil {
		return waitErr
	}
	after, err := tally.scans.folderContents(k.dir)
	if err != nil {
		return err
	}
	tally.graceful++
	if k.bench {
		// Stopped before its report: 1, with its counts and the spool.
		if code != 1 || !strings.Contains(log, "stopped by a signal (terminated signal received) before the bench finished, so no report was written") {
			return fmt.Errorf("exit %d, want 1 saying it was stopped", code)
		}
		m := spansCounts.FindStringSubmatch(log)
		if m == nil {
			return errors.New("no telemetry counts in its output")
		}
		ended, _ := strconv.ParseInt(m[1], 10, 64)
		exported, _ := strconv.ParseInt(m[2], 10, 64)
		spooled, _ := strconv.ParseInt(m[3], 10, 64)
		lost, _ := strconv.ParseInt(m[4], 10, 64)
		written := exported + spooled
		tally.spansProduced += ended
		tally.spansWritten += written
		tally.spansLost += lost
		if written+lost != ended {
			return fmt.Errorf("%d written + %d lost != %d spans ended", written, lost, ended)
		}
		if got := after.spans - before.spans; got != written {
			return fmt.Errorf("it says it wrote %d spans, its files gained %d", written, got)
		}
		if spooled > 0 && !strings.Contains(log, "ortel replay "+filepath.Join(k.dir, "spool")) {
			return errors.New("it spooled spans and does not say how to send them")
		}
		return nil
	}
	m := agentCounts.FindStringSubmatch(log)
	if m == nil {
		return errors.New("no export counts in its output")
	}
	sent, _ := strconv.ParseInt(m[1], 10, 64)
	failed, _ := strconv.ParseInt(m[2], 10, 64)
	var spooled int64
	if m[3] != "" {
		spooled, _ = strconv.ParseInt(m[3], 10, 64)
	}
	written, lost := sent, failed // files: an export is written or failed
	if k.spool {
		written, lost = spooled, failed-spooled
	}
	tally.exportsWritten += written
	tally.exportsLost += lost
	if got := after.metricRecords - before.metricRecords; got != written {
		return fmt.Errorf("it says it wrote %d metric exports, its files gained %d records", written, got)
	}
	// 4 when it spooled (or lost its last export), else 0.
	if k.spool && code != 4 || !k.spool && code != 0 && code != 4 {
		return fmt.Errorf("exit %d", code)
	}
	return nil
}

// fullDisk runs the agent (files) and a bench (spool) on a 2 MiB tmpfs,
// fills it once both wrote, frees it once both met the full disk, and
// stops them once both wrote again: they say what they lost, and their
// files hold exactly what they say they wrote.
func fullDisk(t *testing.T, h *harness, tally *crashTally, env func(*crashKind) []string, argv func(*crashKind, ...string) []string, kinds []*crashKind) {
	dir := testenv.Tmpfs(t, 2<<20)
	agent := &crashKind{name: "full-agent-files", dir: filepath.Join(dir, "agent")}
	bench := &crashKind{name: "full-bench-spool", bench: true, spool: true, dir: filepath.Join(dir, "bench")}
	type proc struct {
		k      *crashKind
		p      *Process
		target string
	}
	var ps []proc
	for _, k := range []*crashKind{agent, bench} {
		target := k.target()
		p, err := StartProcess(k.name, filepath.Join(h.logDir, k.name+".log"), env(k), argv(k)...)
		if err != nil {
			t.Fatal(err)
		}
		defer p.Stop(time.Second)
		ps = append(ps, proc{k, p, target})
	}
	wait := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(crashStartLimit)
		for !cond() {
			for _, p := range ps {
				if exited, err := p.p.Exited(); exited {
					t.Fatalf("%s exited (%v) while waiting for %s:\n%s", p.k.name, err, what, Tail(p.p.LogPath, 20))
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("gave up waiting for %s", what)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	wait("both to write", func() bool { return fileSize(ps[0].target) > 0 && fileSize(ps[1].target) > 0 })
	fill := testenv.Fill(t, dir)
	logs := func(i int) string { b, _ := os.ReadFile(ps[i].p.LogPath); return string(b) }
	wait("both to meet the full disk", func() bool {
		return strings.Contains(logs(0), "no space left on device") && strings.Contains(logs(1), "no space left on device")
	})
	full := []int64{fileSize(ps[0].target), fileSize(ps[1].target)}
	if err := os.Remove(fill); err != nil {
		t.Fatal(err)
	}
	wait("both to write again once the disk was freed", func() bool { return fileSize(ps[0].target) > full[0] && fileSize(ps[1].target) > full[1] })
	for _, p := range ps {
		_ = syscall.Kill(-p.p.Pid(), syscall.SIGTERM)
	}
	for _, p := range ps {
		ctx, cancel := context.WithTimeout(context.Background(), crashExitLimit)
		err := p.p.Wait(ctx)
		cancel()
		log, _ := os.ReadFile(p.p.LogPath)
		tally.terms++
		if m := agentCounts.FindStringSubmatch(string(log)); m != nil {
			f, _ := strconv.ParseInt(m[2], 10, 64)
			tally.fullDiskFailedExports += f
		}
		if err := checkGraceful(tally, p.k, contents{}, string(log), err); err != nil {
			t.Errorf("%s on a disk that filled up and was freed: %v\n%s", p.k.name, err, log)
		}
		if !strings.Contains(string(log), "no space left on device") {
			t.Errorf("%s does not say it met a full disk:\n%s", p.k.name, log)
		}
	}
	// The replay below takes these folders too.
	for _, k := range []*crashKind{agent, bench} {
		dst := filepath.Join(filepath.Dir(kinds[0].dir), k.name)
		if err := os.CopyFS(dst, os.DirFS(k.dir)); err != nil {
			t.Fatal(err)
		}
	}
}

// replayAll checks every folder's files, replays them into a receiver —
// one folder by two replays at once — and checks that every whole record
// arrived once and nothing else; then that a second replay sends nothing.
func replayAll(ctx context.Context, h *harness, tally *crashTally, ortel, work string) error {
	want := map[string]int{} // record hash -> times it is in the files
	folders, _ := filepath.Glob(filepath.Join(work, "*"))
	var files []string
	for _, d := range folders {
		fs, _ := filepath.Glob(filepath.Join(d, "*.jsonl"))
		more, _ := filepath.Glob(filepath.Join(d, "spool", "*.jsonl"))
		files = append(files, append(fs, more...)...)
	}
	for _, f := range files {
		var lastTorn int
		n := 0
		err := scanRecords(f, func(m proto.Message) {
			n++
			for _, k := range recordHashes(m) {
				want[k]++
			}
		}, func(line int, terminated bool) {
			if terminated {
				tally.damaged++
				return
			}
			lastTorn = line
		})
		if err != nil {
			return err
		}
		if lastTorn > 0 {
			tally.torn++
		}
		tally.records += n
	}
	if tally.damaged > 0 {
		return fmt.Errorf("%d damaged lines lie between whole records: a restart did not remove what a kill cut", tally.damaged)
	}

	rcv, err := otlptest.Start()
	if err != nil {
		return err
	}
	defer rcv.Close()
	env := []string{"OTEL_EXPORTER_OTLP_ENDPOINT=http://" + rcv.Endpoint(), "OTEL_EXPORTER_OTLP_PROTOCOL=grpc", "OTEL_EXPORTER_OTLP_TIMEOUT=10000"}
	var dirs []string
	for _, d := range folders {
		if fs, _ := filepath.Glob(filepath.Join(d, "*.jsonl")); len(fs) > 0 {
			dirs = append(dirs, d)
		}
		if fs, _ := filepath.Glob(filepath.Join(d, "spool", "*.jsonl")); len(fs) > 0 {
			dirs = append(dirs, filepath.Join(d, "spool"))
		}
	}
	slices.Sort(dirs)
	replay := func(name, dir string) (*Process, error) {
		return StartProcess(name, filepath.Join(h.logDir, name+".log"), env, ortel, "replay", dir)
	}
	for i, d := range dirs {
		ps := []*Process{}
		n := 1
		if i == 0 {
			n = 2 // two replays of one folder at once
		}
		for j := range n {
			p, err := replay(fmt.Sprintf("replay-%d-%d", i, j), d)
			if err != nil {
				return err
			}
			ps = append(ps, p)
		}
		for _, p := range ps {
			if err := p.Wait(ctx); err != nil {
				log, _ := os.ReadFile(p.LogPath)
				if n == 2 && strings.Contains(string(log), "another ortel replay is sending this file now") {
					continue // refused: the other sends it
				}
				return fmt.Errorf("replay %s: %w\n%s", d, err, log)
			}
		}
	}
	got := receivedHashes(rcv)
	for k, n := range got {
		tally.replayed += n
		switch w := want[k]; {
		case w == 0:
			tally.unknown += n
		case n > w:
			tally.duplicates += n - w
		}
	}
	missing := 0
	for k, w := range want {
		missing += max(0, w-got[k])
	}
	// Again: nothing is sent twice.
	before := tally.replayed
	for i, d := range dirs {
		p, err := replay(fmt.Sprintf("replay-again-%d", i), d)
		if err != nil {
			return err
		}
		if err := p.Wait(ctx); err != nil {
			return fmt.Errorf("second replay of %s: %w", d, err)
		}
	}
	after := 0
	for _, n := range receivedHashes(rcv) {
		after += n
	}
	tally.againSent = after - before
	if tally.unknown > 0 || tally.duplicates > 0 || missing > 0 || tally.againSent > 0 {
		return fmt.Errorf("received %d records: %d are no whole record of the files (damaged sent), %d duplicates, %d whole records missing, %d sent by a second replay",
			tally.replayed, tally.unknown, tally.duplicates, missing, tally.againSent)
	}
	return nil
}

// recordHashes identifies a record by its content: trace requests whole,
// metric requests per resource (the receiver keeps those).
func recordHashes(m proto.Message) []string {
	switch m := m.(type) {
	case *coltracepb.ExportTraceServiceRequest:
		return []string{hashOf(m)}
	case *colmetricspb.ExportMetricsServiceRequest:
		var out []string
		for _, rm := range m.GetResourceMetrics() {
			out = append(out, hashOf(rm))
		}
		return out
	}
	return nil
}

func receivedHashes(rcv *otlptest.Receiver) map[string]int {
	got := map[string]int{}
	for _, req := range rcv.TraceRequests() {
		got[hashOf(req)]++
	}
	for _, rm := range rcv.ResourceMetrics() {
		got[hashOf(rm)]++
	}
	return got
}

func hashOf(m proto.Message) string {
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
	if err != nil {
		return "unmarshalable: " + err.Error()
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
