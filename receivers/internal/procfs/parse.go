package procfs

import (
	"bytes"
	"iter"
	"math"
	"strconv"
)

// NextLine returns the first line of b, without its '\n', and the rest
// after it.
func NextLine(b []byte) (line, rest []byte) {
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		return b[:i], b[i+1:]
	}
	return b, nil
}

// Fields splits b around runs of spaces and tabs, appending the fields to
// dst[:0]. With a dst of enough capacity it does not allocate.
func Fields(b []byte, dst [][]byte) [][]byte {
	dst = dst[:0]
	i := 0
	for i < len(b) {
		for i < len(b) && (b[i] == ' ' || b[i] == '\t') {
			i++
		}
		start := i
		for i < len(b) && b[i] != ' ' && b[i] != '\t' {
			i++
		}
		if i > start {
			dst = append(dst, b[start:i])
		}
	}
	return dst
}

// KeyValue splits a "Key:   value" line (/proc/meminfo, /proc/PID/status,
// /proc/PID/io, /proc/cpuinfo) at its first ':' and trims the spaces and
// tabs around both parts.
func KeyValue(line []byte) (key, value []byte, ok bool) {
	i := bytes.IndexByte(line, ':')
	if i < 0 {
		return nil, nil, false
	}
	return trimBlanks(line[:i]), trimBlanks(line[i+1:]), true
}

// Pair is one "Key: value" line of a file: the line and its two parts.
type Pair struct {
	Line, Key, Value []byte
}

// Pairs yields the "Key: value" lines of b (those KeyValue splits), in
// order, skipping the others.
func Pairs(b []byte) iter.Seq[Pair] {
	return func(yield func(Pair) bool) {
		for len(b) > 0 {
			var p Pair
			p.Line, b = NextLine(b)
			var ok bool
			if p.Key, p.Value, ok = KeyValue(p.Line); ok && !yield(p) {
				return
			}
		}
	}
}

// trimBlanks trims spaces and tabs at both ends (cheaper than bytes.Trim,
// which builds its character set on every call).
func trimBlanks(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t') {
		b = b[:len(b)-1]
	}
	return b
}

// ParseUint parses a decimal unsigned integer. It reports false for an
// empty input, any byte that is not a digit, or a value above 2^64-1.
func ParseUint(b []byte) (uint64, bool) {
	if len(b) == 0 {
		return 0, false
	}
	var v uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if v > (1<<64-1-d)/10 {
			return 0, false
		}
		v = v*10 + d
	}
	return v, true
}

// ParseInt parses a decimal integer with an optional leading '-'.
func ParseInt(b []byte) (int64, bool) {
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	u, ok := ParseUint(b)
	if !ok {
		return 0, false
	}
	if neg {
		if u > 1<<63 {
			return 0, false
		}
		return -int64(u), true
	}
	if u > 1<<63-1 {
		return 0, false
	}
	return int64(u), true
}

var pow10 = [...]float64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15}

// ParseDecimal parses a non-negative decimal number such as "3.30" (load
// average) or "2000.000" (cpu MHz). The result is correctly rounded, as
// strconv.ParseFloat's.
func ParseDecimal(b []byte) (float64, bool) {
	if len(b) == 0 {
		return 0, false
	}
	var mant uint64
	digits, frac := 0, -1
	for i, c := range b {
		switch {
		case c == '.' && frac < 0 && i > 0:
			frac = 0
		case c >= '0' && c <= '9':
			if mant != 0 || c != '0' {
				digits++
			}
			mant = mant*10 + uint64(c-'0')
			if frac >= 0 {
				frac++
			}
		default:
			return 0, false
		}
		if digits > 15 || frac > 15 {
			// Too long for the exact path: rare, let strconv round it.
			f, err := strconv.ParseFloat(string(b), 64)
			return f, err == nil && f >= 0
		}
	}
	if frac == 0 { // "12." has no fraction digits
		return 0, false
	}
	if frac < 0 {
		frac = 0
	}
	// mant and 10^frac are both exact in a float64 (below 2^53), so one
	// division rounds correctly.
	return float64(mant) / pow10[frac], true
}

// CountList counts the members of a kernel list such as "0-3,8,10-11"
// (Cpus_allowed_list in /proc/PID/status): 7 there.
func CountList(b []byte) (int, bool) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return 0, false
	}
	n := 0
	for len(b) > 0 {
		part := b
		if i := bytes.IndexByte(b, ','); i >= 0 {
			part, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		if i := bytes.IndexByte(part, '-'); i >= 0 {
			lo, ok1 := ParseUint(part[:i])
			hi, ok2 := ParseUint(part[i+1:])
			if !ok1 || !ok2 || hi < lo {
				return 0, false
			}
			n += int(hi-lo) + 1
		} else {
			if _, ok := ParseUint(part); !ok {
				return 0, false
			}
			n++
		}
	}
	return n, true
}

// ClampInt64 converts a counter read as a uint64 for an Int64 instrument,
// holding it at the largest int64 rather than wrapping negative.
func ClampInt64(v uint64) int64 {
	if v > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(v)
}
