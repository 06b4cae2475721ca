package main

import (
	"errors"
	"flag"
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
			return nil, usagef("%s", flagSuggestion(fs, err))
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
