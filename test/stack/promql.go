package stack

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Query is what a PromQL expression reads: the metric names it selects and
// the label names it matches on or groups by.
type Query struct {
	Metrics []string // sorted, distinct
	Labels  []string // sorted, distinct; __name__ not included
}

// MetricNames returns the metric names a PromQL expression selects.
func MetricNames(expr string) ([]string, error) {
	q, err := ParseQuery(expr)
	return q.Metrics, err
}

// ParseQuery extracts the metric and label names of a PromQL expression, as
// written in Grafana dashboards: Grafana variables ($model, ${model},
// $__rate_interval) may appear wherever PromQL allows a value or duration.
//
// It is a lexer, not a full parser: it knows PromQL's keywords, functions
// (an identifier followed by "("), aggregations, label matchers in braces,
// grouping lists (by, without, on, ignoring, group_left, group_right),
// strings, numbers and durations. That is enough to find every name an
// expression reads; it does not check the expression is valid.
func ParseQuery(expr string) (Query, error) {
	l := lexer{s: expr}
	metrics := map[string]bool{}
	labels := map[string]bool{}
	for {
		l.skipSpace()
		if l.eof() {
			break
		}
		c := l.s[l.i]
		switch {
		case c == '"' || c == '\'' || c == '`':
			if _, err := l.str(); err != nil {
				return Query{}, err
			}
		case c == '[':
			if err := l.skipTo(']'); err != nil {
				return Query{}, err
			}
		case c == '$':
			l.variable()
		case isDigit(c) || c == '.' && l.i+1 < len(l.s) && isDigit(l.s[l.i+1]):
			l.number()
		case c == '{':
			if err := l.matchers(metrics, labels); err != nil {
				return Query{}, err
			}
		case isIdentStart(c):
			id := l.ident()
			lower := strings.ToLower(id)
			l.skipSpace()
			next := l.peek()
			switch {
			case groupingKeywords[lower]:
				if next == '(' {
					if err := l.labelList(labels); err != nil {
						return Query{}, err
					}
				}
			case keywords[lower] || aggregations[lower]:
				// not a name
			case next == '(':
				// a function call
			default:
				metrics[id] = true
			}
		default:
			l.i++
		}
	}
	return Query{Metrics: sortedKeys(metrics), Labels: sortedKeys(labels)}, nil
}

var groupingKeywords = map[string]bool{
	"by": true, "without": true, "on": true, "ignoring": true, "group_left": true, "group_right": true,
}

var keywords = map[string]bool{
	"and": true, "or": true, "unless": true, "bool": true, "offset": true, "atan2": true,
	"inf": true, "nan": true, "start": true, "end": true,
}

var aggregations = map[string]bool{
	"sum": true, "avg": true, "min": true, "max": true, "count": true, "group": true,
	"stddev": true, "stdvar": true, "topk": true, "bottomk": true, "quantile": true,
	"count_values": true, "limitk": true, "limit_ratio": true,
}

type lexer struct {
	s string
	i int
}

func (l *lexer) eof() bool { return l.i >= len(l.s) }

func (l *lexer) peek() byte {
	if l.eof() {
		return 0
	}
	return l.s[l.i]
}

func (l *lexer) skipSpace() {
	for !l.eof() {
		switch l.s[l.i] {
		case ' ', '\t', '\n', '\r':
			l.i++
		case '#': // comment to the end of the line
			for !l.eof() && l.s[l.i] != '\n' {
				l.i++
			}
		default:
			return
		}
	}
}

func (l *lexer) errorf(format string, args ...any) error {
	return fmt.Errorf("query %q at byte %d: %s", l.s, l.i, fmt.Sprintf(format, args...))
}

// str consumes a quoted string and returns its value (escapes kept as written).
func (l *lexer) str() (string, error) {
	q := l.s[l.i]
	start := l.i
	l.i++
	var b strings.Builder
	for !l.eof() {
		c := l.s[l.i]
		switch {
		case c == '\\' && q != '`' && l.i+1 < len(l.s):
			b.WriteByte(l.s[l.i+1])
			l.i += 2
		case c == q:
			l.i++
			return b.String(), nil
		default:
			b.WriteByte(c)
			l.i++
		}
	}
	l.i = start
	return "", l.errorf("unterminated string")
}

