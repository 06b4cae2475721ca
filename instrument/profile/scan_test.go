package profile

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"strings"
	"testing"
	"testing/iotest"
)

func TestPlain8MatchesTable(t *testing.T) {
	for c := 0; c < 256; c++ {
		for pos := range 8 {
			b := []byte("abcdefgh")
			b[pos] = byte(c)
			want := true
			for _, ch := range b {
				want = want && strPlain[ch]
			}
			if got := plain8(binary.LittleEndian.Uint64(b)); got != want {
				t.Fatalf("plain8 with byte %#x at %d = %v, want %v", c, pos, got, want)
			}
		}
	}
}

func TestClassify(t *testing.T) {
	tests := []struct {
		in   string
		want int
	}{
		{"null", scalarNull},
		{"true", scalarBool},
		{"false", scalarBool},
		{"0", scalarInt},
		{"-12", scalarInt},
		{"1.5", scalarFloat},
		{"-1e3", scalarFloat},
		{"2E+2", scalarFloat},
		{"", scalarBad},
		{"-", scalarBad},
		{"nul", scalarBad},
		{"hello", scalarBad},
		{"1abc", scalarBad},
		{"+1", scalarBad},
		{".5", scalarBad},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if got := classify([]byte(tt.in)); got != tt.want {
				t.Errorf("classify(%q) = %d, want %d", tt.in, got, tt.want)
			}
		})
	}
}

func TestParseNumber(t *testing.T) {
	tests := []struct {
		in     string
		want   int64
		wantOK bool
	}{
		{"0", 0, true},
		{"6553600", 6553600, true},
		{"-42", -42, true},
		{"123456789012345678", 123456789012345678, true},
		{"9223372036854775807", math.MaxInt64, true},  // 19 digits: float path, clamped
		{"99999999999999999999", math.MaxInt64, true}, // out of range: clamped
		{"-99999999999999999999", math.MinInt64, true},
		{"1.4", 1, true},
		{"1.5", 2, true},
		{"-1.5", -2, true},
		{"1e3", 1000, true},
		{"1e400", math.MaxInt64, true},
		{"", 0, false},
		{"-", 0, false},
		{"abc", 0, false},
		{"1.2.3", 0, false},
		{"NaN", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, ok := parseNumber([]byte(tt.in))
			if ok != tt.wantOK || ok && got != tt.want {
				t.Errorf("parseNumber(%q) = %d, %v; want %d, %v", tt.in, got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

func TestQuoteByte(t *testing.T) {
	for in, want := range map[byte]string{'x': "'x'", '\'': `'\''`, 0x01: "byte 0x01", 0xff: "byte 0xff", ' ': "' '"} {
		if got := quoteByte(in); got != want {
			t.Errorf("quoteByte(%#x) = %q, want %q", in, got, want)
		}
	}
}

// TestReaderLongTokens checks strings longer than the read buffer, which
// make it grow, and the cap on a single token.
func TestReaderLongTokens(t *testing.T) {
	long := strings.Repeat("n", 3*defaultBufSize) + "_kernel_time"
	in := `[{"cat":"Node","name":"` + long + `","args":{"skipped":"` + long + `"}}]`
	for name, src := range map[string]func() *Reader{
		"whole":   func() *Reader { return NewReader(strings.NewReader(in)) },
		"onebyte": func() *Reader { return NewReader(iotest.OneByteReader(strings.NewReader(in))) },
	} {
		t.Run(name, func(t *testing.T) {
			r := src()
			ev, err := r.Next()
			if err != nil {
				t.Fatal(err)
			}
			if ev.Name != long {
				t.Errorf("Name has %d bytes, want %d", len(ev.Name), len(long))
			}
			if _, err := r.Next(); err != io.EOF {
				t.Errorf("second Next: %v, want io.EOF", err)
			}
		})
	}

	t.Run("over the cap", func(t *testing.T) {
		huge := `[{"name":"` + strings.Repeat("x", maxTokenSize+10) + `"}]`
		r := NewReader(strings.NewReader(huge))
		_, err := r.Next()
		var se *SyntaxError
		if !errors.As(err, &se) || !strings.Contains(se.Msg, "longer than") {
			t.Fatalf("err = %v, want a *SyntaxError about a value too long", err)
		}
		if len(r.buf) > maxTokenSize {
			t.Errorf("buffer grew to %d bytes, over the %d cap", len(r.buf), maxTokenSize)
		}
	})

	t.Run("skipped string over the cap needs no memory", func(t *testing.T) {
		huge := `[{"args":{"x":"` + strings.Repeat("x", maxTokenSize+10) + `"},"name":"a"}]`
		r := NewReader(bytes.NewReader([]byte(huge)))
		ev, err := r.Next()
		if err != nil {
			t.Fatal(err)
		}
		if ev.Name != "a" {
			t.Errorf("Name = %q", ev.Name)
		}
		if len(r.buf) != defaultBufSize {
			t.Errorf("buffer grew to %d bytes for a skipped string", len(r.buf))
		}
	})
}
