package procfs

import (
	"math"
	"slices"
	"strconv"
	"testing"
)

func TestNextLine(t *testing.T) {
	b := []byte("a b\n\nc")
	var lines []string
	for len(b) > 0 {
		var line []byte
		line, b = NextLine(b)
		lines = append(lines, string(line))
	}
	if want := []string{"a b", "", "c"}; !slices.Equal(lines, want) {
		t.Errorf("lines = %q, want %q", lines, want)
	}
}

func TestFields(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"   ", nil},
		{"cpu  1 2\t3", []string{"cpu", "1", "2", "3"}},
		{"\t x ", []string{"x"}},
	}
	dst := make([][]byte, 0, 8)
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got := Fields([]byte(tt.in), dst)
			var s []string
			for _, f := range got {
				s = append(s, string(f))
			}
			if !slices.Equal(s, tt.want) {
				t.Errorf("Fields(%q) = %q, want %q", tt.in, s, tt.want)
			}
		})
	}
	line := []byte("cpu0 66550 0 8456 47580 96 0 114 614 0 0")
	if n := testing.AllocsPerRun(100, func() { dst = Fields(line, dst) }); n != 0 {
		t.Errorf("Fields allocates %v times with a big enough dst", n)
	}
}

func TestKeyValue(t *testing.T) {
	tests := []struct{ in, key, val string }{
		{"MemTotal:       24682416 kB", "MemTotal", "24682416 kB"},
		{"cpu MHz\t\t: 2000.000", "cpu MHz", "2000.000"},
		{"read_bytes: 0", "read_bytes", "0"},
		{"Name:\t", "Name", ""},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			k, v, ok := KeyValue([]byte(tt.in))
			if !ok || string(k) != tt.key || string(v) != tt.val {
				t.Errorf("KeyValue = %q, %q, %v", k, v, ok)
			}
		})
	}
	if _, _, ok := KeyValue([]byte("no colon")); ok {
		t.Error("a line without ':' split")
	}
}

func TestParseUintInt(t *testing.T) {
	tests := []struct {
		in  string
		u   uint64
		uok bool
		i   int64
		iok bool
	}{
		{"0", 0, true, 0, true},
		{"123", 123, true, 123, true},
		{"18446744073709551615", 1<<64 - 1, true, 0, false},
		{"18446744073709551616", 0, false, 0, false},
		{"9223372036854775807", 1<<63 - 1, true, 1<<63 - 1, true},
		{"-9223372036854775808", 0, false, -1 << 63, true},
		{"-9223372036854775809", 0, false, 0, false},
		{"-5", 0, false, -5, true},
		{"", 0, false, 0, false},
		{"-", 0, false, 0, false},
		{"12a", 0, false, 0, false},
		{" 1", 0, false, 0, false},
		{"1.5", 0, false, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if u, ok := ParseUint([]byte(tt.in)); u != tt.u || ok != tt.uok {
				t.Errorf("ParseUint = %d, %v; want %d, %v", u, ok, tt.u, tt.uok)
			}
			if i, ok := ParseInt([]byte(tt.in)); i != tt.i || ok != tt.iok {
				t.Errorf("ParseInt = %d, %v; want %d, %v", i, ok, tt.i, tt.iok)
			}
		})
	}
}

func TestParseDecimal(t *testing.T) {
	good := []string{"0", "0.00", "3.30", "7.57", "2000.000", "1234567.891", "0.1", "99999999999999.9", "123456789012345678.5", "0.1234567890123456789"}
	for _, in := range good {
		t.Run(in, func(t *testing.T) {
			want, _ := strconv.ParseFloat(in, 64)
			got, ok := ParseDecimal([]byte(in))
			if !ok || got != want {
				t.Errorf("ParseDecimal(%q) = %v, %v; want %v (strconv)", in, got, ok, want)
			}
		})
	}
	for _, in := range []string{"", ".", ".5", "5.", "1.2.3", "-1", "1e3", "x", "1,5", "NaN"} {
		t.Run("bad "+in, func(t *testing.T) {
			if v, ok := ParseDecimal([]byte(in)); ok {
				t.Errorf("ParseDecimal(%q) = %v, true; want false", in, v)
			}
		})
	}
}

func TestCountList(t *testing.T) {
	tests := []struct {
		in   string
		want int
		ok   bool
	}{
		{"0", 1, true},
		{"0-1", 2, true},
		{"0-3,8,10-11\n", 7, true},
		{"", 0, false},
		{"3-1", 0, false},
		{"a", 0, false},
		{"0-", 0, false},
		{"0,,1", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, ok := CountList([]byte(tt.in))
			if got != tt.want || ok != tt.ok {
				t.Errorf("CountList(%q) = %d, %v; want %d, %v", tt.in, got, ok, tt.want, tt.ok)
			}
		})
	}
}

func FuzzParseDecimal(f *testing.F) {
	for _, s := range []string{"3.30", "2000.000", "0", "1.", ".1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := ParseDecimal([]byte(s))
		if !ok {
			return
		}
		want, err := strconv.ParseFloat(s, 64)
		if err != nil || got != want {
			t.Errorf("ParseDecimal(%q) = %v; strconv says %v, %v", s, got, want, err)
		}
	})
}

func TestClampInt64(t *testing.T) {
	for _, tt := range []struct {
		in   uint64
		want int64
	}{{0, 0}, {42, 42}, {math.MaxInt64, math.MaxInt64}, {math.MaxInt64 + 1, math.MaxInt64}, {math.MaxUint64, math.MaxInt64}} {
		if got := ClampInt64(tt.in); got != tt.want {
			t.Errorf("ClampInt64(%d) = %d, want %d", tt.in, got, tt.want)
		}
	}
}

// TestPairs: the "Key: value" lines in order, each with its line, lines
// without ':' skipped, a last line without '\n' included, and the loop's
// break honoured (the iterator stops). Planted: yielding the lines without
// ':' as empty pairs gave 4 pairs instead of 3.
func TestPairs(t *testing.T) {
	b := []byte("MemTotal:  16 kB\nno colon here\n\tName:\tortel \nlast: 1")
	var got []string
	for p := range Pairs(b) {
		got = append(got, string(p.Key)+"="+string(p.Value)+" ("+string(p.Line)+")")
	}
	want := []string{"MemTotal=16 kB (MemTotal:  16 kB)", "Name=ortel (\tName:\tortel )", "last=1 (last: 1)"}
	if !slices.Equal(got, want) {
		t.Errorf("Pairs = %q, want %q", got, want)
	}
	n := 0
	for range Pairs(b) {
		n++
		break
	}
	if n != 1 {
		t.Errorf("a break after the first pair ran %d iterations", n)
	}
}
