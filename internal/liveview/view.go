package liveview

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/ortel-dev/ortel/internal/configerr"
)

const (
	// DefaultInterval is how often the view samples: 12.5 Hz, a margin
	// over the 10 Hz the page promises on a loaded machine.
	DefaultInterval = 80 * time.Millisecond
	// DefaultHistory is how much history the view keeps: 10 minutes, that
	// is 7500 snapshots at 12.5 Hz (a few MB at most).
	DefaultHistory = 10 * time.Minute
	// DefaultWindow is the sliding window of the run percentiles and rate.
	DefaultWindow = 10 * time.Second
	// maxClients bounds the stream's concurrent clients.
	maxClients = 16
)

// View samples a metric reader into a bounded history and fans each new
// snapshot out to the stream's clients.
type View struct {
	reader   *sdkmetric.ManualReader
	interval time.Duration
	window   time.Duration
	sla      *SLAStatus

	mu   sync.Mutex
	ring *ring
	seq  uint64

	phase       atomic.Pointer[phaseState]
	report      atomic.Pointer[[]byte]
	latest      atomic.Pointer[[]byte] // the last snapshot, as JSON
	subMu       sync.Mutex
	subscribers map[*client]struct{}
	skipped     atomic.Uint64

	timelines timelines

	profile                 ProfileTrigger // nil: POST /api/v1/profile answers 404
	profileRuns, profileMax int
}

// client is one stream reader: a buffer of one frame.
type client struct{ frames chan []byte }

type phaseState struct {
	Phase
	started   time.Time
	startRuns uint64
	runs      uint64        // expected runs of the phase, 0 when unknown
	length    time.Duration // expected length of the phase, 0 when unknown
}

// Config configures a View. Its zero value is valid: the defaults below,
// no SLA, no on-demand profiling.
type Config struct {
	// Interval is how often the view samples; 0: DefaultInterval (80ms,
	// 12.5 Hz).
	Interval time.Duration
	// Window is the sliding window of the run percentiles; 0:
	// DefaultWindow (10s).
	Window time.Duration
	// SLAThreshold, when above 0, makes every snapshot report the share
	// of the window's runs at or under it, and whether that share reaches
	// SLAPercentile (e.g. 99).
	SLAThreshold  time.Duration
	SLAPercentile float64
	// Profile, when set, serves POST /api/v1/profile?runs=K, which calls it
	// with K (ProfileRuns when the query has no runs, at most
	// ProfileMaxRuns): 202 when accepted, 429 when rate-limited, 409 when
	// it cannot profile now (no session open), 400 for a bad K. A request
	// carrying an Origin header of another host is refused (403): a web
	// page must not trigger it through the user's browser. Without it the
	// endpoint answers 404.
	Profile        ProfileTrigger
	ProfileRuns    int
	ProfileMaxRuns int
}

// Validate checks c: durations not negative, an SLA percentile above 0 and
// at most 100, and with Profile, 1 <= ProfileRuns <= ProfileMaxRuns. Its
// errors name the fields (configerr).
func (c Config) Validate() error {
	switch {
	case c.Interval < 0:
		return configerr.New("live view", "{Interval} %s: want 0 (the default) or more", c.Interval)
	case c.Window < 0:
		return configerr.New("live view", "{Window} %s: want 0 (the default) or more", c.Window)
	case c.SLAThreshold > 0 && (c.SLAPercentile <= 0 || c.SLAPercentile > 100):
		return configerr.New("live view", "{SLAPercentile} %g: want a percentile above 0 and at most 100", c.SLAPercentile)
	case c.Profile != nil && (c.ProfileRuns < 1 || c.ProfileRuns > c.ProfileMaxRuns):
		return configerr.New("live view", "{ProfileRuns} %d: want 1 to {ProfileMaxRuns} (%d)", c.ProfileRuns, c.ProfileMaxRuns)
	}
	return nil
}

// NewReader returns the reader to put on the MeterProvider that exports
// (telemetry.Config.Readers) and hand to New.
func NewReader() *sdkmetric.ManualReader { return sdkmetric.NewManualReader() }

