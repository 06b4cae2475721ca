package main

import (
	"flag"
	"fmt"
	"strings"
	"time"
)

// flagSet is one command's flags, each registered once with the name of
// its argument and its help text: the command's help is written from it,
// and so can be shell completion and "did you mean" (every flag, whether
// it takes a value, and what it is for). A flag registered on the
// embedded FlagSet without going through it has no help, which
// TestEveryFlagIsInItsHelp catches.
type flagSet struct {
	*flag.FlagSet
	docs []flagDoc
}

// flagDoc is one flag as the help shows it.
type flagDoc struct {
	name string
	// arg names the flag's value in the help (N, DIR, URL); "" for a
	// boolean flag.
	arg string
	// help is what the flag does and its default, in sentences: the help
	// wraps it to the terminal's 80 columns. A line that starts with a
	// space is kept as written (a table inside the help).
	help string
	// choices are the words the flag's value may be, for shell
	// completion; none for a free value.
	choices []string
}

func newFlagSet(name string) *flagSet {
	return &flagSet{FlagSet: flag.NewFlagSet(name, flag.ContinueOnError)}
}

func (fs *flagSet) doc(name, arg, help string) {
	fs.docs = append(fs.docs, flagDoc{name: name, arg: arg, help: help})
}

// choices records the words flag name's value may be (shell completion
// offers them); the flag is registered already.
func (fs *flagSet) choices(name string, words ...string) {
	for i := range fs.docs {
		if fs.docs[i].name == name {
			fs.docs[i].choices = words
			return
		}
	}
	panic("choices for an unregistered flag --" + name)
}

func (fs *flagSet) stringFlag(p *string, name, arg, value, help string) {
	fs.StringVar(p, name, value, "")
	fs.doc(name, arg, help)
}

func (fs *flagSet) boolFlag(p *bool, name string, value bool, help string) {
	fs.BoolVar(p, name, value, "")
	fs.doc(name, "", help)
}

func (fs *flagSet) intFlag(p *int, name, arg string, value int, help string) {
	fs.IntVar(p, name, value, "")
	fs.doc(name, arg, help)
}

func (fs *flagSet) uint64Flag(p *uint64, name, arg string, value uint64, help string) {
	fs.Uint64Var(p, name, value, "")
	fs.doc(name, arg, help)
}

func (fs *flagSet) float64Flag(p *float64, name, arg string, value float64, help string) {
	fs.Float64Var(p, name, value, "")
	fs.doc(name, arg, help)
}

func (fs *flagSet) durationFlag(p *time.Duration, name, arg string, value time.Duration, help string) {
	fs.DurationVar(p, name, value, "")
	fs.doc(name, arg, help)
}

// valueFlag registers a flag of its own type (listFlag: repeatable).
func (fs *flagSet) valueFlag(v flag.Value, name, arg, help string) {
	fs.Var(v, name, "")
	fs.doc(name, arg, help)
}

func (fs *flagSet) funcFlag(name, arg, help string, set func(string) error) {
	fs.Func(name, "", set)
	fs.doc(name, arg, help)
}

// The help's layout: a flag's name and argument, then its help from
// column helpColumn, wrapped before column helpWidth.
const (
	helpColumn = 22
	helpWidth  = 80
)

// usage is the flags' part of the help, one entry per flag in the order
// they were registered; old spellings are not listed (the command's text
// names them).
func (fs *flagSet) usage() string {
	var b strings.Builder
	pad := strings.Repeat(" ", helpColumn)
	for _, d := range fs.docs {
		head := "  --" + d.name
		if d.arg != "" {
			head += " " + d.arg
		}
		lines := wrapHelp(d.help, helpWidth-helpColumn)
		if len(head) < helpColumn {
			b.WriteString(head + strings.Repeat(" ", helpColumn-len(head)))
		} else {
			b.WriteString(head + "\n" + pad)
		}
		for i, l := range lines {
			if i > 0 {
				b.WriteString(pad)
			}
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}

// wrapHelp breaks help into lines of at most width characters at spaces;
// a line of help that starts with a space is kept whole.
func wrapHelp(help string, width int) []string {
	var out []string
	for _, para := range strings.Split(help, "\n") {
		if strings.HasPrefix(para, " ") {
			out = append(out, para)
			continue
		}
		line := ""
		for _, w := range strings.Fields(para) {
			switch {
			case line == "":
				line = w
			case len([]rune(line))+1+len([]rune(w)) > width:
				out = append(out, line)
				line = w
			default:
				line += " " + w
			}
		}
		out = append(out, line)
	}
	return out
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
// It has no entry in the flags' help: the command's text names it and
// what replaces it.
func (fs *flagSet) deprecate(old, use string, boolean bool, set func(string) error) {
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

// flagGiven reports whether flag name was given on the command line.
func flagGiven(fs *flag.FlagSet, name string) bool {
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == name })
	return given
}
