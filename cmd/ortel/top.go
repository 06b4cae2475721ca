package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"golang.org/x/sys/unix"

	"github.com/ortel-dev/ortel/internal/liveview"
	"github.com/ortel-dev/ortel/internal/units"
)

const topIntro = `Usage:
  ortel top [flags] [ADDR]

A terminal view of a live view (ortel bench --ui, ortel agent --ui): run
latency percentiles, throughput, errors, SLA, phase, hardware and the top
operators, refreshed 4 times a second. It fits the terminal and follows its
size; q quits. ADDR is what --ui was given: PORT or HOST:PORT
(default 127.0.0.1:9770). Into a pipe or a file it draws nothing and
exits with 2: --once prints one plain frame there.
`

const topOutro = `
Examples:
  ortel bench --ui 9770 paddleocr-det &   ortel top
  ortel top 127.0.0.1:9000
`

func topCommand() *command {
	return &command{name: "top", summary: "watch a live view (bench --ui, agent --ui) in the terminal",
		intro: topIntro, outro: topOutro, args: noArgs, new: func() action { return new(topAction) }}
}

// topAction is one ortel top.
type topAction struct {
	interval time.Duration
	token    string
	once     bool
}

func (a *topAction) flags(fs *flagSet) {
	fs.durationFlag(&a.interval, "interval", "D", 250*time.Millisecond, "refresh period (default 250ms)")
	fs.stringFlag(&a.token, "token", "T", "", "the live view's token (default: ORTEL_UI_TOKEN)")
	fs.boolFlag(&a.once, "once", false, "print one frame and exit (no terminal needed)")
}

func (a *topAction) run(ctx context.Context, e *env, pos []string) error {
	interval, token, once := a.interval, a.token, a.once
	if len(pos) > 1 {
		return usagef("top takes at most one ADDR, got %d arguments", len(pos))
	}
	if interval < 10*time.Millisecond {
		return usagef("--interval must be 10ms or more (got %s)", interval)
	}
	if token == "" {
		token = os.Getenv("ORTEL_UI_TOKEN")
	}
	addr := "9770"
	if len(pos) == 1 {
		addr = pos[0]
	}
	base, err := topBase(addr)
	if err != nil {
		return usagef("%v", err)
	}
	cl := &topClient{base: base, token: token, http: &http.Client{Timeout: 2 * time.Second}}
	if once {
		s, err := cl.current(ctx)
		if err != nil {
			return err
		}
		for _, l := range topFrame(s, nil, base, 80, 24, nil) {
			fmt.Fprintln(e.stdout, l)
		}
		return nil
	}
	if !e.stdoutTerminal {
		// Escape codes and a screen redrawn 4 times a second are no use
		// to a pipe or a file, and a plain frame instead would surprise
		// in a script: say what works.
		return usagef("standard output is not a terminal: ortel top draws a full-screen view; for one plain frame in a pipe or a file, use ortel top --once")
	}
	return topLoop(ctx, e, cl, interval)
}

// topBase is the live view's URL for addr (PORT or HOST:PORT).
func topBase(addr string) (string, error) {
	a := strings.TrimSpace(addr)
	if _, err := strconv.Atoi(a); err == nil {
		a = "127.0.0.1:" + a
	}
	host, port, err := net.SplitHostPort(a)
	if err != nil {
		return "", fmt.Errorf("ADDR %q: want PORT or HOST:PORT", addr)
	}
	if host == "" {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port) + "/", nil
}

type topClient struct {
	base, token string
	http        *http.Client
}