// New returns a view of reader configured by cfg (see Config.Validate),
// keeping DefaultHistory of snapshots. Call Run to start sampling.
func New(reader *sdkmetric.ManualReader, cfg Config) *View {
	v := &View{reader: reader, interval: DefaultInterval, window: DefaultWindow, subscribers: map[*client]struct{}{}}
	if cfg.Interval > 0 {
		v.interval = cfg.Interval
	}
	if cfg.Window > 0 {
		v.window = cfg.Window
	}
	if cfg.SLAThreshold > 0 {
		v.sla = &SLAStatus{ThresholdSeconds: cfg.SLAThreshold.Seconds(), Percentile: cfg.SLAPercentile}
	}
	v.profile, v.profileRuns, v.profileMax = cfg.Profile, cfg.ProfileRuns, cfg.ProfileMaxRuns
	v.ring = newRing(int(DefaultHistory / v.interval))
	return v
}

// Run samples every interval until ctx ends or the MeterProvider shuts
// down; the last snapshot stays served after that.
func (v *View) Run(ctx context.Context) {
	t := time.NewTicker(v.interval)
	defer t.Stop()
	for {
		if err := v.Sample(ctx); err != nil {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Sample collects once, pushes the snapshot into the history and sends it
// to the stream's clients. It fails once the reader is shut down.
func (v *View) Sample(ctx context.Context) error {
	var rm metricdata.ResourceMetrics
	if err := v.reader.Collect(ctx, &rm); err != nil {
		if errors.Is(err, sdkmetric.ErrReaderShutdown) || errors.Is(err, sdkmetric.ErrReaderNotRegistered) || ctx.Err() != nil {
			return err
		}
		// A callback's failure still leaves the readings it made.
	}
	s := read(&rm, time.Time{})
	v.mu.Lock()
	s.at = time.Now() // under the lock: the history stays in time order
	v.seq++
	v.snapshot(&s)
	v.ring.push(s)
	v.mu.Unlock()
	b, err := json.Marshal(s.snap)
	if err != nil {
		return err
	}
	v.latest.Store(&b)
	v.broadcast(b)
	return nil
}

// snapshot fills s.snap from s and the history. v.mu is held.
func (v *View) snapshot(s *sample) {
	snap := Snapshot{Version: Version, Time: s.at.UTC(), Seq: v.seq, Hardware: s.hw, Operators: s.ops}
	if tl := v.Timeline(); tl != nil {
		run := tl.Run
		snap.TimelineRun = &run
	}
	if snap.Operators == nil {
		snap.Operators = []Operator{}
	}
	snap.Runs = Runs{Total: s.runs.count, Errors: s.errors, InFlight: s.inFlight, WindowSeconds: v.window.Seconds()}
	base, ok := v.ring.at(s.at.Add(-v.window))
	w := s.runs
	var span time.Duration // 0 until there is a sample to measure the window from
	if ok {
		w = delta(s.runs, base.runs)
		span = s.at.Sub(base.at)
	} else if oldest, ok := v.ring.oldest(); ok {
		w = delta(s.runs, oldest.runs)
		span = s.at.Sub(oldest.at)
	}
	snap.Runs.InWindow = w.count
	if span > 0 {
		snap.Runs.WindowSeconds = span.Seconds()
		snap.Runs.PerSecond = float64(w.count) / span.Seconds()
	}
	if w.count > 0 {
		mean := w.sum / float64(w.count)
		snap.Runs.MeanSeconds = &mean
		for _, p := range []struct {
			q   float64
			dst **float64
		}{{0.50, &snap.Runs.P50Seconds}, {0.95, &snap.Runs.P95Seconds}, {0.99, &snap.Runs.P99Seconds}} {
			if x, ok := quantile(w, p.q); ok {
				*p.dst = &x
			}
		}
	}
	if v.sla != nil {
		sla := *v.sla
		if c, ok := atOrUnder(w, sla.ThresholdSeconds); ok && w.count > 0 {
			met := c*100 >= sla.Percentile
			sla.Compliance, sla.Met = &c, &met
		}
		snap.SLA = &sla
	}
	if ps := v.phase.Load(); ps != nil {
		ph := ps.Phase
		var frac float64
		switch {
		case ps.runs > 0:
			frac = float64(s.runs.count-min(s.runs.count, ps.startRuns)) / float64(ps.runs)
		case ps.length > 0:
			frac = float64(s.at.Sub(ps.started)) / float64(ps.length)
		}
		if ps.runs > 0 || ps.length > 0 {
			frac = min(max(frac, 0), 1)
			ph.Progress = &frac
		}
		snap.Phase = &ph
	}
	s.snap = snap
}

// SetPhase says what the bench is doing: name (loading, warm-up, measured,
// SLA search, profiling, done) and its progress line. runs or length, when
// not zero, is how many runs or how long the phase is expected to take; the
// progress is measured against it.
func (v *View) SetPhase(name, detail string, runs int, length time.Duration) {
	ps := &phaseState{Phase: Phase{Name: name, Detail: detail}, started: time.Now(), length: length}
	if runs > 0 {
		ps.runs = uint64(runs)
	}
	v.mu.Lock()
	if last, ok := v.ring.newest(); ok {
		ps.startRuns = last.runs.count
	}
	v.mu.Unlock()
	v.phase.Store(ps)
}

// SetReport publishes the finished report (any JSON-marshalable value) at
// /api/v1/report.
func (v *View) SetReport(r any) error {
	b, err := json.Marshal(struct {
		Version int `json:"version"`
		Report  any `json:"report"`
	}{Version, r})
	if err != nil {
		return err
	}
	v.report.Store(&b)
	return nil
}

// History returns the snapshots of the last d, oldest first.
func (v *View) History(d time.Duration) []Snapshot {
	v.mu.Lock()
	defer v.mu.Unlock()
	var out []Snapshot
	newest, ok := v.ring.newest()
	if !ok {
		return []Snapshot{}
	}
	from := newest.at.Add(-d)
	v.ring.each(func(s *sample) {
		if !s.at.Before(from) {
			out = append(out, s.snap)
		}
	})
	if out == nil {
		out = []Snapshot{}
	}
	return out
}

// Skipped is how many frames were replaced before a slow client took them.
func (v *View) Skipped() uint64 { return v.skipped.Load() }

func (v *View) subscribe() (*client, bool) {
	v.subMu.Lock()
	defer v.subMu.Unlock()
	if len(v.subscribers) >= maxClients {
		return nil, false
	}
	c := &client{frames: make(chan []byte, 1)}
	v.subscribers[c] = struct{}{}
	return c, true
}

func (v *View) unsubscribe(c *client) {
	v.subMu.Lock()
	delete(v.subscribers, c)
	v.subMu.Unlock()
}

// broadcast hands b to every client without ever waiting: a client whose
// buffer still holds an older frame gets it replaced by b.
func (v *View) broadcast(b []byte) {
	v.subMu.Lock()
	defer v.subMu.Unlock()
	for c := range v.subscribers {
		select {
		case c.frames <- b:
			continue
		default:
		}
		select { // only broadcast sends, so after taking one out there is room
		case <-c.frames:
			v.skipped.Add(1)
		default:
		}
		select {
		case c.frames <- b:
		default:
		}
	}
}

func jsonMarshal(v any) ([]byte, error) { return json.Marshal(v) }

// Republish sends the newest sample again with the current phase, without
// collecting: after the MeterProvider shut down, the page still learns that
// the bench is done.
func (v *View) Republish() {
	v.mu.Lock()
	s, ok := v.ring.newest()
	if !ok {
		v.mu.Unlock()
		return
	}
	seq := s.snap.Seq
	v.snapshot(s)
	s.snap.Seq = seq
	b, err := json.Marshal(s.snap)
	v.mu.Unlock()
	if err != nil {
		return
	}
	v.latest.Store(&b)
	v.broadcast(b)
}
