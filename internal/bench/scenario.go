package bench

import (
	"strings"
)

// Scenario is a load pattern of the measured phase.
type Scenario string

// The load scenarios.
const (
	// SingleStream issues one request at a time, the next when the previous
	// one ends (a closed loop). Latency is the run's own duration.
	SingleStream Scenario = "single-stream"
	// Concurrent runs Concurrency workers, each in a closed loop, on one
	// shared session or one session per worker.
	Concurrent Scenario = "concurrent"
	// Server issues requests at Poisson-distributed arrival times at a
	// target rate (an open loop) into a queue served by Concurrency workers.
	// Latency runs from a request's scheduled arrival, so queueing counts:
	// a stall delays every request due during it, as it would delay real
	// users (no coordinated omission).
	Server Scenario = "server"
	// Offline makes every request available at once and drains them with
	// Concurrency workers: maximum throughput. Latency is the run's own
	// duration; the figure of merit is requests per second of wall time.
	Offline Scenario = "offline"
)

// Scenarios lists the scenarios in the order the usage text gives them.
var Scenarios = []Scenario{SingleStream, Concurrent, Server, Offline}

// ParseScenario reads a scenario's name (any case).
func ParseScenario(s string) (Scenario, error) {
	for _, sc := range Scenarios {
		if strings.EqualFold(strings.TrimSpace(s), string(sc)) {
			return sc, nil
		}
	}
	names := make([]string, len(Scenarios))
	for i, sc := range Scenarios {
		names[i] = string(sc)
	}
	return "", invalid("{Scenario} %q: want one of %s", s, strings.Join(names, ", "))
}

// latencyFrom says where a request's latency starts in the scenario.
func (s Scenario) latencyFrom() string {
	switch s {
	case Server:
		return "scheduled_arrival"
	case Offline:
		return "run_start"
	}
	return "issue"
}

// queued reports whether the scenario has a request queue.
func (s Scenario) queued() bool { return s == Server || s == Offline }

// SessionMode says how concurrent workers share sessions.
type SessionMode string

// The session modes.
const (
	// SharedSession: every worker runs on one session (ONNX Runtime sessions
	// are safe for concurrent runs).
	SharedSession SessionMode = "shared"
	// PerWorkerSessions: each worker has its own session, with its own
	// thread pools.
	PerWorkerSessions SessionMode = "per-worker"
)

// ParseSessionMode parses a --sessions value.
func ParseSessionMode(s string) (SessionMode, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case string(SharedSession):
		return SharedSession, nil
	case string(PerWorkerSessions):
		return PerWorkerSessions, nil
	}
	return "", invalid("{Sessions} %q: want shared or per-worker", s)
}
