package liveview

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"github.com/ortel-dev/ortel/instrument"
)

// ProfileTrigger profiles the next runs runs of the command's sessions. It
// returns an error wrapping instrument.ErrRateLimited when a request came
// too soon after the last one, and another error when it cannot profile
// now (no session open yet).
type ProfileTrigger func(runs int) error

// profileHandler serves POST /api/v1/profile.
func (v *View) profileHandler(w http.ResponseWriter, r *http.Request) {
	if v.profile == nil {
		jsonError(w, http.StatusNotFound, "on-demand profiling is off for this command")
		return
	}
	if o := r.Header.Get("Origin"); o != "" {
		if u, err := url.Parse(o); err != nil || u.Host != r.Host {
			jsonError(w, http.StatusForbidden, "on-demand profiling is not accepted from another origin")
			return
		}
	}
	runs := v.profileRuns
	if q := r.URL.Query().Get("runs"); q != "" {
		n, err := strconv.Atoi(q)
		if err != nil || n < 1 || n > v.profileMax {
			jsonError(w, http.StatusBadRequest, fmt.Sprintf("runs %q: want a whole number from 1 to %d", q, v.profileMax))
			return
		}
		runs = n
	}
	switch err := v.profile(runs); {
	case err == nil:
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusAccepted)
		fmt.Fprintf(w, "{\"runs\":%d}\n", runs)
	case errors.Is(err, instrument.ErrRateLimited):
		jsonError(w, http.StatusTooManyRequests, "rate-limited: the last on-demand profiling was accepted less than "+instrument.DefaultTriggerInterval.String()+" ago")
	default:
		jsonError(w, http.StatusConflict, err.Error())
	}
}
