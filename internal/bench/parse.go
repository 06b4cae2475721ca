package bench

import (
	"strconv"
	"strings"
)

// The parsers of the options given as words: each reads what a person
// types (a command-line flag's value) and says what is wrong with it in
// the Config's terms (configerr: {Field}).

// ParseRuns reads the measured runs: a number, or auto (AutoRuns, with
// auto true and n 0). The range is Validate's.
func ParseRuns(s string) (n int, auto bool, err error) {
	t := strings.TrimSpace(s)
	if strings.EqualFold(t, "auto") {
		return 0, true, nil
	}
	n, err = strconv.Atoi(t)
	if err != nil {
		return 0, false, invalid("{Runs} %q: want a number of runs, 1 or more, or auto", s)
	}
	return n, false, nil
}

// ParseWarmup reads the warm-up: a number of runs, 0 or more, or auto
// (WarmupAuto).
func ParseWarmup(s string) (n int, auto bool, err error) {
	t := strings.TrimSpace(s)
	if strings.EqualFold(t, "auto") {
		return 0, true, nil
	}
	n, err = strconv.Atoi(t)
	if err != nil || n < 0 {
		return 0, false, invalid("{Warmup} %q: want a number of runs, 0 or more, or auto", s)
	}
	return n, false, nil
}

// ParseAutoPercentile reads the percentile AutoRuns watches: p99, or 99.
func ParseAutoPercentile(s string) (float64, error) {
	p, err := strconv.ParseFloat(strings.TrimPrefix(strings.ToLower(strings.TrimSpace(s)), "p"), 64)
	if err != nil || !(p > 0 && p < 100) {
		return 0, invalid("{Auto.Percentile} %q: want a percentile between 0 and 100, such as p99 or 95", s)
	}
	return p, nil
}

// ParseAutoWidth reads the widest interval AutoRuns accepts, relative to
// the percentile: 5%, or 0.05.
func ParseAutoWidth(s string) (float64, error) {
	w, scale := strings.TrimSpace(s), 1.0
	if strings.HasSuffix(w, "%") {
		w, scale = strings.TrimSuffix(w, "%"), 0.01
	}
	v, err := strconv.ParseFloat(w, 64)
	if err != nil || !(v*scale > 0 && v*scale < 10) {
		return 0, invalid("{Auto.Width} %q: want a positive width relative to the percentile, such as 5%% or 0.05", s)
	}
	return v * scale, nil
}
