package configerr

import (
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"testing"
)

var flags = map[string]string{"Concurrency": "--concurrency", "Scenario": "--scenario", "Session.OptLevel": "--opt-level"}

func flagOf(f string) string { return flags[f] }

func TestRender(t *testing.T) {
	tests := []struct {
		name         string
		err          *Error
		own, renamed string
		fields       []string
	}{
		{"two fields", New("bench", "{Concurrency} %d needs {Scenario} concurrent, server or offline", 4),
			"Concurrency 4 needs Scenario concurrent, server or offline",
			"--concurrency 4 needs --scenario concurrent, server or offline",
			[]string{"Concurrency", "Scenario"}},
		{"a nested field", New("bench", "{Session.OptLevel} %q: want disable, basic, extended or all", "most"),
			`Session.OptLevel "most": want disable, basic, extended or all`,
			`--opt-level "most": want disable, basic, extended or all`,
			[]string{"Session.OptLevel"}},
		{"braces in a value stay", New("bench", "{Scenario} %q: unknown", "{Concurrency}"),
			`Scenario "{Concurrency}": unknown`, `--scenario "{Concurrency}": unknown`, []string{"Scenario"}},
		{"a field without a name keeps its own", New("bench", "{Seed} must not be 0"),
			"Seed must not be 0", "Seed must not be 0", []string{"Seed"}},
		{"a field named twice is listed once", New("bench", "{Scenario} or {Scenario}"),
			"Scenario or Scenario", "--scenario or --scenario", []string{"Scenario"}},
		{"a percent sign in the message", New("bench", "{Concurrency} at 100%% of %d CPUs", 2),
			"Concurrency at 100% of 2 CPUs", "--concurrency at 100% of 2 CPUs", []string{"Concurrency"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.err.Error(); got != tt.own {
				t.Errorf("Error() = %q, want %q", got, tt.own)
			}
			if got := tt.err.Render(flagOf); got != tt.renamed {
				t.Errorf("Render = %q, want %q", got, tt.renamed)
			}
			if got := tt.err.Fields(); !slices.Equal(got, tt.fields) {
				t.Errorf("Fields = %q, want %q", got, tt.fields)
			}
		})
	}
}

func TestWrap(t *testing.T) {
	err := New("bench", "{Concurrency} %d: %w", 3, fs.ErrInvalid)
	if !errors.Is(err, fs.ErrInvalid) {
		t.Errorf("%v does not unwrap to fs.ErrInvalid", err)
	}
	if got, want := err.Render(flagOf), "--concurrency 3: invalid argument"; got != want {
		t.Errorf("Render = %q, want %q", got, want)
	}
}

// TestRenderAll: an engine error wrapped by another, or joined with
// others, is renamed where it stands and the rest is kept.
func TestRenderAll(t *testing.T) {
	name := func(engine, f string) string {
		if engine != "bench" {
			return ""
		}
		return flags[f]
	}
	inner := New("bench", "{Session.OptLevel} %s: not supported", "all")
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"nil", nil, ""},
		{"not an engine error", errors.New("disk full"), "disk full"},
		{"wrapped", fmt.Errorf("create session: %w", inner), "create session: --opt-level all: not supported"},
		{"joined", errors.Join(errors.New("first"), New("bench", "{Scenario} x"), New("history", "{Scenario} y")),
			"first\n--scenario x\nScenario y"},
		{"an engine error wrapping another", New("bench", "{Concurrency} 2: %w", inner), "--concurrency 2: --opt-level all: not supported"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := RenderAll(tt.err, name); got != tt.want {
				t.Errorf("RenderAll = %q, want %q", got, tt.want)
			}
		})
	}
}
