package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"
	"unicode"

	"github.com/ortel-dev/ortel/instrument"
	"github.com/ortel-dev/ortel/internal/bench"
	"github.com/ortel-dev/ortel/internal/report"
)

// abFlags are bench's --ab flags: two sides, each a set of bench options
// applied over the rest of the command line.
type abFlags struct {
	sides            listFlag
	threshold        string
	failOnRegression bool
	// args is the whole command line after "bench", which each side is
	// parsed from (without the --ab flags), then the side's own words.
	args []string
}

func (f *abFlags) register(fs *flagSet) {
	fs.valueFlag(&f.sides, "ab", "OPTIONS",
		"interleaved A/B comparison: give --ab twice, first side A then side B, each a quoted list of bench options "+
			"applied over the rest of the command line, as NAME=VALUE or --NAME VALUE, and optionally a MODEL of its own, e.g. "+
			"--ab opt-level=basic --ab opt-level=all, or --ab a.onnx --ab b.onnx. Each side gets its own session and warm-up; "+
			"blocks of runs alternate in a shuffled order until every headline interval (p50, p90) is clear of --ab-threshold, or --duration "+
			"(default 60s) passes. Prints the verdict first: B faster, slower, no difference, or undecided")
	fs.stringFlag(&f.threshold, "ab-threshold", "P", "2%",
		"relative change --ab counts as a difference, e.g. 2% or 0.05 (default 2%)")
	fs.boolFlag(&f.failOnRegression, "fail-on-regression", false,
		"with --ab: exit with status 3 when B is slower than A beyond --ab-threshold at p50")
}

// setArgs keeps the command line for the --ab sides.
func (a *benchAction) setArgs(args []string) { a.ab.args = args }

// abConfig is the comparison the flags ask for, both sides prepared
// (model resolved, inputs checked) as a plain bench would be. Both sides'
// options are read before either is prepared: a mistake in B is said
// before A's model is opened.
func (a *benchAction) abConfig(e *env, pos []string) (bench.AB, error) {
	f := &a.ab
	if len(f.sides) != 2 {
		return bench.AB{}, usagef("--ab takes two sides, A then B (got %d): e.g. --ab opt-level=basic --ab opt-level=all", len(f.sides))
	}
	ab := bench.AB{MaxTime: a.cfg.Duration, Seed: a.cfg.Seed}
	w, err := bench.ParseAutoWidth(f.threshold)
	if err != nil {
		return ab, usagef("--ab-threshold %q: want a share such as 2%% or 0.02", f.threshold)
	}
	ab.Threshold = w
	var sides [2]*benchAction
	var models [2]string
	var words [2][]string
	for i, spec := range f.sides {
		var own []string
		if sides[i], own, words[i], err = parseSide("AB"[i:i+1], spec, withoutABFlags(f.args)); err != nil {
			return ab, err
		}
		if models[i], err = sideModel("AB"[i:i+1], pos, own); err != nil {
			return ab, err
		}
	}
	libs, children, err := sideLibraries(sides)
	if err != nil {
		return ab, err
	}
	var cfgs [2]bench.Config
	for i, side := range sides {
		if i == 1 && models[1] == models[0] {
			side.output.quiet = true // the model's note was said for side A
		}
		if children {
			cfgs[i], err = side.childConfig(models[i])
		} else {
			cfgs[i], _, err = side.prepare(e, models[i])
		}
		if err != nil {
			return ab, fmt.Errorf("--ab side %s: %w", "AB"[i:i+1], err)
		}
	}
	if children {
		if ab.Children, err = childSpecs(e, libs, models, f.sides, withoutABFlags(f.args), a.output.quiet); err != nil {
			return ab, err
		}
	}
	ab.A, ab.ArgsA, ab.B, ab.ArgsB = cfgs[0], words[0], cfgs[1], words[1]
	return ab, usage(ab.Validate())
}

// parseSide reads one side: the command line without --ab (base), then
// the side's own words; it returns the side's flags, its own MODEL words
// and its words.
func parseSide(label, spec string, base []string) (*benchAction, []string, []string, error) {
	side := new(benchAction)
	fs := newFlagSet("bench")
	side.flags(fs)
	words, err := sideWords(spec, func(name string) bool { return fs.Lookup(name) != nil })
	if err != nil {
		return nil, nil, nil, usagef("--ab side %s %q: %v", label, spec, err)
	}
	if _, err := parse(fs.FlagSet, base); err != nil {
		return nil, nil, nil, err
	}
	own, err := parse(fs.FlagSet, words)
	if err != nil {
		return nil, nil, nil, usagef("--ab side %s %q: %v", label, spec, err)
	}
	if len(side.ab.sides) > 0 {
		return nil, nil, nil, usagef("--ab side %s %q: a side cannot hold --ab", label, spec)
	}
	return side, own, words, nil
}

