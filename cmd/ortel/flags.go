package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// errHelp is returned by parse for -h/--help.
var errHelp = errors.New("help requested")

// listFlag is a repeatable string flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, " ") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

// parse parses flags that may come before, between or after positional
// arguments (`ortel bench model.onnx --runs 50` works), and returns the
// positional ones. A mistake is a usageError.
func parse(fs *flag.FlagSet, args []string) ([]string, error) {
	fs.SetOutput(io.Discard)
	if parsedFlags != nil {
		parsedFlags(fs)
	}
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, errHelp
			}
			return nil, usagef("%v", err)
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if rest[0] == "--" {
			return append(pos, rest[1:]...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// deprecatedFlag is an old spelling of a flag, still accepted: it sets
// the new flag and, once parsed, prints a one-line notice.
type deprecatedFlag struct {
	use     string // what to write instead, e.g. "--model-name NAME"
	set     func(string) error
	boolean bool
}

func (d *deprecatedFlag) String() string     { return "" }
func (d *deprecatedFlag) Set(v string) error { return d.set(v) }
func (d *deprecatedFlag) IsBoolFlag() bool   { return d.boolean }

// deprecate registers old as an old spelling of the flag named use: a
// value given to it is passed to set. A boolean old flag takes no value.
func deprecate(fs *flag.FlagSet, old, use string, boolean bool, set func(string) error) {
	fs.Var(&deprecatedFlag{use: use, set: set, boolean: boolean}, old, "")
}

// isDeprecated reports whether f is an old spelling.
func isDeprecated(f *flag.Flag) bool {
	_, ok := f.Value.(*deprecatedFlag)
	return ok
}

// noteDeprecated prints one line per old spelling used on the command line.
func noteDeprecated(e *env, command string, fs *flag.FlagSet) {
	fs.Visit(func(f *flag.Flag) {
		if d, ok := f.Value.(*deprecatedFlag); ok {
			fmt.Fprintf(e.stderr, "ortel %s: --%s is deprecated and will be removed: use %s\n", command, f.Name, d.use)
		}
	})
}

// parsedFlags, when not nil, receives each FlagSet parse sees: the test
// that matches every command's flags with its help text reads them.
var parsedFlags func(*flag.FlagSet)

// checkFormat lower-cases a --format value and checks it is one of
// allowed; anything else is a usage error.
func checkFormat(format string, allowed ...string) (string, error) {
	f := strings.ToLower(strings.TrimSpace(format))
	for _, a := range allowed {
		if f == a {
			return f, nil
		}
	}
	return "", usagef("--format %q: want %s", format, strings.Join(allowed, " or "))
}
