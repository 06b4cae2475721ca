// Command ortel profiles ONNX Runtime models and ships what it measures as
// OpenTelemetry traces and metrics.
//
// Usage:
//
//	ortel bench [flags] MODEL          profile a model: latency, throughput, operators
//	ortel import [flags] PROFILE...    turn ONNX Runtime profile JSON files into OTLP spans
//	ortel agent [flags]                export hardware readings continuously
//	ortel attach --pid PID | --lib P   trace a running process's ONNX Runtime runs (eBPF)
//	ortel top [ADDR]                   watch a live view (bench --ui, agent --ui) in the terminal
//	ortel doctor                       list what ortel can use on this machine
//	ortel report RUN.json              render a saved run as text, JSON, Markdown, CSV or HTML
//	ortel compare A.json B.json        compare two runs, gate on regressions
//	ortel history SUBCOMMAND           every run remembered: trends, change points, CI gate
//	ortel replay DIR|FILE...           send a spool or OTLP/JSON lines files to a collector
//	ortel version                      print versions
//	ortel completion bash|zsh|fish     print a shell completion script
//
// Run `ortel help COMMAND` for a command's flags and examples.
//
// How the package is built: each command is a row of the table commands
// returns (name, one-line summary, help text, and an action whose flags
// method registers the command's flags with their help, and whose run
// method does the work); its help is written from that table
// (command.help). Flags shared by commands are registered by one function
// per group (groups.go: OTLP export, output, hardware; ui.go: live view;
// analysisflags.go: analysis). What every command that exports telemetry
// starts and stops — telemetry, spool, live view, hardware, the exit
// report — is one harness (harness.go). The engines validate their own
// configuration (bench.Config.Validate, ...) in their own words; the
// table in flagnames.go names the flag for each field they mention.
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

	"golang.org/x/sys/unix"

	"github.com/ortel-dev/ortel/internal/progress"
	"github.com/ortel-dev/ortel/internal/telemetry"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "0.1.0-dev"

// command is one row of the command table.
type command struct {
	name string
	// summary is the one line `ortel help` lists.
	summary string
	// intro is the help before the flags: how to call the command and
	// what it does. outro comes after them: environment, old spellings,
	// examples.
	intro, outro string
	// args completes the positional arguments, given those before the
	// one being typed (shell completion); noArgs for a command that takes
	// none.
	args func(before []string) completion
	// new returns a fresh action: the command's flags and what it does.
	new func() action
}

// action is one run of a command.
type action interface {
	// flags registers the command's flags, its own and its groups', each
	// with its help.
	flags(fs *flagSet)
	// run does the work with the parsed flags and the positional
	// arguments.
	run(ctx context.Context, e *env, args []string) error
}

// flagSet returns the command's flags, registered on a fresh action.
func (c *command) flagSet() (*flagSet, action) {
	a := c.new()
	fs := newFlagSet(c.name)
	a.flags(fs)
	return fs, a
}

// help is the command's help: its text around its flags' help.
func (c *command) help() string {
	fs, _ := c.flagSet()
	if len(fs.docs) == 0 {
		return c.intro + c.outro
	}
	return c.intro + "\nFlags:\n" + fs.usage() + c.outro
}

// exec parses args (flags may come before, between or after the
// positional arguments) and runs the command.
func (c *command) exec(ctx context.Context, e *env, args []string) error {
	fs, a := c.flagSet()
	pos, err := parse(fs.FlagSet, args)
	if err != nil {
		return err
	}
	noteDeprecated(e, c.name, fs.FlagSet)
	if r, ok := a.(interface{ setArgs([]string) }); ok {
		r.setArgs(args) // bench --ab parses its sides from the command line
	}
	return a.run(ctx, e, pos)
}

// env is what a command may touch: its output streams. Commands never call
// os.Exit; main turns their error into an exit code.
type env struct {
	stdout, stderr io.Writer
	// redact hides OTLP header values (see telemetry.Redactor); stdout
	// and stderr already pass through it.
	redact *telemetry.Redactor
	// stdoutTerminal says standard output is a terminal (not a pipe or a
	// file): what draws on the screen (ortel top) needs one.
	stdoutTerminal bool
	// bars is where progress indicators are drawn: standard error when it
	// is a terminal and CI is not set (progress.Enabled), else nil: none.
	// Commands leave it out under --quiet.
	bars io.Writer
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
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
	{exitRegression, "compare --fail-on-regression: B is slower than A by at least the threshold, or A met an SLA that B misses; bench --ab --fail-on-regression: B is slower than A beyond --ab-threshold at p50; history check: the newest run sits after a change point for the worse"},
	{exitTelemetryLost, "the work succeeded, but telemetry it was asked to send was lost or spooled for ortel replay (bench, agent, attach, import's metrics); one line per signal says what. Import spans that cannot be delivered fail the import: 1"},
}

