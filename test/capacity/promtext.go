package main

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// Exposition is what a Prometheus text-format scrape holds, summed: for
// each metric name, the sum of its samples over every label set, and the
// number of samples (series) in all.
type Exposition struct {
	Sums   map[string]float64
	Series int
}

// ParseExposition reads the Prometheus text format (and OpenMetrics' text
// form, which differs in what the harness reads only by # lines): each
// sample line is NAME[{LABELS}] VALUE [TIMESTAMP]. Comments and blank
// lines are skipped. A line that is none of these is an error naming its
// number.
func ParseExposition(r io.Reader) (Exposition, error) {
	e := Exposition{Sums: map[string]float64{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		name, rest, err := splitSample(line)
		if err != nil {
			return e, fmt.Errorf("exposition line %d: %w", n, err)
		}
		f := strings.Fields(rest)
		if len(f) < 1 || len(f) > 2 && !strings.HasPrefix(f[2], "#") {
			return e, fmt.Errorf("exposition line %d: want NAME VALUE [TIMESTAMP], got %q", n, line)
		}
		v, err := strconv.ParseFloat(f[0], 64)
		if err != nil {
			return e, fmt.Errorf("exposition line %d: value %q: %w", n, f[0], err)
		}
		e.Series++
		if !math.IsNaN(v) {
			e.Sums[name] += v
		}
	}
	if err := sc.Err(); err != nil {
		return e, fmt.Errorf("exposition: %w", err)
	}
	return e, nil
}

// splitSample splits a sample line into the metric name and what follows
// its labels, honouring quoted label values (which may hold "}" or "\"").
func splitSample(line string) (name, rest string, err error) {
	i := strings.IndexAny(line, "{ \t")
	if i <= 0 {
		return "", "", fmt.Errorf("no metric name and value in %q", line)
	}
	name = line[:i]
	if line[i] != '{' {
		return name, line[i:], nil
	}
	inQuote, escaped := false, false
	for j := i + 1; j < len(line); j++ {
		c := line[j]
		switch {
		case escaped:
			escaped = false
		case c == '\\' && inQuote:
			escaped = true
		case c == '"':
			inQuote = !inQuote
		case c == '}' && !inQuote:
			return name, line[j+1:], nil
		}
	}
	return "", "", fmt.Errorf("unterminated labels in %q", line)
}