func (c *topClient) current(ctx context.Context) (liveview.Snapshot, error) {
	var s liveview.Snapshot
	req, err := http.NewRequestWithContext(ctx, "GET", c.base+"api/v1/metrics/current", nil)
	if err != nil {
		return s, err
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return s, fmt.Errorf("live view at %s: %w", c.base, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		var e struct{ Error string }
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		_ = json.Unmarshal(b, &e)
		return s, fmt.Errorf("live view at %s: %s: %s", c.base, resp.Status, e.Error)
	}
	if err := json.NewDecoder(resp.Body).Decode(&s); err != nil {
		return s, fmt.Errorf("live view at %s: %w", c.base, err)
	}
	if s.Version != liveview.Version {
		return s, fmt.Errorf("live view at %s speaks API version %d; this ortel reads version %d", c.base, s.Version, liveview.Version)
	}
	return s, nil
}

// topLoop redraws every interval until q, Ctrl-C or ctx ends.
func topLoop(ctx context.Context, e *env, cl *topClient, interval time.Duration) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	fd := int(os.Stdin.Fd())
	if old, err := unix.IoctlGetTermios(fd, unix.TCGETS); err == nil {
		raw := *old
		raw.Lflag &^= unix.ICANON | unix.ECHO // keys one at a time, unechoed; Ctrl-C still interrupts
		raw.Cc[unix.VMIN], raw.Cc[unix.VTIME] = 1, 0
		if unix.IoctlSetTermios(fd, unix.TCSETS, &raw) == nil {
			defer func() { _ = unix.IoctlSetTermios(fd, unix.TCSETS, old) }()
		}
	}
	go func() { // q quits
		b := make([]byte, 1)
		for {
			if _, err := os.Stdin.Read(b); err != nil || b[0] == 'q' || b[0] == 'Q' {
				if err == nil {
					cancel()
				}
				return
			}
		}
	}()
	winch := make(chan os.Signal, 1)
	signal.Notify(winch, syscall.SIGWINCH)
	defer signal.Stop(winch)

	out := e.stdout
	fmt.Fprint(out, "\x1b[?1049h\x1b[?25l") // alternate screen, no cursor
	defer fmt.Fprint(out, "\x1b[?25h\x1b[?1049l")
	var p99s []float64
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		s, err := cl.current(ctx)
		if ctx.Err() != nil {
			return nil
		}
		var errp error
		if err != nil {
			errp = err
		} else if s.Runs.P99Seconds != nil {
			p99s = append(p99s, *s.Runs.P99Seconds)
			if len(p99s) > 400 {
				p99s = p99s[len(p99s)-400:]
			}
		}
		w, h := termSize()
		lines := topFrame(s, p99s, cl.base, w, h, errp)
		var b strings.Builder
		b.WriteString("\x1b[H")
		for i, l := range lines {
			if i > 0 {
				b.WriteString("\r\n")
			}
			b.WriteString(l)
			b.WriteString("\x1b[K")
		}
		b.WriteString("\x1b[J")
		fmt.Fprint(out, b.String())
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		case <-winch:
		}
	}
}

// termSize is the terminal's width and height, 80x24 when unknown.
func termSize() (int, int) {
	ws, err := unix.IoctlGetWinsize(int(os.Stdout.Fd()), unix.TIOCGWINSZ)
	if err != nil || ws.Col == 0 || ws.Row == 0 {
		return 80, 24
	}
	return int(ws.Col), int(ws.Row)
}

// topFrame lays out one frame of at most h lines of at most w columns.
func topFrame(s liveview.Snapshot, p99s []float64, base string, w, h int, fetchErr error) []string {
	var lines []string
	add := func(f string, a ...any) { lines = append(lines, fmt.Sprintf(f, a...)) }
	head := "ortel top  " + strings.TrimSuffix(strings.TrimPrefix(base, "http://"), "/")
	if !s.Time.IsZero() {
		head += "  " + s.Time.Local().Format("15:04:05")
	}
	add("%s", head)
	if fetchErr != nil {
		add("! %v", fetchErr)
	}
	if s.Phase != nil {
		ph := "phase  " + s.Phase.Name
		if s.Phase.Progress != nil {
			ph += fmt.Sprintf(" %3.0f%% %s", *s.Phase.Progress*100, bar(*s.Phase.Progress, 20))
		}
		add("%s  %s", ph, s.Phase.Detail)
	}
	r := s.Runs
	add("runs     total %d  %.1f/s  in flight %d  errors %d", r.Total, r.PerSecond, r.InFlight, r.Errors)
	add("latency  p50 %s  p95 %s  p99 %s  mean %s  (last %.0f s)", topDur(r.P50Seconds), topDur(r.P95Seconds), topDur(r.P99Seconds), topDur(r.MeanSeconds), r.WindowSeconds)
	if s.SLA != nil {
		v := "no runs in the window"
		if s.SLA.Compliance != nil {
			v = units.Percent(*s.SLA.Compliance, 1) + " at or under"
			if s.SLA.Met != nil && *s.SLA.Met {
				v += ", met"
			} else {
				v += ", MISSED"
			}
		}
		add("SLA      %s at p%g: %s", topDur(&s.SLA.ThresholdSeconds), s.SLA.Percentile, v)
	}
	if len(p99s) > 1 {
		add("p99      %s", spark(p99s, w-9))
	}
	lines = append(lines, topHardware(s.Hardware)...)
	if len(s.Operators) > 0 && len(lines) < h-2 {
		add("operators (profiled)")
		for _, o := range s.Operators {
			if len(lines) >= h-1 {
				break
			}
			add("  %-20s %8d runs  %s", o.OpType, o.Count, topDur(&o.TotalSeconds))
		}
	}
	// Fit: the last line says how to quit; nothing wider than w.
	if len(lines) > h-1 {
		lines = lines[:max(h-1, 0)]
	}
	lines = append(lines, "q quits")
	for i, l := range lines {
		lines[i] = clip(l, w)
	}
	return lines
}

