package liveview

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/ortel-dev/ortel/instrument"
	"github.com/ortel-dev/ortel/test/testenv"
)

// TestProfileEndpoint covers POST /api/v1/profile without a trigger (404)
// and with one that accepts, rate-limits or cannot profile.
func TestProfileEndpoint(t *testing.T) {
	var got []int
	var answer error
	trigger := func(runs int) error { got = append(got, runs); return answer }
	tests := []struct {
		name   string
		cfg    Config
		query  string
		answer error
		want   int
		runs   []int
	}{
		{"off", Config{}, "", nil, http.StatusNotFound, nil},
		{"default runs", Config{Profile: trigger, ProfileRuns: 7, ProfileMaxRuns: 50}, "", nil, http.StatusAccepted, []int{7}},
		{"asked runs", Config{Profile: trigger, ProfileRuns: 7, ProfileMaxRuns: 50}, "?runs=50", nil, http.StatusAccepted, []int{50}},
		{"too many", Config{Profile: trigger, ProfileRuns: 7, ProfileMaxRuns: 50}, "?runs=51", nil, http.StatusBadRequest, nil},
		{"rate-limited", Config{Profile: trigger, ProfileRuns: 7, ProfileMaxRuns: 50}, "", fmt.Errorf("session: %w", instrument.ErrRateLimited), http.StatusTooManyRequests, []int{7}},
		{"not running", Config{Profile: trigger, ProfileRuns: 7, ProfileMaxRuns: 50}, "", errors.New("no session"), http.StatusConflict, []int{7}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, answer = nil, tt.answer
			h := New(NewReader(), tt.cfg).Handler("")
			rec := httptest.NewRecorder()
			req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/api/v1/profile"+tt.query, nil)
			h.ServeHTTP(rec, req)
			if rec.Code != tt.want {
				t.Errorf("status %d, want %d (%s)", rec.Code, tt.want, rec.Body)
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.runs) {
				t.Errorf("trigger called with %v, want %v", got, tt.runs)
			}
		})
	}
}

// TestConfigValidate: the zero Config is valid; negative durations, an SLA
// percentile outside (0, 100] and default runs outside 1..ProfileMaxRuns
// are not, each named by its field. Planted: without the ProfileRuns check
// a default of 0 runs passed.
func TestConfigValidate(t *testing.T) {
	trigger := func(int) error { return nil }
	for _, tc := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"zero value", Config{}, ""},
		{"all set", Config{Interval: time.Second, Window: time.Minute, SLAThreshold: time.Millisecond, SLAPercentile: 99,
			Profile: trigger, ProfileRuns: 5, ProfileMaxRuns: 10}, ""},
		{"negative interval", Config{Interval: -time.Second}, "Interval"},
		{"negative window", Config{Window: -time.Second}, "Window"},
		{"percentile", Config{SLAThreshold: time.Millisecond, SLAPercentile: 101}, "SLAPercentile 101"},
		{"no runs", Config{Profile: trigger, ProfileMaxRuns: 10}, "ProfileRuns 0"},
		{"too many runs", Config{Profile: trigger, ProfileRuns: 11, ProfileMaxRuns: 10}, "ProfileRuns 11"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			testenv.ErrContains(t, "Validate()", tc.cfg.Validate(), tc.want)
		})
	}
}