// lostError is telemetry that was lost, or spooled to spoolDir, while the
// command's own work succeeded: exit code 4. Each line names a signal.
type lostError struct {
	lines, spooled []string
	spoolDir       string
	// notes say what else happened to the telemetry's files (a record a
	// crash cut short, removed when the spool was opened).
	notes []string
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
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error {
	return &usageError{err: fmt.Errorf(format, args...)}
}

// usage marks err, an engine's refusal of the configuration the flags
// gave (its Validate, or a parser of a flag's value), as a usage error;
// nil stays nil. Its message names fields; exitWith prints the flags.
func usage(err error) error {
	if err == nil {
		return nil
	}
	return &usageError{err: err}
}

func commands() []*command {
	return []*command{benchCommand(), importCommand(), agentCommand(), attachCommand(), topCommand(), doctorCommand(), fetchCommand(), reportCommand(), compareCommand(), historyCommand(), replayCommand(), versionCommand(), completionCommand()}
}

func main() {
	version = moduleVersion(version)
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
	var bars io.Writer
	if progress.Enabled(e.stderr) {
		bars = e.stderr
	}
	e = &env{stdout: r.Writer(e.stdout), stderr: r.Writer(e.stderr), redact: r, stdoutTerminal: isTerminal(e.stdout), bars: bars}
	handler := installSinks(e.stderr, r)
	if len(args) == 0 {
		printUsage(e.stderr)
		return exitUsage
	}
	name := args[0]
	if name == completeCommand {
		return runComplete(e, args[1:])
	}
	if name == abSideCommand {
		return runABSide(ctx, e, args[1:])
	}
	if name == "help" || name == "-h" || name == "--help" || name == "-help" {
		if len(args) > 1 {
			if c := find(args[1]); c != nil {
				fmt.Fprintf(e.stdout, "%s\n\n%s", c.summary, c.help())
				return 0
			}
			fmt.Fprintf(e.stderr, "ortel: no command %q%s\n", args[1], commandSuggestion(args[1]))
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
		fmt.Fprintf(e.stderr, "ortel: unknown command %q%s\n\n", name, commandSuggestion(name))
		printUsage(e.stderr)
		return 2
	}
	err := c.exec(ctx, e, args[1:])
	code := exitWith(e, c, err)
	for _, r := range handler.repeats() {
		fmt.Fprintf(e.stderr, "ortel %s: telemetry: %s\n", c.name, r)
	}
	return code
}

// exitWith prints what a command's error says and returns the exit code.
// The error may carry a *lostError (errors.Join): the telemetry lost or
// spooled. Its lines come last, after the command's own errors, each
// distinct line printed once with a count; exit code 4 is for a command
// whose only trouble is its telemetry, any other error keeps its code.
func exitWith(e *env, c *command, err error) int {
	var le *lostError
	if errors.As(err, &le) {
		err = without(err, le)
	}
	code := exitOK
	var ue *usageError
	switch {
	case err == nil:
		if le != nil {
			code = exitTelemetryLost
		}
	case errors.Is(err, errHelp):
		fmt.Fprintf(e.stdout, "%s\n\n%s", c.summary, c.help())
		return exitOK
	case errors.As(err, &ue):
		code = exitUsage
	case errors.Is(err, errRegression):
		code = exitRegression
	default:
		code = exitFailure
	}
	for _, l := range distinctLines(err) {
		fmt.Fprintf(e.stderr, "ortel %s: %s\n", c.name, l)
	}
	if code == exitUsage {
		fmt.Fprintf(e.stderr, "run 'ortel help %s' for usage\n", c.name)
	}
	if le != nil {
		for _, l := range le.lines {
			fmt.Fprintf(e.stderr, "ortel %s: telemetry lost: %s\n", c.name, l)
		}
		for _, l := range le.spooled {
			fmt.Fprintf(e.stderr, "ortel %s: telemetry spooled: %s\n", c.name, l)
		}
		if len(le.spooled) > 0 {
			fmt.Fprintf(e.stderr, "ortel %s: send the spooled telemetry when the collector is back: ortel replay %s\n", c.name, le.spoolDir)
		}
		for _, n := range le.notes {
			fmt.Fprintf(e.stderr, "ortel %s: telemetry: %s\n", c.name, n)
		}
		if le.waited > 0 {
			fmt.Fprintf(e.stderr, "ortel %s: waited %.2fs at exit for the last exports\n", c.name, le.waited.Seconds())
		}
	}
	return code
}

// without returns err less target, one of the errors errors.Join joined
// into it.
func without(err, target error) error {
	if err == target {
		return nil
	}
	parts, ok := joined(err)
	if !ok {
		return err
	}
	var rest []error
	for _, x := range parts {
		if x = without(x, target); x != nil {
			rest = append(rest, x)
		}
	}
	return errors.Join(rest...)
}

// joined returns the errors errors.Join made err of. An error wrapping
// several with fmt.Errorf("%w ... %w") is one message, not a join.
func joined(err error) ([]error, bool) {
	j, ok := err.(interface{ Unwrap() []error })
	if !ok {
		return nil, false
	}
	parts := j.Unwrap()
	msgs := make([]string, len(parts))
	for i, p := range parts {
		msgs[i] = p.Error()
	}
	return parts, strings.Join(msgs, "\n") == err.Error()
}

// distinctLines are the messages of the errors err joins, each once, in
// order, one that came several times (the same failure of several
// exports) followed by how many.
func distinctLines(err error) []string {
	var order []string
	count := map[string]int{}
	var walk func(error)
	walk = func(err error) {
		if parts, ok := joined(err); ok {
			for _, p := range parts {
				walk(p)
			}
			return
		}
		msg := strings.TrimSpace(flagWords(err))
		if msg == "" {
			return
		}
		if count[msg] == 0 {
			order = append(order, msg)
		}
		count[msg]++
	}
	if err != nil {
		walk(err)
	}
	for i, msg := range order {
		if n := count[msg]; n > 1 {
			order[i] = fmt.Sprintf("%s (%d times)", msg, n)
		}
	}
	return order
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
	width := 0
	for _, c := range commands() {
		width = max(width, len(c.name))
	}
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-*s %s\n", width, c.name, c.summary)
	}
	fmt.Fprintf(w, "\nRun 'ortel help COMMAND' for a command's flags and examples.\n")
	fmt.Fprintf(w, "\nExit codes (every command):\n")
	for _, c := range exitCodes {
		fmt.Fprintf(w, "  %d  %s\n", c.code, c.meaning)
	}
}
