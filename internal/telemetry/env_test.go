package telemetry

import (
	"strings"
	"testing"
	"time"
)

func parseDurationForTest(s string) (time.Duration, error) { return time.ParseDuration(s) }

func TestEnvParsers(t *testing.T) {
	tests := []struct {
		name, value string
		parse       func(e *env) (any, bool)
		want        any
		wantOK      bool
		warns       bool
	}{
		{"millis", "250", func(e *env) (any, bool) { return e.millis("V") }, 250 * time.Millisecond, true, false},
		{"millis padded", " 250 ", func(e *env) (any, bool) { return e.millis("V") }, 250 * time.Millisecond, true, false},
		{"millis unset", "", func(e *env) (any, bool) { return e.millis("V") }, time.Duration(0), false, false},
		{"millis zero", "0", func(e *env) (any, bool) { return e.millis("V") }, time.Duration(0), false, true},
		{"millis float", "2.5", func(e *env) (any, bool) { return e.millis("V") }, time.Duration(0), false, true},
		{"millis huge", "999999999999", func(e *env) (any, bool) { return e.millis("V") }, time.Duration(0), false, true},
		{"integer", "64", func(e *env) (any, bool) { return e.integer("V", 1) }, 64, true, false},
		{"integer below minimum", "0", func(e *env) (any, bool) { return e.integer("V", 1) }, 0, false, true},
		{"integer huge", "99999999999", func(e *env) (any, bool) { return e.integer("V", 1) }, 0, false, true},
		{"bool true", "True", func(e *env) (any, bool) { return e.boolean("V") }, true, true, false},
		{"bool false", "FALSE", func(e *env) (any, bool) { return e.boolean("V") }, false, true, false},
		{"bool 1", "1", func(e *env) (any, bool) { return e.boolean("V") }, false, false, true},
		{"bool unset", "", func(e *env) (any, bool) { return e.boolean("V") }, false, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := &env{getenv: mapEnv(map[string]string{"V": tt.value})}
			got, ok := tt.parse(e)
			if got != tt.want || ok != tt.wantOK {
				t.Errorf("got (%v, %v), want (%v, %v)", got, ok, tt.want, tt.wantOK)
			}
			if warned := len(e.warnings) > 0; warned != tt.warns {
				t.Errorf("warnings %q, want warning: %v", e.warnings, tt.warns)
			}
			for _, w := range e.warnings {
				if !strings.HasPrefix(w, "V=") {
					t.Errorf("warning %q does not start with the variable", w)
				}
			}
		})
	}
}

func TestSafeQuote(t *testing.T) {
	if got := safeQuote("http://u:pw@host"); strings.Contains(got, "pw") {
		t.Errorf("safeQuote shows a credential: %s", got)
	}
	if got := safeQuote("abc"); got != `"abc"` {
		t.Errorf("safeQuote(abc) = %s", got)
	}
	if got := safeQuote(strings.Repeat("x", 500)); len(got) > 210 {
		t.Errorf("safeQuote did not shorten a long value: %d bytes", len(got))
	}
}
