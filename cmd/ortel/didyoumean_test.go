package main

import (
	"strings"
	"testing"
)

// TestDidYouMean: a mistyped command or flag names the right one, exit 2;
// a name close to nothing suggests nothing.
func TestDidYouMean(t *testing.T) {
	for _, tc := range []struct {
		name    string
		args    []string
		want    string
		wantNot string
	}{
		{"command", []string{"bnech", "model.onnx"}, `unknown command "bnech" (did you mean bench?)`, ""},
		{"help of a command", []string{"help", "comapre"}, `no command "comapre" (did you mean compare?)`, ""},
		{"far from every command", []string{"frobnicate"}, `unknown command "frobnicate"`, "did you mean"},
		{"flag", []string{"bench", "model.onnx", "--runz", "5"}, "unknown flag --runz (did you mean --runs?)", ""},
		{"flag of another command", []string{"doctor", "--formt", "json"}, "unknown flag --formt (did you mean --format?)", ""},
		{"flag missing a letter", []string{"bench", "model.onnx", "--no-telemtry"}, "(did you mean --no-telemetry?)", ""},
		{"flag far from every flag", []string{"compare", "--zzzzzzzz"}, "unknown flag --zzzzzzzz", "did you mean"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := ortel(t, tc.args...)
			if code != exitUsage {
				t.Errorf("exit %d, want %d", code, exitUsage)
			}
			if !strings.Contains(stderr, tc.want) {
				t.Errorf("stderr lacks %q:\n%s", tc.want, stderr)
			}
			if tc.wantNot != "" && strings.Contains(stderr, tc.wantNot) {
				t.Errorf("stderr has %q:\n%s", tc.wantNot, stderr)
			}
		})
	}
}

// A mistyped catalog name gets the closest one; a name close to none gets
// the list alone. Both are bad input: exit 1.
func TestModelNameDidYouMean(t *testing.T) {
	dir := t.TempDir()
	code, _, stderr := ortel(t, "bench", "--out", dir, "sileo-vad")
	if code != exitFailure || !strings.Contains(stderr, "did you mean silero-vad?") {
		t.Errorf("exit %d, want %d and a suggestion:\n%s", code, exitFailure, stderr)
	}
	code, _, stderr = ortel(t, "bench", "--out", dir, "zzzzzzzz")
	if code != exitFailure || strings.Contains(stderr, "did you mean") || !strings.Contains(stderr, "known: ") {
		t.Errorf("exit %d, want %d, the known names and no suggestion:\n%s", code, exitFailure, stderr)
	}
}

func TestEditDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"bench", "bench", 0}, {"bnech", "bench", 2}, {"runz", "runs", 1},
		{"", "abc", 3}, {"kitten", "sitting", 3}, {"héllo", "hello", 1},
	} {
		t.Run(tc.a+"/"+tc.b, func(t *testing.T) {
			if got := editDistance(tc.a, tc.b); got != tc.want {
				t.Errorf("editDistance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
			}
		})
	}
}