func (l *lexer) skipTo(end byte) error {
	start := l.i
	for !l.eof() {
		if l.s[l.i] == end {
			l.i++
			return nil
		}
		l.i++
	}
	l.i = start
	return l.errorf("missing %q", end)
}

// variable consumes a Grafana variable: $name, ${name} or ${name:format}.
func (l *lexer) variable() {
	l.i++
	if l.peek() == '{' {
		_ = l.skipTo('}')
		return
	}
	for !l.eof() && isIdentChar(l.s[l.i]) {
		l.i++
	}
}

// number consumes a number or a duration such as 1.5e-3, 0x1f or 5m30s.
func (l *lexer) number() {
	for !l.eof() {
		c := l.s[l.i]
		switch {
		case isIdentChar(c) || c == '.':
			l.i++
		case (c == '+' || c == '-') && (l.s[l.i-1] == 'e' || l.s[l.i-1] == 'E'):
			l.i++
		default:
			return
		}
	}
}

func (l *lexer) ident() string {
	start := l.i
	for !l.eof() && isIdentChar(l.s[l.i]) {
		l.i++
	}
	return l.s[start:l.i]
}

// matchers consumes {label op "value", ...}.
func (l *lexer) matchers(metrics, labels map[string]bool) error {
	l.i++ // {
	for {
		l.skipSpace()
		switch c := l.peek(); {
		case c == 0:
			return l.errorf("missing '}'")
		case c == '}':
			l.i++
			return nil
		case c == ',':
			l.i++
		case c == '"':
			// A quoted label name (UTF-8 names); treat it like an identifier.
			name, err := l.str()
			if err != nil {
				return err
			}
			if err := l.matcher(name, metrics, labels); err != nil {
				return err
			}
		case isIdentStart(c):
			if err := l.matcher(l.ident(), metrics, labels); err != nil {
				return err
			}
		default:
			return l.errorf("unexpected %q in label matchers", c)
		}
	}
}

func (l *lexer) matcher(name string, metrics, labels map[string]bool) error {
	l.skipSpace()
	op := ""
	for !l.eof() && strings.IndexByte("=!~", l.s[l.i]) >= 0 {
		op += string(l.s[l.i])
		l.i++
	}
	if op == "" {
		// A bare quoted name inside braces selects a metric: {"a.b"}.
		metrics[name] = true
		return nil
	}
	l.skipSpace()
	var value string
	switch c := l.peek(); {
	case c == '"' || c == '\'' || c == '`':
		v, err := l.str()
		if err != nil {
			return err
		}
		value = v
	case c == '$':
		l.variable()
	default:
		return l.errorf("label %q: expected a quoted value after %q", name, op)
	}
	if name == "__name__" {
		if op == "=" && !strings.Contains(value, "$") {
			metrics[value] = true
		}
		return nil
	}
	labels[name] = true
	return nil
}

// labelList consumes (a, b, c) after by/without/on/ignoring/group_*.
func (l *lexer) labelList(labels map[string]bool) error {
	l.i++ // (
	for {
		l.skipSpace()
		switch c := l.peek(); {
		case c == 0:
			return l.errorf("missing ')' after a label list")
		case c == ')':
			l.i++
			return nil
		case c == ',':
			l.i++
		case c == '"':
			name, err := l.str()
			if err != nil {
				return err
			}
			labels[name] = true
		case isIdentStart(c):
			labels[l.ident()] = true
		default:
			return l.errorf("unexpected %q in a label list", c)
		}
	}
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isIdentStart(c byte) bool {
	return c == '_' || c == ':' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func isIdentChar(c byte) bool { return isIdentStart(c) || isDigit(c) }

func sortedKeys(m map[string]bool) []string {
	out := slices.Sorted(maps.Keys(m))
	return out
}
