// Package progress draws a one-line progress indicator on a terminal:
// what is running, how far it is (runs of a cap, bytes of a total,
// trials), and how long it has taken, redrawn in place at most ten times
// a second. On anything that is not a terminal (a pipe, a file, CI) it
// draws nothing: logs and scripts read the commands' own lines, not
// redraws.
//
//	b := progress.Start(os.Stderr, "measuring", 200)
//	for i := range 200 { ...; b.Set(int64(i + 1)) }
//	b.Done()
//
// A Bar is safe for use from several goroutines. A nil *Bar does nothing,
// so a caller that has no terminal can pass nil around.
package progress

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"golang.org/x/sys/unix"
)

// Unit says how Set's values read: a count, or bytes.
type Unit int

const (
	// Count is a number of things (runs, trials, steps).
	Count Unit = iota
	// Bytes is a number of bytes, written 12.3 MB.
	Bytes
)

// interval is the time between two redraws: ten a second.
const interval = 100 * time.Millisecond

// width is the line's width at most: it fits an 80-column terminal; the
// bar itself is barMax characters wide when it fits.
const (
	width  = 79
	barMax = 30
)

// Bar is one phase's indicator.
type Bar struct {
	mu      sync.Mutex
	w       io.Writer
	label   string
	total   int64
	n       atomic.Int64
	unit    Unit
	limit   time.Duration // a time cap: the bar fills with the time too
	started time.Time
	// now is the clock (tests set it).
	now  func() time.Time
	done bool
	// stop ends the redrawing goroutine; stopped is closed when it has.
	stop, stopped chan struct{}
}

// Enabled reports whether w gets a progress indicator: it is a terminal,
// and CI is not set (a CI log shows a terminal's redraws as one line per
// frame).
func Enabled(w io.Writer) bool {
	if ci := os.Getenv("CI"); ci != "" && ci != "false" && ci != "0" {
		return false
	}
	return IsTerminal(w)
}

// IsTerminal reports whether w is a terminal.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(interface{ Fd() uintptr })
	if !ok {
		return false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

// Start begins an indicator labelled label on w, of total steps (0 when
// the total is not known: it shows the count and the time). It returns
// nil, which draws nothing, when w is not Enabled.
func Start(w io.Writer, label string, total int64) *Bar {
	if w == nil || !Enabled(w) {
		return nil
	}
	return start(w, label, total, time.Now)
}

// start is Start without the terminal check; a goroutine redraws the
// line every interval until Done.
func start(w io.Writer, label string, total int64, now func() time.Time) *Bar {
	b := &Bar{w: w, label: label, total: total, now: now, started: now(),
		stop: make(chan struct{}), stopped: make(chan struct{})}
	b.mu.Lock()
	b.draw()
	b.mu.Unlock()
	go b.redraw()
	return b
}

func (b *Bar) redraw() {
	defer close(b.stopped)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-b.stop:
			return
		case <-t.C:
			b.mu.Lock()
			b.draw()
			b.mu.Unlock()
		}
	}
}

// InBytes makes Set's values bytes; it returns b.
func (b *Bar) InBytes() *Bar {
	if b != nil {
		b.mu.Lock()
		b.unit = Bytes
		b.draw()
		b.mu.Unlock()
	}
	return b
}

// Limit caps the phase at d as well (a phase that ends at a count or a
// time, whichever comes first): the bar shows the further of the two, and
// the line the time against the cap. It returns b.
func (b *Bar) Limit(d time.Duration) *Bar {
	if b != nil {
		b.mu.Lock()
		b.limit = d
		b.draw()
		b.mu.Unlock()
	}
	return b
}

// Clear wipes the line so that the caller can print a line of its own;
// the next redraw draws the indicator again below it.
func (b *Bar) Clear() {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.done {
		fmt.Fprint(b.w, "\r\x1b[K")
	}
}

// Set records that n of the total are done. It only stores n: the line
// is redrawn ten times a second, so Set is cheap enough for every run of
// a measured phase.
func (b *Bar) Set(n int64) {
	if b != nil {
		b.n.Store(n)
	}
}

// Add records delta more done.
func (b *Bar) Add(delta int64) {
	if b != nil {
		b.n.Add(delta)
	}
}

// Label changes what the line says is running (a tune candidate, a
// batch size), redrawn at the next Set.
func (b *Bar) Label(label string) {
	if b == nil {
		return
	}
	b.mu.Lock()
	b.label = label
	b.mu.Unlock()
}

// Done stops the indicator and clears its line: what the command prints
// next starts at the beginning of an empty line.
func (b *Bar) Done() {
	if b == nil {
		return
	}
	b.mu.Lock()
	if b.done {
		b.mu.Unlock()
		return
	}
	b.done = true
	b.mu.Unlock()
	close(b.stop)
	<-b.stopped
	fmt.Fprint(b.w, "\r\x1b[K")
}

// draw writes the line over the previous one. b.mu is held.
func (b *Bar) draw() {
	if b.w != nil && !b.done {
		fmt.Fprint(b.w, "\r\x1b[K"+b.line())
	}
}

// line is the indicator's text: "label  [=====>     ]  42/200  3.1s",
// or with a time cap "label  [==>       ]  42 runs  3.1s/30s".
func (b *Bar) line() string {
	elapsed := b.now().Sub(b.started).Round(100 * time.Millisecond)
	n := b.n.Load()
	count := b.amount(n)
	if b.total > 0 {
		count += "/" + b.amount(b.total)
	}
	frac := -1.0
	if b.total > 0 {
		frac = float64(min(n, b.total)) / float64(b.total)
	}
	clock := elapsed.String()
	if b.limit > 0 {
		clock += "/" + b.limit.String()
		frac = max(frac, min(1, float64(elapsed)/float64(b.limit)))
	}
	tail := "  " + count + "  " + clock
	barWidth := min(barMax, width-utf8.RuneCountInString(b.label)-utf8.RuneCountInString(tail)-4)
	if frac < 0 || barWidth < 10 {
		return clip(b.label+tail, width)
	}
	filled := int(frac * float64(barWidth))
	bar := strings.Repeat("=", filled)
	if filled < barWidth {
		bar += ">" + strings.Repeat(" ", barWidth-filled-1)
	}
	return b.label + "  [" + bar + "]" + tail
}

// amount writes n in the bar's unit.
func (b *Bar) amount(n int64) string {
	if b.unit != Bytes {
		return fmt.Sprint(n)
	}
	const unit = 1000
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	v, suffix := float64(n), "kMGT"
	i := -1
	for v >= unit && i < len(suffix)-1 {
		v /= unit
		i++
	}
	return fmt.Sprintf("%.1f %cB", v, suffix[i])
}

// clip cuts s to n characters.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n])
}

// Reader returns r, counting on b the bytes read from it (a file read
// against its size: Start(w, label, size).InBytes()).
func (b *Bar) Reader(r io.Reader) io.Reader {
	if b == nil {
		return r
	}
	return &countingReader{r: r, b: b}
}

type countingReader struct {
	r io.Reader
	b *Bar
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.b.Add(int64(n))
	return n, err
}