// topHardware is the frame's hardware lines: those the snapshot has.
func topHardware(hw liveview.Hardware) []string {
	var lines []string
	add := func(f string, a ...any) { lines = append(lines, fmt.Sprintf(f, a...)) }
	if hw.CPUUtilization != nil {
		l := fmt.Sprintf("cpu      %5.1f%% %s", *hw.CPUUtilization*100, bar(*hw.CPUUtilization, 20))
		if hw.ProcessCPUUtilization != nil {
			l += fmt.Sprintf("  process %.1f%%", *hw.ProcessCPUUtilization*100)
		}
		add("%s", l)
	}
	if hw.MemoryUsedBytes != nil {
		l := "memory   " + topBytes(*hw.MemoryUsedBytes)
		if hw.MemoryLimitBytes != nil {
			l += " of " + topBytes(*hw.MemoryLimitBytes)
		}
		if hw.ProcessMemoryBytes != nil {
			l += "  process " + topBytes(*hw.ProcessMemoryBytes)
		}
		add("%s", l)
	}
	if hw.PowerWatts != nil || hw.EnergyJoules != nil {
		l := "power   "
		if hw.PowerWatts != nil {
			l += fmt.Sprintf(" %.1f W", *hw.PowerWatts)
		}
		if hw.EnergyJoules != nil {
			l += fmt.Sprintf("  energy %.1f J", *hw.EnergyJoules)
		}
		add("%s", l)
	}
	if hw.GPUUtilization != nil {
		l := fmt.Sprintf("gpu      %5.1f%% %s", *hw.GPUUtilization*100, bar(*hw.GPUUtilization, 20))
		if hw.GPUMemoryUsedBytes != nil {
			l += "  memory " + topBytes(*hw.GPUMemoryUsedBytes)
		}
		add("%s", l)
	}
	return lines
}

func clip(s string, w int) string {
	if utf8.RuneCountInString(s) <= w {
		return s
	}
	r := []rune(s)
	return string(r[:max(w, 0)])
}

func bar(f float64, n int) string {
	f = math.Min(math.Max(f, 0), 1)
	k := int(math.Round(f * float64(n)))
	return "[" + strings.Repeat("#", k) + strings.Repeat(".", n-k) + "]"
}

// spark draws the newest values that fit in w columns.
func spark(v []float64, w int) string {
	if w < 1 {
		return ""
	}
	if len(v) > w {
		v = v[len(v)-w:]
	}
	ticks := []rune("▁▂▃▄▅▆▇█")
	lo, hi := v[0], v[0]
	for _, x := range v {
		lo, hi = math.Min(lo, x), math.Max(hi, x)
	}
	var b strings.Builder
	for _, x := range v {
		i := 0
		if hi > lo {
			i = int((x - lo) / (hi - lo) * float64(len(ticks)-1))
		}
		b.WriteRune(ticks[i])
	}
	return b.String()
}

// topDur is a latency in seconds, "-" when there is none.
func topDur(s *float64) string {
	if s == nil {
		return "-"
	}
	return units.Duration(*s)
}

func topBytes(b float64) string { return units.Bytes(int64(b)) }
