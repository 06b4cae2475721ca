package progress

import (
	"bytes"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ortel-dev/ortel/test/testenv"
)

// TestEnabledOnlyOnATerminal: a pseudo-terminal gets an indicator; a
// pipe, a file, a buffer and a terminal under CI=true get none (Start
// returns nil, whose methods do nothing).
func TestEnabledOnlyOnATerminal(t *testing.T) {
	t.Setenv("CI", "")
	_, tty := testenv.PTY(t)
	if !Enabled(tty) {
		t.Errorf("a pseudo-terminal is not enabled")
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	f, err := os.Create(t.TempDir() + "/log")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for name, out := range map[string]io.Writer{"pipe": w, "file": f, "buffer": &bytes.Buffer{}, "nil": nil} {
		if b := Start(out, "x", 10); b != nil {
			b.Done()
			t.Errorf("%s: Start drew an indicator", name)
		}
	}
	t.Setenv("CI", "true")
	if Enabled(tty) {
		t.Errorf("a terminal under CI=true is enabled")
	}
	var b *Bar // a nil Bar does nothing
	b.Set(1)
	b.Add(1)
	b.Label("y")
	b.Clear()
	b.Done()
	if got := b.Reader(strings.NewReader("abc")); got == nil {
		t.Errorf("nil Bar's Reader is nil")
	}
}

// TestBarOnAPseudoTerminal starts an indicator on a real pseudo-terminal
// and reads what it drew: the label, the bar, the count against the total,
// redrawn in place (carriage return, erase line), and a cleared line at
// Done.
func TestBarOnAPseudoTerminal(t *testing.T) {
	t.Setenv("CI", "")
	tty, output := testenv.RecordPTY(t)
	b := Start(tty, "measuring", 200)
	if b == nil {
		t.Fatal("Start on a pseudo-terminal returned nil")
	}
	b.Set(50)
	time.Sleep(3 * interval) // a few redraws
	b.Done()
	out := output()
	for _, want := range []string{"\r\x1b[Kmeasuring  [", "  50/200  ", "=>"} {
		if !strings.Contains(out, want) {
			t.Errorf("the terminal shows no %q:\n%q", want, out)
		}
	}
	if !strings.HasSuffix(out, "\r\x1b[K") {
		t.Errorf("Done did not clear the line: %q", out)
	}
}

// TestLine draws the line at set times: a count against a total, bytes,
// a time cap, and no total.
func TestLine(t *testing.T) {
	clock := time.Unix(0, 0)
	now := func() time.Time { return clock }
	cases := []struct {
		name  string
		bar   func() *Bar
		n     int64
		after time.Duration
		want  string
	}{
		{"count", func() *Bar { return &Bar{label: "warming up", total: 10, now: now, started: clock} }, 5, 2 * time.Second,
			"warming up  [===============>              ]  5/10  2s"},
		{"bytes", func() *Bar {
			return (&Bar{label: "reading p.json", total: 2_000_000_000, now: now, started: clock}).InBytes()
		}, 500_000_000, 0,
			"reading p.json  [=======>                      ]  500.0 MB/2.0 GB  0s"},
		{"time cap", func() *Bar { return (&Bar{label: "measuring", now: now, started: clock}).Limit(30 * time.Second) }, 1234, 15 * time.Second,
			"measuring  [===============>              ]  1234  15s/30s"},
		{"no total", func() *Bar { return &Bar{label: "SLA trial 1", now: now, started: clock} }, 7, time.Second,
			"SLA trial 1  7  1s"},
	}
	for _, c := range cases {
		b := c.bar()
		b.Set(c.n)
		clock = clock.Add(c.after)
		if got := b.line(); got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.name, got, c.want)
		}
		if n := len([]rune(b.line())); n > width {
			t.Errorf("%s: line of %d characters, more than %d", c.name, n, width)
		}
		clock = time.Unix(0, 0)
	}
}

// TestReaderCounts: a file read through Reader counts its bytes on the bar.
func TestReaderCounts(t *testing.T) {
	b := &Bar{total: 5, now: time.Now}
	if _, err := io.ReadAll(b.Reader(strings.NewReader("12345"))); err != nil {
		t.Fatal(err)
	}
	if n := b.n.Load(); n != 5 {
		t.Errorf("counted %d bytes, want 5", n)
	}
}
