package telemetry

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/ortel-dev/ortel/internal/telemetry/otlpjson"
	"github.com/ortel-dev/ortel/test/otlptest"
)

// traceRecord is one record (line) holding one span named name whose id
// is n: tests tell records apart by it.
func traceRecord(t *testing.T, name string, n uint64) []byte {
	t.Helper()
	id := make([]byte, 8)
	binary.BigEndian.PutUint64(id, n)
	req := &coltracepb.ExportTraceServiceRequest{ResourceSpans: []*tracepb.ResourceSpans{{ScopeSpans: []*tracepb.ScopeSpans{{Spans: []*tracepb.Span{{
		TraceId: bytes.Repeat([]byte{1}, 16), SpanId: id, Name: name, StartTimeUnixNano: 1, EndTimeUnixNano: 2,
	}}}}}}}
	var buf bytes.Buffer
	if err := otlpjson.AppendLine(&buf, req); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// appendFile appends the records of ids first..last (names name-N) and
// then raw to path.
func appendFile(t *testing.T, path, name string, first, last uint64, raw string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for n := first; n <= last; n++ {
		if _, err := f.Write(traceRecord(t, name, n)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.WriteString(raw); err != nil {
		t.Fatal(err)
	}
}

// received counts the spans a receiver got, by span name.
func received(rcv *otlptest.Receiver) map[string]int {
	got := map[string]int{}
	for _, s := range rcv.Spans() {
		got[s.GetName()]++
	}
	return got
}

// replayTo resolves a configuration sending to rcv.
func replayTo(t *testing.T, rcv *otlptest.Receiver) Resolved {
	t.Helper()
	r, err := resolve(Config{Endpoint: "http://" + rcv.Endpoint()}, mapEnv(nil))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestReplaySkipsDamagedRecords: damaged records in the middle of a file
// (what a crash or a full disk left before this version repaired files)
// are skipped and counted, never sent, and the records after them are
// sent; a cut last line without its line end is not sent until it is
// whole.
func TestReplaySkipsDamagedRecords(t *testing.T) {
	cleanEnv(t)
	rcv := startReceiver(t)
	r := replayTo(t, rcv)
	path := filepath.Join(t.TempDir(), TracesFileName)
	cut := string(traceRecord(t, "cut", 99))
	appendFile(t, path, "a", 1, 2, cut[:40]+"\n\x00\x00\x00\n")
	appendFile(t, path, "b", 3, 4, cut[:50])

	res, err := Replay(testContext(t), r, path)
	if err != nil {
		t.Fatal(err)
	}
	if res.Sent != 4 || res.Damaged != 2 || res.Incomplete != 50 || !strings.Contains(res.FirstDamaged, "line 3") {
		t.Errorf("replay = %+v, want 4 sent, 2 damaged (the first on line 3), a 50-byte incomplete last line", res)
	}
	if got := received(rcv); got["a"] != 2 || got["b"] != 2 || len(got) != 2 {
		t.Errorf("received %v, want the 4 good records once and nothing else", got)
	}

	// The writer completes the record: the next replay sends it alone.
	appendFile(t, path, "", 1, 0, cut[50:])
	res, err = Replay(testContext(t), r, path)
	if err != nil {
		t.Fatal(err)
	}
	if res.Sent != 1 || res.Earlier != 6 || res.Damaged != 0 {
		t.Errorf("second replay = %+v, want the completed record sent, the 6 before it skipped", res)
	}
	if got := received(rcv); got["cut"] != 1 || got["a"] != 2 || got["b"] != 2 {
		t.Errorf("received %v, want every good record once", got)
	}
}

// TestConcurrentReplaysSendOnce: two replays of one file at the same time
// (two operators, or a retry loop started twice): one sends, the other
// refuses at once saying why; every record arrives once.
func TestConcurrentReplaysSendOnce(t *testing.T) {
	cleanEnv(t)
	rcv := startReceiver(t)
	rcv.SetDelay(50 * time.Millisecond) // the replays overlap
	r := replayTo(t, rcv)
	path := filepath.Join(t.TempDir(), TracesFileName)
	appendFile(t, path, "r", 1, 8, "")

	start := make(chan struct{})
	var wg sync.WaitGroup
	results := make([]ReplayResult, 2)
	errs := make([]error, 2)
	for i := range 2 {
		wg.Go(func() {
			<-start
			results[i], errs[i] = Replay(testContext(t), r, path)
		})
	}
	close(start)
	wg.Wait()
	sent, busy := 0, 0
	for i := range 2 {
		switch {
		case errs[i] == nil:
			sent += results[i].Sent
		case errors.Is(errs[i], ErrReplayBusy) && strings.Contains(errs[i].Error(), path) && strings.Contains(errs[i].Error(), "run this one again"):
			busy++
		default:
			t.Errorf("replay %d: %v", i, errs[i])
		}
	}
	if got := received(rcv); got["r"] != 8 || sent != 8 {
		t.Errorf("the collector received %d spans, the replays said they sent %d (%d refused as busy); want each of the 8 records once", got["r"], sent, busy)
	}
}

// TestReplayRefusesWhileAnotherSends: while another replay holds the
// file's lock, Replay sends nothing and says so.
func TestReplayRefusesWhileAnotherSends(t *testing.T) {
	cleanEnv(t)
	rcv := startReceiver(t)
	path := filepath.Join(t.TempDir(), TracesFileName)
	appendFile(t, path, "r", 1, 3, "")
	other, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if ok, err := tryLockReplay(other); !ok || err != nil {
		t.Fatalf("lock: %v %v", ok, err)
	}
	res, err := Replay(testContext(t), replayTo(t, rcv), path)
	if !errors.Is(err, ErrReplayBusy) || res.Sent != 0 || len(rcv.Spans()) != 0 {
		t.Fatalf("replay under another's lock: %+v, %v; want ErrReplayBusy and nothing sent", res, err)
	}
	unlockReplay(other)
	if res, err := Replay(testContext(t), replayTo(t, rcv), path); err != nil || res.Sent != 3 {
		t.Fatalf("replay once the lock is free: %+v, %v", res, err)
	}
}

// TestReplayIgnoresAStaleProgressFile: the spool is removed after a
// replay and a new outage writes a new, longer file of the same name:
// every record of the new file is sent, none skipped on the old file's
// count.
func TestReplayIgnoresAStaleProgressFile(t *testing.T) {
	cleanEnv(t)
	rcv := startReceiver(t)
	r := replayTo(t, rcv)
	path := filepath.Join(t.TempDir(), TracesFileName)
	appendFile(t, path, "old", 1, 5, "")
	if res, err := Replay(testContext(t), r, path); err != nil || res.Sent != 5 {
		t.Fatalf("first replay: %+v, %v", res, err)
	}
	if err := os.Remove(path); err != nil { // rm spool/*.jsonl, not the progress file
		t.Fatal(err)
	}
	appendFile(t, path, "new", 1, 8, "")
	res, err := Replay(testContext(t), r, path)
	if err != nil {
		t.Fatal(err)
	}
	if res.Sent != 8 || res.Earlier != 0 || len(res.Notes) != 1 || !strings.Contains(res.Notes[0], "belongs to an earlier") {
		t.Errorf("replay of the new file = %+v, want all 8 sent and a note that the progress file was not this file's", res)
	}
	if got := received(rcv); got["new"] != 8 || got["old"] != 5 {
		t.Errorf("received %v, want 5 old and 8 new", got)
	}
	// A file moved elsewhere with its progress keeps it.
	moved := filepath.Join(t.TempDir(), TracesFileName)
	copyFile(t, path, moved)
	copyFile(t, path+ProgressSuffix, moved+ProgressSuffix)
	res, err = Replay(testContext(t), r, moved)
	if err != nil || res.Sent != 0 || res.Earlier != 8 || len(res.Notes) != 1 || !strings.Contains(res.Notes[0], "moved or copied") {
		t.Errorf("replay of the copied file = %+v, %v; want nothing sent again, and a note", res, err)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestReplayRefusesABareCountProgressFile: a progress file of an older
// ortel (a bare count) does not say which file it counted: Replay sends
// nothing and says what to do.
func TestReplayRefusesABareCountProgressFile(t *testing.T) {
	cleanEnv(t)
	rcv := startReceiver(t)
	path := filepath.Join(t.TempDir(), TracesFileName)
	appendFile(t, path, "r", 1, 3, "")
	if err := os.WriteFile(path+ProgressSuffix, []byte("2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Replay(testContext(t), replayTo(t, rcv), path)
	if err == nil || !strings.Contains(err.Error(), "bare record count") || !strings.Contains(err.Error(), "remove "+path+ProgressSuffix) || len(rcv.Spans()) != 0 {
		t.Errorf("replay with a bare-count progress file: %v (%d spans sent)", err, len(rcv.Spans()))
	}
}

// TestRotationCarriesReplayProgress: a rotated file keeps its replay
// progress (nothing is sent twice), and the new file of the old name
// starts from its first record.
func TestRotationCarriesReplayProgress(t *testing.T) {
	cleanEnv(t)
	rcv := startReceiver(t)
	r := replayTo(t, rcv)
	dir := t.TempDir()
	path := filepath.Join(dir, TracesFileName)
	sink, err := openRotatingSink(path, Rotation{MaxBytes: 1 << 20, Backups: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer sink.close()
	write := func(name string, first, last uint64) {
		for n := first; n <= last; n++ {
			if err := sink.writeLine(t.Context(), traceRecord(t, name, n)); err != nil {
				t.Fatal(err)
			}
		}
	}
	write("first", 1, 3)
	if res, err := Replay(testContext(t), r, path); err != nil || res.Sent != 3 {
		t.Fatalf("replay: %+v %v", res, err)
	}
	sink.mu.Lock()
	sink.rot.MaxBytes = 1 // the next write rotates
	sink.mu.Unlock()
	write("first", 4, 4)
	sink.mu.Lock()
	sink.rot.MaxBytes = 1 << 20
	sink.mu.Unlock()
	write("second", 1, 2)
	rotated, _ := filepath.Glob(filepath.Join(dir, "traces-*.jsonl"))
	if len(rotated) != 1 {
		t.Fatalf("rotated files %v, want 1", rotated)
	}
	for _, f := range []string{rotated[0], path} {
		if _, err := Replay(testContext(t), r, f); err != nil {
			t.Fatal(err)
		}
	}
	if got := received(rcv); got["first"] != 4 || got["second"] != 2 {
		t.Errorf("received %v, want each of the 4 first and 2 second records once", got)
	}
}

// TestReplayedSpoolIsReclaimed: a spool file whose every record a replay
// sent is emptied when the spool is next used, so the bound is not spent
// on telemetry already delivered; one with records left is kept whole.
func TestReplayedSpoolIsReclaimed(t *testing.T) {
	cleanEnv(t)
	rcv := startReceiver(t)
	r := replayTo(t, rcv)
	dir := t.TempDir()
	path := filepath.Join(dir, TracesFileName)
	appendFile(t, path, "old", 1, 50, "")
	if res, err := Replay(testContext(t), r, path); err != nil || res.Sent != 50 {
		t.Fatalf("replay: %+v %v", res, err)
	}
	st, _ := os.Stat(path)
	s := &spool{path: path, maxBytes: st.Size() + 1000, used: &spoolUsage{paths: []string{path}}}
	defer s.close()
	// The file alone nearly fills the bound; the replayed records are
	// reclaimed when the spool opens, so records far past it fit.
	for n := range uint64(20) {
		if err := s.write(decodeTrace(t, traceRecord(t, "new", n))); err != nil {
			t.Fatalf("spool write %d: %v", n, err)
		}
	}
	if _, err := os.Stat(path + ProgressSuffix); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the progress of the emptied file is still there: %v", err)
	}
	res, err := Replay(testContext(t), r, path)
	if err != nil || res.Sent != 20 || res.Earlier != 0 {
		t.Errorf("replay of the new records: %+v %v", res, err)
	}
	if got := received(rcv); got["old"] != 50 || got["new"] != 20 {
		t.Errorf("received %v", got)
	}
}

func decodeTrace(t *testing.T, line []byte) *coltracepb.ExportTraceServiceRequest {
	t.Helper()
	req := new(coltracepb.ExportTraceServiceRequest)
	if err := otlpjson.Unmarshal(bytes.TrimSpace(line), req); err != nil {
		t.Fatal(err)
	}
	return req
}
