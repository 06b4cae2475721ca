package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/ortel-dev/ortel/internal/analysis"
	"github.com/ortel-dev/ortel/internal/report"
)

const compareIntro = `Usage:
  ortel compare [flags] A.json B.json

Compares run B against run A (two report.json files from ortel bench): the
change of each latency statistic (mean, p50, p90, p95, p99, p99.9) with a
bootstrap confidence interval computed from both runs' raw latency samples,
throughput and energy per inference, and the time of each op type per
profiled run. The verdict — faster, slower, or no significant change — is
read from one statistic: its change must be significant (the interval
excludes 0) and at least 1%. Each percentile also shows both runs'
order-statistic intervals; a percentile either run has too few samples to
bound is marked "insufficient runs" and never called significant.

With --fail-on-regression, the command exits with status 3 when B is slower
by at least the threshold, or when both runs checked the same SLA and A's
early-stopping verdict is met and B's missed, so CI pipelines can gate on
it; a gate on a percentile the runs cannot bound is reported undecided
(exit 0). An unreadable report exits 1 and a bad command line 2.

When either report's measurement verdict is disturbed (a co-runner, steal,
drift... during its measured phase), no change is called significant and the
gate is undecided, saying which side and why; --allow-disturbed judges the
difference anyway.
`

const compareOutro = `
Examples:
  ortel compare base/report.json head/report.json
  ortel compare --fail-on-regression 5% --percentile p99 a.json b.json
  ortel compare --format md a.json b.json >> "$GITHUB_STEP_SUMMARY"
`

func compareCommand() *command {
	return &command{
		name:    "compare",
		summary: "compare two runs: latency deltas with confidence intervals, regression gate",
		intro:   compareIntro,
		outro:   compareOutro,
		new:     func() action { return new(compareAction) },
	}
}

// errRegression marks the gate's failure: exit status 3.
var errRegression = errors.New("regression")

// compareAction is one ortel compare.
type compareAction struct {
	percentile, gate, format string
	resamples                int
	seed                     uint64
	allowDisturbed           bool
}

func (a *compareAction) flags(fs *flagSet) {
	fs.stringFlag(&a.percentile, "percentile", "P", "p50",
		"statistic of the verdict and gate: p50 (default), p90, p95, p99, p99.9 or mean")
	fs.stringFlag(&a.gate, "fail-on-regression", "T", "",
		"exit 3 when B is significantly slower by at least T, e.g. 5% (or 0.05)")
	fs.stringFlag(&a.format, "format", "F", "text", "text (default), json or md")
	fs.intFlag(&a.resamples, "resamples", "N", analysis.DefaultResamples, "bootstrap resamples (default 2000)")
	fs.uint64Flag(&a.seed, "seed", "N", 1, "seed of the bootstrap (default 1: repeatable intervals)")
	fs.boolFlag(&a.allowDisturbed, "allow-disturbed", false, "judge the difference even when a side's measurement was disturbed")
}

func (ca *compareAction) run(ctx context.Context, e *env, pos []string) error {
	percentile, gate, format, resamples, seed := ca.percentile, ca.gate, ca.format, ca.resamples, ca.seed
	var err error
	if len(pos) != 2 {
		return usagef("want two reports, A.json and B.json; got %d arguments", len(pos))
	}
	cfg := analysis.CompareConfig{Resamples: resamples, Seed: seed, AllowDisturbed: ca.allowDisturbed}
	if cfg.Percentile, err = analysis.ParsePercentile(percentile); err != nil {
		return usagef("--percentile: %v", err)
	}
	if gate != "" {
		if cfg.Threshold, err = analysis.ParseThreshold(gate); err != nil {
			return usagef("--fail-on-regression: %v", err)
		}
	}
	if resamples < 100 || resamples > 100000 {
		return usagef("--resamples must be between 100 and 100000 (got %d)", resamples)
	}
	if seed == 0 {
		return usagef("--seed must not be 0")
	}
	switch format = strings.ToLower(format); format {
	case "text", "json", "md", "markdown":
	default:
		return usagef("--format %q: want text, json or md", format)
	}

	a, err := report.Read(pos[0])
	if err != nil {
		return err
	}
	b, err := report.Read(pos[1])
	if err != nil {
		return err
	}
	c, err := analysis.Compare(a, b, pos[0], pos[1], cfg)
	if err != nil {
		return err
	}
	switch format {
	case "json":
		j, _ := json.MarshalIndent(c, "", "  ")
		_, err = fmt.Fprintf(e.stdout, "%s\n", j)
	case "md", "markdown":
		err = analysis.WriteComparisonMarkdown(e.stdout, c)
	default:
		err = analysis.WriteComparisonText(e.stdout, c)
	}
	if err != nil {
		return err
	}
	if c.Regression != nil && c.Regression.Exceeded {
		return fmt.Errorf("%w: B (%s) against A (%s): %s", errRegression, pos[1], pos[0], strings.TrimPrefix(c.Regression.Reason, "regression: "))
	}
	return nil
}
