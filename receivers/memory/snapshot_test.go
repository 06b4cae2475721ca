//go:build linux

package memory

import "testing"

func TestSnapshot(t *testing.T) {
	r, _ := newTest(t, WithRoot("testdata/swap"))
	s, err := r.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	want := Snapshot{
		Time: s.Time, Total: 16000000 * kB, Used: 5000000 * kB, Free: 4000000 * kB, Buffers: 500000 * kB,
		Cached: 6500000 * kB, Available: 9000000 * kB, HasAvailable: true, SwapTotal: 8 << 30, SwapFree: 6 << 30,
	}
	if s != want || s.Time.IsZero() {
		t.Errorf("Snapshot = %+v\nwant %+v", s, want)
	}
	if u := s.Utilization(); u != 0.3125 {
		t.Errorf("Utilization = %v, want 0.3125", u)
	}
	if (Snapshot{}).Utilization() != 0 {
		t.Error("empty Snapshot has a utilization")
	}

	r, _ = newTest(t, WithRoot("testdata/truncated"))
	if _, err := r.Snapshot(); err == nil {
		t.Error("Snapshot of a meminfo without Buffers and Cached succeeded")
	}
}
