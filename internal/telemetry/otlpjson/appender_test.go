package otlpjson

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"

	"github.com/ortel-dev/ortel/test/testenv"
)

// record returns one record line of about size bytes (a span whose name
// pads it), newline included.
func record(t testing.TB, name string, size int) []byte {
	t.Helper()
	pad := max(0, size-len(goodSpan)-len(name))
	var buf bytes.Buffer
	req := sampleTraces(name + strings.Repeat("x", pad))
	if err := AppendLine(&buf, req); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestOpenAppenderRepairs: what a crash leaves at the end of a file — a
// cut last record, zeros from a power loss, a whole record without its
// newline — is removed or completed when the file is opened again, and
// the next record starts a line of its own.
func TestOpenAppenderRepairs(t *testing.T) {
	good := goodSpan + "\n"
	tests := []struct {
		name, before, after string
		rep                 Repair
	}{
		{"empty", "", "", Repair{}},
		{"whole records", good + good, good + good, Repair{}},
		{"cut last record", good + goodSpan[:50], good, Repair{Removed: 50}},
		{"cut first record", goodSpan[:50], "", Repair{Removed: 50}},
		{"zeros after a power loss", good + "\x00\x00\x00\x00", good, Repair{Removed: 4}},
		{"cut record spliced with zeros", good + goodSpan[:20] + "\x00\x00" + goodSpan[22:], good, Repair{Removed: int64(len(goodSpan))}},
		{"whole record without its newline", good + goodSpan, good + good, Repair{Completed: true}},
		{"blank tail", good + "  ", good, Repair{Removed: 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "out", "traces.jsonl")
			if tt.before != "" {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(tt.before), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			a, rep, err := OpenAppender(path)
			if err != nil {
				t.Fatal(err)
			}
			if rep != tt.rep {
				t.Errorf("repair = %+v, want %+v", rep, tt.rep)
			}
			if (rep.String() == "") != (tt.rep == Repair{}) {
				t.Errorf("repair text %q", rep.String())
			}
			got := appendAndRead(t, a, []byte(good))
			if want := tt.after + good; string(got) != want {
				t.Errorf("file after a repair and an append:\n%q\nwant\n%q", got, want)
			}
			n := 0
			if err := ReadTraces(bytes.NewReader(got), func(*coltracepb.ExportTraceServiceRequest) error { n++; return nil }); err != nil {
				t.Errorf("the repaired file does not read cleanly: %v", err)
			}
		})
	}
}

// appendAndRead appends line, closes a and returns the file's bytes.
func appendAndRead(t *testing.T, a *Appender, line []byte) []byte {
	t.Helper()
	if err := a.Append(t.Context(), line); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(a.Path())
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func TestAppendRejectsWhatIsNotOneLine(t *testing.T) {
	a, _, err := OpenAppender(filepath.Join(t.TempDir(), "x.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	for _, line := range []string{"", "{}", "{}\n{}\n"} {
		if err := a.Append(t.Context(), []byte(line)); err == nil {
			t.Errorf("Append(%q) succeeded", line)
		}
	}
	if a.Size() != 0 {
		t.Errorf("size %d after rejected appends", a.Size())
	}
}

// TestAppendOnAFullDisk fills a real (tmpfs) file system while records are
// appended: a record that does not fit fails and leaves nothing of itself
// in the file, every later record is tried again (not one failure and
// never again), and once space is freed records are written again, each a
// whole line, including one whose space was freed while it was retried.
func TestAppendOnAFullDisk(t *testing.T) {
	dir := testenv.Tmpfs(t, 256<<10)
	path := filepath.Join(dir, "traces.jsonl")
	a, _, err := OpenAppender(path)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	a.Retry = 0 // one try: the disk stays full
	ctx := t.Context()
	small := record(t, "small", 2000)
	if err := a.Append(ctx, small); err != nil {
		t.Fatal(err)
	}
	fill := testenv.Fill(t, dir)
	// A record larger than what is left: part of it would be written.
	big := record(t, "big", 64<<10)
	failures := 0
	for range 3 {
		err := a.Append(ctx, big)
		if !NoSpace(err) || !strings.Contains(err.Error(), path) {
			t.Fatalf("append on a full disk: %v, want a no-space error naming the file", err)
		}
		failures++
		if st, _ := os.Stat(path); st.Size() != int64(len(small)) || a.Size() != int64(len(small)) {
			t.Fatalf("after failure %d the file holds %d bytes (appender says %d), want the %d of the first record: a failed write left part of itself",
				failures, st.Size(), a.Size(), len(small))
		}
	}
	if err := os.Remove(fill); err != nil {
		t.Fatal(err)
	}
	if err := a.Append(ctx, big); err != nil {
		t.Fatalf("append after space was freed: %v", err)
	}

	// Full again, then freed while the append retries: it is written.
	fill = testenv.Fill(t, dir)
	a.Retry = time.Minute // far more than freeing the space takes
	freed := make(chan struct{})
	go func() {
		defer close(freed)
		<-retrying
		_ = os.Remove(fill)
	}()
	testRetryHook = func() {
		select {
		case retrying <- struct{}{}:
		default:
		}
	}
	t.Cleanup(func() { testRetryHook = nil })
	if err := a.Append(ctx, big); err != nil {
		t.Fatalf("append retried while space was freed: %v", err)
	}
	<-freed

	// Full for good: the first record waits out its retry window, the next
	// ones get one try each, no wait, until one fits.
	fill = testenv.Fill(t, dir)
	waits := 0
	testRetryHook = func() { waits++ }
	a.Retry = 30 * time.Millisecond
	if err := a.Append(ctx, big); !NoSpace(err) || waits == 0 {
		t.Fatalf("append on a disk that stays full: %v after %d retries, want a no-space error after retrying", err, waits)
	}
	waits = 0
	for range 3 {
		if err := a.Append(ctx, big); !NoSpace(err) {
			t.Fatalf("append: %v", err)
		}
	}
	if waits != 0 {
		t.Errorf("records after the first of an outage waited %d times, want one try each", waits)
	}
	if err := os.Remove(fill); err != nil {
		t.Fatal(err)
	}
	if err := a.Append(ctx, small); err != nil {
		t.Fatalf("append once space is back: %v", err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := bytes.Join([][]byte{small, big, big, small}, nil)
	if !bytes.Equal(got, want) {
		t.Errorf("file holds %d bytes, want the 4 records written (%d bytes), each whole", len(got), len(want))
	}
	n := 0
	if err := ReadTraces(bytes.NewReader(got), func(*coltracepb.ExportTraceServiceRequest) error { n++; return nil }); err != nil || n != 4 {
		t.Errorf("read back %d records, error %v; want 4 and none damaged", n, err)
	}
}

var retrying = make(chan struct{})

// TestAppendGivesUpWhenCanceled: a retry on a full disk ends with its
// context, saying so.
func TestAppendGivesUpWhenCanceled(t *testing.T) {
	dir := testenv.Tmpfs(t, 64<<10)
	a, _, err := OpenAppender(filepath.Join(dir, "m.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	testenv.Fill(t, dir)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	err = a.Append(ctx, record(t, "r", 8<<10))
	if !errors.Is(err, syscall.ENOSPC) || !errors.Is(err, context.Canceled) {
		t.Errorf("append = %v, want the no-space error and the cancellation", err)
	}
	if a.Size() != 0 {
		t.Errorf("size %d, want 0", a.Size())
	}
}

// FuzzOpenAppenderRepair: whatever a file holds, opening it keeps every
// line that had its newline byte for byte, leaves the file ending with a
// newline (or empty), and a record appended after reads back whole.
func FuzzOpenAppenderRepair(f *testing.F) {
	f.Add([]byte(goodSpan + "\n" + goodSpan[:30]))
	f.Add([]byte(goodSpan))
	f.Add([]byte("\x00\x00\n{}\n{"))
	f.Add([]byte("\n\n  "))
	f.Fuzz(func(t *testing.T, before []byte) {
		path := filepath.Join(t.TempDir(), "f.jsonl")
		if err := os.WriteFile(path, before, 0o644); err != nil {
			t.Fatal(err)
		}
		a, rep, err := OpenAppender(path)
		if err != nil {
			t.Fatal(err)
		}
		line := []byte(goodSpan + "\n")
		got := appendAndRead(t, a, line)
		keep := before[:bytes.LastIndexByte(before, '\n')+1]
		if !bytes.HasPrefix(got, keep) {
			t.Fatalf("the repair changed whole lines: %q -> %q", before, got)
		}
		if !bytes.HasSuffix(got, line) || (len(got) > len(line) && got[len(got)-len(line)-1] != '\n') {
			t.Fatalf("the appended record is not a line of its own: %q", got)
		}
		if rep.Removed > 0 && int64(len(before))-rep.Removed != int64(len(keep)) {
			t.Fatalf("repair %+v of %q", rep, before)
		}
		sc := NewScanner(bytes.NewReader(got))
		last := ""
		for sc.Scan() {
			last = string(sc.Line())
		}
		if last != goodSpan {
			t.Fatalf("last line read back %q", last)
		}
	})
}
