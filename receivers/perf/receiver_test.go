package perf

import (
	"context"
	"errors"
	"sync"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"

	"github.com/ortel-dev/ortel/receivers/internal/procfs"
	"github.com/ortel-dev/ortel/receivers/internal/procfs/procfstest"
	"github.com/ortel-dev/ortel/semconv"
)

// script is a fake counter that returns its readings one after another
// (the last one again when they run out), or err.
type script struct {
	mu       sync.Mutex
	readings []reading
	err      error
	closed   int
}

func (s *script) read() (reading, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return reading{}, s.err
	}
	r := s.readings[0]
	if len(s.readings) > 1 {
		s.readings = s.readings[1:]
	}
	return r, nil
}

func (s *script) close() error { s.closed++; return nil }

// TestCollectionMath drives the callback with scripted counters: two
// threads, multiplexed hardware counters, an estimate that dips, and a
// read failure.
func TestCollectionMath(t *testing.T) {
	on := func(v, en, run uint64) reading { return reading{value: v, enabled: en, running: run} }
	// Thread 1 counts all the time; thread 2's hardware events are on the
	// PMU half the time, so their values double when scaled.
	instr := []counter{
		&script{readings: []reading{on(1000, 10, 10), on(5000, 20, 20), on(5000, 20, 20)}},
		&script{readings: []reading{on(500, 10, 5), on(1000, 20, 10), on(1000, 20, 10)}},
	}
	cycles := []counter{
		&script{readings: []reading{on(2000, 10, 10), on(4000, 20, 20), on(4000, 20, 20)}},
		&script{readings: []reading{on(0, 0, 0), on(1000, 20, 10), on(1000, 20, 10)}},
	}
	refs := []counter{&script{readings: []reading{on(100, 10, 10), on(300, 20, 20), on(300, 20, 20)}}}
	// The miss estimate dips in the third collection (30 counted half the
	// time scales to 60, below the 80 before): the counter holds at 80.
	misses := []counter{&script{readings: []reading{on(10, 10, 10), on(40, 20, 10), on(30, 40, 20)}}}
	faultsErr := &script{err: errors.New("bad file descriptor")}

	tg := newTarget(4242)
	tg.fds[evInstructions], tg.fds[evCycles] = instr, cycles
	tg.fds[evCacheReferences], tg.fds[evCacheMisses] = refs, misses
	tg.fds[evPageFaults] = []counter{faultsErr}
	r := &Receiver{targets: []*target{tg}}
	for _, e := range []int{evInstructions, evCycles, evCacheReferences, evCacheMisses, evPageFaults} {
		r.counted[e] = true
	}
	sel, err := procfs.Select("perf", Metrics(), true, nil)
	if err != nil {
		t.Fatal(err)
	}
	mp := procfstest.NewTracker(t)
	reader := mp.Reader
	if err := r.register(mp, sel); err != nil {
		t.Fatal(err)
	}
	defer r.Shutdown(context.Background())
	pid := attribute.NewSet(semconv.ProcessPID(4242))

	sum := func(name string, v int64) metricdata.Metrics {
		return procfstest.Sum(name, true, metricdata.DataPoint[int64]{Attributes: pid, Value: v})
	}
	gauge := func(name string, v float64) metricdata.Metrics {
		return procfstest.Gauge(name, metricdata.DataPoint[float64]{Attributes: pid, Value: v})
	}
	steps := []struct {
		instr, cycles, refs, misses int64
		ipc, hit                    float64 // 0: not reported
		wantErr                     bool
	}{
		{instr: 1000 + 1000, cycles: 2000 + 0, refs: 100, misses: 10, wantErr: true},
		{instr: 5000 + 2000, cycles: 4000 + 2000, refs: 300, misses: 80, ipc: 5000.0 / 4000, hit: 1 - 70.0/200},
		{instr: 7000, cycles: 6000, refs: 300, misses: 80}, // nothing ran: no ratio
	}
	for i, s := range steps {
		got, err := procfstest.CollectScope(t, reader, ScopeName)
		if (err != nil) != s.wantErr {
			t.Errorf("collection %d: error %v, want error %v (a failure is reported once)", i, err, s.wantErr)
		}
		metricdatatest.AssertEqual(t, sum(semconv.OrtelPerfInstructionsName, s.instr), got[semconv.OrtelPerfInstructionsName], metricdatatest.IgnoreTimestamp())
		metricdatatest.AssertEqual(t, sum(semconv.OrtelPerfCyclesName, s.cycles), got[semconv.OrtelPerfCyclesName], metricdatatest.IgnoreTimestamp())
		metricdatatest.AssertEqual(t, sum(semconv.OrtelPerfCacheReferencesName, s.refs), got[semconv.OrtelPerfCacheReferencesName], metricdatatest.IgnoreTimestamp())
		metricdatatest.AssertEqual(t, sum(semconv.OrtelPerfCacheMissesName, s.misses), got[semconv.OrtelPerfCacheMissesName], metricdatatest.IgnoreTimestamp())
		if _, ok := got[semconv.OrtelPerfPageFaultsName]; ok {
			t.Errorf("collection %d: page faults reported though every read fails", i)
		}
		for _, g := range []struct {
			name string
			v    float64
		}{{semconv.OrtelPerfIPCName, s.ipc}, {semconv.OrtelPerfCacheHitRatioName, s.hit}} {
			m, ok := got[g.name]
			if g.v == 0 {
				if ok {
					t.Errorf("collection %d: %s reported: %+v", i, g.name, m.Data)
				}
				continue
			}
			metricdatatest.AssertEqual(t, gauge(g.name, g.v), m, metricdatatest.IgnoreTimestamp())
		}
	}

	snap, err := r.Snapshot()
	if err != nil {
		t.Errorf("Snapshot: %v (the failure was reported already)", err)
	}
	if len(snap) != 1 || snap[0].PID != 4242 || snap[0].Values[Instructions] != 7000 || snap[0].Values[CacheMisses] != 80 {
		t.Errorf("Snapshot() = %+v", snap)
	}
	if _, ok := snap[0].Values[PageFaults]; ok {
		t.Error("Snapshot reports page faults that could not be read")
	}
	if _, ok := snap[0].Values[ContextSwitches]; ok {
		t.Error("Snapshot reports context switches that are not counted")
	}

	if err := r.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	// Unregistered: the SDK no longer runs the callback.
	before := mp.Calls()
	procfstest.Collect(t, reader)
	if mp.Live() != 0 || mp.Calls() != before {
		t.Errorf("after Shutdown: %d callbacks registered, %d runs; want none", mp.Live(), mp.Calls()-before)
	}
	for _, c := range append(append(instr, cycles...), refs[0], misses[0], faultsErr) {
		if n := c.(*script).closed; n != 1 {
			t.Errorf("counter closed %d times, want 1", n)
		}
	}
}
