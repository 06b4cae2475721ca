package liveview

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/ortel-dev/ortel/instrument"
)

// TestProfileEndpoint covers POST /api/v1/profile without a trigger (404)
// and with one that accepts, rate-limits or cannot profile.
func TestProfileEndpoint(t *testing.T) {
	var got []int
	var answer error
	trigger := func(runs int) error { got = append(got, runs); return answer }
	tests := []struct {
		name   string
		opts   []Option
		query  string
		answer error
		want   int
		runs   []int
	}{
		{"off", nil, "", nil, http.StatusNotFound, nil},
		{"default runs", []Option{WithProfileTrigger(trigger, 7, 50)}, "", nil, http.StatusAccepted, []int{7}},
		{"asked runs", []Option{WithProfileTrigger(trigger, 7, 50)}, "?runs=50", nil, http.StatusAccepted, []int{50}},
		{"too many", []Option{WithProfileTrigger(trigger, 7, 50)}, "?runs=51", nil, http.StatusBadRequest, nil},
		{"rate-limited", []Option{WithProfileTrigger(trigger, 7, 50)}, "", fmt.Errorf("session: %w", instrument.ErrRateLimited), http.StatusTooManyRequests, []int{7}},
		{"not running", []Option{WithProfileTrigger(trigger, 7, 50)}, "", errors.New("no session"), http.StatusConflict, []int{7}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, answer = nil, tt.answer
			h := New(NewReader(), tt.opts...).Handler("")
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
