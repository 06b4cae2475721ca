// Command ortel profiles ONNX Runtime models and ships what it measures as
// OpenTelemetry traces and metrics.
//
// Usage:
//
//	ortel bench [flags] MODEL     profile a model: latency, throughput, operators
//	ortel import [flags] PROFILE  turn an ORT profile JSON into OTLP spans
//	ortel agent [flags]           export hardware readings continuously
//	ortel attach --pid PID        trace a running process's ONNX Runtime runs (eBPF)
//	ortel doctor                  list what ortel can use on this machine
//	ortel report RUN.json         render a saved run as text, JSON, Markdown, CSV or HTML
//	ortel compare A.json B.json   compare two runs, gate on regressions
//	ortel history check           find change points over every recorded run, gate on regressions
//	ortel version                 print versions
//
// Run `ortel help COMMAND` for a command's flags and examples.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/ortel-dev/ortel/internal/telemetry"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "0.1.0-dev"

// command is one subcommand.
type command struct {
	name    string
	summary string
	usage   string // flags and examples, shown by help
	run     func(ctx context.Context, env *env, args []string) error
}

// env is what a command may touch: its output streams. Commands never call
// os.Exit; main turns their error into an exit code.
type env struct {
	stdout, stderr io.Writer
	// redact hides OTLP header values (see telemetry.Redactor); stdout
	// and stderr already pass through it.
	redact *telemetry.Redactor
}

// Exit codes, the same for every command (printed by `ortel help` and in
// the README).
const (
	exitOK            = 0
	exitFailure       = 1
	exitUsage         = 2
	exitRegression    = 3
	exitTelemetryLost = 4
)

// exitCodes is the table of exit codes, as help prints it.
var exitCodes = []struct {
	code    int
	meaning string
}{
	{exitOK, "success"},
	{exitFailure, "failure: bad input (model, profile, report), a missing library or process, an I/O error"},
	{exitUsage, "usage error: unknown command or flag, bad flag value, wrong arguments"},
	{exitRegression, "compare --fail-on-regression: B is slower than A by at least the threshold, or A met an SLA that B misses; history check: the newest run sits after a change point for the worse"},
	{exitTelemetryLost, "the work succeeded, but telemetry it was asked to send was lost or spooled for ortel replay (bench, agent, attach, import's metrics); one line per signal says what. Import spans that cannot be delivered fail the import: 1"},
}

// lostError is telemetry that was lost, or spooled to spoolDir, while the
// command's own work succeeded: exit code 4. Each line names a signal.
type lostError struct {
	lines, spooled []string
	spoolDir       string
	// waited is how long the command waited at exit for its last exports.
	waited time.Duration
}

func (e *lostError) Error() string {
	var parts []string
	if len(e.lines) > 0 {
		parts = append(parts, "telemetry lost: "+strings.Join(e.lines, "; "))
	}
	if len(e.spooled) > 0 {
		parts = append(parts, "telemetry spooled: "+strings.Join(e.spooled, "; ")+"; send it with: ortel replay "+e.spoolDir)
	}
	if e.waited > 0 {
		parts = append(parts, fmt.Sprintf("waited %.2fs at exit for the last exports", e.waited.Seconds()))
	}
	return strings.Join(parts, "; ")
}

// usageError is a mistake in the command line: exit code 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

func commands() []*command {
	return []*command{benchCommand(), importCommand(), agentCommand(), attachCommand(), topCommand(), doctorCommand(), reportCommand(), compareCommand(), historyCommand(), replayCommand(), versionCommand()}
}

func main() {
	installGRPCLogger(os.Stderr, telemetry.RedactorFromEnv(os.Environ()))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, &env{stdout: os.Stdout, stderr: os.Stderr}, os.Args[1:])
	stop()
	os.Exit(code)
}

// run executes the command line and returns the exit code.
func run(ctx context.Context, e *env, args []string) int {
	// Everything a command prints passes through the redactor of the
	// environment's OTLP headers and endpoints.
	r := telemetry.RedactorFromEnv(os.Environ())
	e = &env{stdout: r.Writer(e.stdout), stderr: r.Writer(e.stderr), redact: r}
	installSinks(e.stderr, r)
	if len(args) == 0 {
		printUsage(e.stderr)
		return exitUsage
	}
	name := args[0]
	if name == "help" || name == "-h" || name == "--help" || name == "-help" {
		if len(args) > 1 {
			if c := find(args[1]); c != nil {
				fmt.Fprintf(e.stdout, "%s\n\n%s", c.summary, c.usage)
				return 0
			}
			fmt.Fprintf(e.stderr, "ortel: no command %q\n", args[1])
			return 2
		}
		printUsage(e.stdout)
		return 0
	}
	if name == "--version" || name == "-version" {
		name = "version"
	}
	c := find(name)
	if c == nil {
		fmt.Fprintf(e.stderr, "ortel: unknown command %q\n\n", name)
		printUsage(e.stderr)
		return 2
	}
	err := c.run(ctx, e, args[1:])
	var ue *usageError
	var le *lostError
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, errHelp):
		fmt.Fprintf(e.stdout, "%s\n\n%s", c.summary, c.usage)
		return exitOK
	case errors.As(err, &ue):
		fmt.Fprintf(e.stderr, "ortel %s: %v\nrun 'ortel help %s' for usage\n", c.name, err, c.name)
		return exitUsage
	case errors.Is(err, errRegression):
		fmt.Fprintf(e.stderr, "ortel %s: %v\n", c.name, err)
		return exitRegression
	case errors.As(err, &le) && err == error(le):
		for _, l := range le.lines {
			fmt.Fprintf(e.stderr, "ortel %s: telemetry lost: %s\n", c.name, l)
		}
		for _, l := range le.spooled {
			fmt.Fprintf(e.stderr, "ortel %s: telemetry spooled: %s\n", c.name, l)
		}
		if len(le.spooled) > 0 {
			fmt.Fprintf(e.stderr, "ortel %s: send the spooled telemetry when the collector is back: ortel replay %s\n", c.name, le.spoolDir)
		}
		if le.waited > 0 {
			fmt.Fprintf(e.stderr, "ortel %s: waited %.2fs at exit for the last exports\n", c.name, le.waited.Seconds())
		}
		return exitTelemetryLost
	default:
		fmt.Fprintf(e.stderr, "ortel %s: %v\n", c.name, err)
		return exitFailure
	}
}

func find(name string) *command {
	for _, c := range commands() {
		if c.name == name {
			return c
		}
	}
	return nil
}

func printUsage(w io.Writer) {
	fmt.Fprintf(w, "ortel — OpenTelemetry instrumentation for ONNX Runtime inference\n\nUsage:\n  ortel COMMAND [flags] [arguments]\n\nCommands:\n")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-8s %s\n", c.name, c.summary)
	}
	fmt.Fprintf(w, "\nRun 'ortel help COMMAND' for a command's flags and examples.\n")
	fmt.Fprintf(w, "\nExit codes (every command):\n")
	for _, c := range exitCodes {
		fmt.Fprintf(w, "  %d  %s\n", c.code, c.meaning)
	}
}
