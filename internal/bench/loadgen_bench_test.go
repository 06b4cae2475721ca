package bench

import (
	"context"
	"testing"
)

// BenchmarkPhaseOverhead measures what the load generator itself costs per
// request, with requests that do nothing: the closed loop (an atomic
// counter and a record) against the open loop (a scheduled arrival, a
// queue hand-off, the depth counter and a record).
func BenchmarkPhaseOverhead(b *testing.B) {
	noop := func(context.Context, int, int) error { return nil }
	for _, sc := range []Scenario{SingleStream, Server} {
		b.Run(string(sc), func(b *testing.B) {
			b.ReportAllocs()
			// Arrivals far faster than the loop: the scheduler never sleeps,
			// so this is the hand-off cost, not the arrival rate.
			p := phase{scenario: sc, workers: 1, requests: b.N, qps: 1e12, seed: 1}
			b.ResetTimer()
			if _, err := runPhase(context.Background(), p, noop); err != nil {
				b.Fatal(err)
			}
		})
	}
}