// sideModel is the MODEL of a side: its own, or the command line's.
func sideModel(label string, pos, own []string) (string, error) {
	switch {
	case len(own) > 1:
		return "", usagef("--ab side %s names %d models (%s): give it one", label, len(own), strings.Join(own, ", "))
	case len(own) == 1:
		return own[0], nil
	case len(pos) == 1:
		return pos[0], nil
	case len(pos) == 0:
		return "", usagef("--ab side %s names no MODEL: give one on the command line or inside --ab", label)
	}
	return "", usagef("want at most one MODEL besides --ab, got %d arguments", len(pos))
}

// withoutABFlags is args less --ab and its value.
func withoutABFlags(args []string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return append(out, args[i:]...)
		}
		name := strings.TrimLeft(a, "-")
		if a != name && (name == "ab" || strings.HasPrefix(name, "ab=")) {
			if name == "ab" {
				i++ // the value
			}
			continue
		}
		out = append(out, a)
	}
	return out
}

// sideWords splits one --ab value into bench arguments: words separated
// by spaces (quotes keep spaces in a word), NAME=VALUE for a bench flag
// NAME becomes --NAME=VALUE; other words are kept as they are.
func sideWords(spec string, isFlag func(string) bool) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	var quote rune
	for _, r := range spec {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			cur.WriteRune(r)
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case unicode.IsSpace(r):
			if inWord {
				words, inWord = append(words, cur.String()), false
				cur.Reset()
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if quote != 0 {
		return nil, errors.New("a quote is not closed")
	}
	if inWord {
		words = append(words, cur.String())
	}
	if len(words) == 0 {
		return nil, errors.New("empty: give the options of this side, e.g. opt-level=basic")
	}
	for i, w := range words {
		if name, _, ok := strings.Cut(w, "="); ok && !strings.HasPrefix(w, "-") && isFlag(name) {
			words[i] = "--" + w
		}
	}
	return words, nil
}

// runAB runs bench --ab: both sides prepared, then one harness, the
// interleaved comparison, the report written, and exit 3 with
// --fail-on-regression when B is slower beyond the threshold.
func (a *benchAction) runAB(ctx context.Context, e *env, pos []string) error {
	shared := *e // the sides' child processes write on stderr too
	shared.stderr = &lockedWriter{w: e.stderr}
	e = &shared
	if err := a.validateGroups(); err != nil {
		return err
	}
	ab, err := a.abConfig(e, pos)
	if err != nil {
		return err
	}
	out := a.output.out
	if out == "" {
		out = benchOutDir(instrument.ModelName(ab.A.ModelPath)+"-ab", time.Now())
	}
	_, statErr := os.Stat(out)
	created := errors.Is(statErr, os.ErrNotExist)
	if err := os.MkdirAll(out, 0o755); err != nil {
		return fmt.Errorf("create output folder %q: %w", out, err)
	}
	_, hc := a.harnessConfig(ab.A, out)
	h, err := startHarness(ctx, e, "bench", hc)
	if err != nil {
		return err
	}
	defer h.close(ctx)
	a.wire(&ab.A, e, h, nil)
	a.wire(&ab.B, e, h, nil)
	ab.Progress = ab.A.Progress
	rep, benchErr := bench.RunAB(ctx, ab)
	h.ui.finish(e, benchErr)
	h.stopTelemetry(ctx)
	if benchErr != nil {
		err := h.failed(ctx, benchErr, "the A/B comparison finished, so no report was written")
		if created {
			dropFailedOutput(e, h, out)
		}
		return err
	}
	err = a.finish(ctx, e, h, rep, out)
	if a.ab.failOnRegression && rep.AB.Verdict == "slower" {
		err = errors.Join(err, fmt.Errorf("%w: %s", errRegression, rep.AB.Headline))
	}
	return err
}

// checkABFlags refuses the --ab options without --ab.
func (a *benchAction) checkABFlags() error {
	if len(a.ab.sides) == 0 && (a.ab.threshold != "2%" || a.ab.failOnRegression) {
		return usagef("--ab-threshold and --fail-on-regression apply to --ab (give --ab twice: side A, then side B)")
	}
	return nil
}

// printAB prints an A/B report summary-first.
func printAB(e *env, rep *report.Report, out string, reportErr error) error {
	if err := report.WriteABSummary(e.stdout, rep.AB); err != nil {
		return err
	}
	if reportErr != nil {
		fmt.Fprintf(e.stdout, "report      not written (see the error below)\n")
		return nil
	}
	fmt.Fprintf(e.stdout, "report      %s/report.html (and report.md, report.json: every block)\n", out)
	return nil
}
