//go:build linux

package process

import (
	"math"
	"testing"
	"time"

	"github.com/ortel-dev/ortel/receivers/internal/procfs/procfstest"
)

func TestSnapshot(t *testing.T) {
	root := procfstest.CopyTree(t, "testdata/two")
	now, advance := fakeClock()
	r, collect := newTest(t, WithRoot(root), WithPIDs(100, 200), withClock(now))
	before, err := r.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	p, ok := before.Process(100)
	want := Process{
		PID: 100, Time: now(), UserTime: 10, SystemTime: 4, CPUs: 4,
		RSS: 25600 * uint64(pageSize), PeakRSS: 204800 * 1024, VirtualMemory: 1073741824, Threads: 8,
	}
	if !ok || p != want {
		t.Errorf("Process(100) = %+v, %v\nwant %+v", p, ok, want)
	}
	if _, ok := before.Process(999); ok {
		t.Error("Process(999) found")
	}

	procfstest.Rewrite(t, root, "proc/100/stat", "testdata/two-later")
	advance(2 * time.Second)
	after, err := r.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	p1, _ := after.Process(100)
	// +1.5 s user and +0.5 s system over 2 s on 4 CPUs.
	if u, ok := p1.CPUUtilizationSince(p); !ok || math.Abs(u-0.25) > 1e-12 {
		t.Errorf("CPUUtilizationSince = %v, %v; want 0.25", u, ok)
	}
	if _, ok := p1.CPUUtilizationSince(p1); ok {
		t.Error("utilization over no time")
	}
	other, _ := after.Process(200)
	if _, ok := p1.CPUUtilizationSince(other); ok {
		t.Error("utilization against another process")
	}
	// Snapshots leave the callback alone: its first collection reports the
	// utilization since New (baseline taken there), without error.
	got, err := collect()
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := got["process.cpu.utilization"]; !ok {
		t.Error("the first collection has no utilization: the baseline taken at New is lost")
	}
}
