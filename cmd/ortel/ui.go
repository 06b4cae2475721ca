package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/ortel-dev/ortel/internal/liveview"
)

// uiFlags is the live view group (bench, agent, attach).
type uiFlags struct {
	addr, token string
	allowRemote bool
}

func (u *uiFlags) register(fs *flagSet) {
	fs.stringFlag(&u.addr, "ui", "ADDR", "",
		"serve the live view (page, JSON API, stream at 12.5 Hz) on ADDR: a bare port is 127.0.0.1:PORT (default: off)")
	fs.boolFlag(&u.allowRemote, "ui-allow-remote", false, "allow a --ui address that is not loopback (needs --ui-token)")
	fs.stringFlag(&u.token, "ui-token", "T", "",
		`token the live view requires, as "Authorization: Bearer T" or ?token=T (default: ORTEL_UI_TOKEN); `+
			`16 characters or more, not easy to guess (not "aaaa…", "abcd…", spaces): openssl rand -hex 16 makes one`)
}

// validate checks the flags before any work starts.
func (u *uiFlags) validate() error {
	if u.token == "" {
		u.token = os.Getenv("ORTEL_UI_TOKEN")
	}
	if u.addr == "" {
		if u.allowRemote {
			return usagef("--ui-allow-remote needs --ui ADDR")
		}
		return nil
	}
	if u.token != "" {
		if err := liveview.CheckToken(u.token); err != nil {
			return usagef("--ui-token (or ORTEL_UI_TOKEN): %v", err)
		}
	}
	if _, err := liveview.ResolveAddr(u.addr, u.allowRemote, u.token); err != nil {
		return usagef("--ui: %v", err)
	}
	return nil
}

// liveUI is a running live view; nil when --ui is off (its methods then do
// nothing).
type liveUI struct {
	flags  uiFlags
	reader *sdkmetric.ManualReader
	view   *liveview.View
	srv    *liveview.Server
	cancel context.CancelFunc
	done   chan struct{}
}

// uiStarted, when set (tests), is told the live view's URL.
var uiStarted func(url string)

// newUI returns the live view's reader (to put on the MeterProvider), or
// nil when --ui is off.
func (u *uiFlags) newUI(cfg liveview.Config) *liveUI {
	if u.addr == "" {
		return nil
	}
	r := liveview.NewReader()
	return &liveUI{flags: *u, reader: r, view: liveview.New(r, cfg)}
}

// readers is what goes into telemetry.Config.Readers.
func (l *liveUI) readers() []sdkmetric.Reader {
	if l == nil {
		return nil
	}
	return []sdkmetric.Reader{l.reader}
}

// start listens and starts sampling; the reader must be on a MeterProvider.
func (l *liveUI) start(ctx context.Context, e *env, command string) error {
	if l == nil {
		return nil
	}
	u := l.flags
	srv, err := liveview.Serve(l.view, u.addr, u.allowRemote, u.token)
	if err != nil {
		return err
	}
	l.srv = srv
	ctx, l.cancel = context.WithCancel(context.WithoutCancel(ctx))
	l.done = make(chan struct{})
	go func() { defer close(l.done); l.view.Run(ctx) }()
	note := ""
	if u.token != "" {
		note = " (add ?token=… with the --ui-token value)"
	}
	fmt.Fprintf(e.stderr, "ortel %s: live view at %s%s\n", command, srv.URL, note)
	if uiStarted != nil {
		uiStarted(srv.URL)
	}
	return nil
}

// stop ends sampling and closes the server.
func (l *liveUI) stop() {
	if l == nil || l.srv == nil {
		return
	}
	l.cancel()
	<-l.done
	_ = l.srv.Close()
}

// phaseWriter passes the bench's progress lines on and tells the live
// view which phase they start.
type phaseWriter struct {
	next   io.Writer // may be nil (--quiet)
	view   *liveview.View
	runs   int
	length time.Duration
}

func (p phaseWriter) Write(b []byte) (int, error) {
	line := strings.TrimSpace(string(b))
	switch {
	case strings.HasPrefix(line, "creating"):
		p.view.SetPhase("loading", line, 0, 0)
	case strings.HasPrefix(line, "warming up"):
		p.view.SetPhase("warm-up", line, 0, 0)
	case strings.HasPrefix(line, "measuring"), strings.HasPrefix(line, "batch sweep"), strings.HasPrefix(line, "generating"):
		p.view.SetPhase("measured", line, p.runs, p.length)
	case strings.HasPrefix(line, "searching"), strings.HasPrefix(line, "trial"):
		p.view.SetPhase("SLA search", line, 0, 0)
	case strings.HasPrefix(line, "profiling"):
		p.view.SetPhase("profiling", line, 0, 0)
	}
	if p.next == nil {
		return len(b), nil
	}
	return p.next.Write(b)
}

// finish takes a last sample before the telemetry shuts down and marks the
// bench done (or failed).
func (l *liveUI) finish(e *env, benchErr error) {
	if l == nil || l.srv == nil {
		return
	}
	if benchErr != nil {
		l.view.SetPhase("failed", e.redact.Redact(flagWords(benchErr)), 0, 0)
	} else {
		l.view.SetPhase("finishing", "flushing telemetry and writing the report", 0, 0)
	}
	_ = l.view.Sample(context.Background())
}

// hold publishes the report and keeps the live view up, showing the final
// state, until the command is interrupted.
func (l *liveUI) hold(ctx context.Context, e *env, command string, rep any) {
	if l == nil || l.srv == nil {
		return
	}
	if err := l.view.SetReport(rep); err != nil {
		fmt.Fprintf(e.stderr, "ortel %s: warning: live view: %v\n", command, err)
	}
	l.view.SetPhase("done", "the bench finished; the report is at /api/v1/report", 0, 0)
	l.view.Republish()
	if ctx.Err() != nil {
		return
	}
	fmt.Fprintf(e.stderr, "ortel %s: done; the live view stays at %s until interrupted (Ctrl-C)\n", command, l.srv.URL)
	<-ctx.Done()
}
