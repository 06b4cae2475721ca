//go:build linux

package cpu

import (
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"math"
	"testing"
	"time"

	"github.com/ortel-dev/ortel/receivers/internal/procfs/procfstest"
)

func TestSnapshot(t *testing.T) {
	root := procfstest.CopyTree(t, "testdata/xeon4")
	r, collect := newTest(t, WithRoot(root))
	before, err := r.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	if before.LogicalCPUs != 4 || len(before.PerCPU) != 4 {
		t.Errorf("LogicalCPUs = %d, PerCPU = %d; want 4, 4", before.LogicalCPUs, len(before.PerCPU))
	}
	wantTotal := Times{User: 380, Nice: 1.6, System: 110, Idle: 1640, IOWait: 7.5, Interrupt: 3.5, Steal: 0.43}
	if before.Total != wantTotal {
		t.Errorf("Total = %+v, want %+v", before.Total, wantTotal)
	}
	if want := (Times{User: 100, Nice: 1, System: 30, Idle: 400, IOWait: 2, Interrupt: 1, Steal: 0.1}); before.PerCPU[0] != want {
		t.Errorf("PerCPU[0] = %+v, want %+v", before.PerCPU[0], want)
	}
	if before.ContextSwitches != 987654321 || before.Interrupts != 123456789 {
		t.Errorf("ContextSwitches, Interrupts = %d, %d", before.ContextSwitches, before.Interrupts)
	}
	if !before.HasLoad || before.Load != [3]float64{1.25, 0.80, 0.50} {
		t.Errorf("Load = %v, %v", before.Load, before.HasLoad)
	}
	if _, ok := before.UtilizationSince(before); ok {
		t.Error("UtilizationSince itself: ok, want false (no time passed)")
	}
	if _, ok := before.UtilizationSince(Snapshot{}); ok {
		t.Error("UtilizationSince an empty snapshot: ok, want false")
	}

	procfstest.Rewrite(t, root, "proc/stat", "testdata/xeon4-later")
	readFrom := time.Now()
	after, err := r.Snapshot()
	readTo := time.Now()
	if err != nil {
		t.Fatal(err)
	}
	// "cpu" line: 495 ticks passed, of which idle +300 and iowait -1,
	// so 196 busy.
	u, ok := after.UtilizationSince(before)
	if !ok || math.Abs(u-196.0/495.0) > 1e-9 {
		t.Errorf("UtilizationSince = %v, %v; want %v", u, ok, 196.0/495.0)
	}
	if !after.Time.After(before.Time) && !after.Time.Equal(before.Time) {
		t.Error("Time went back")
	}
	if after.Time.Before(readFrom) || after.Time.After(readTo) {
		t.Errorf("Time %v is not when Snapshot read: between %v and %v", after.Time, readFrom, readTo)
	}
	// Snapshots do not disturb the callback's baseline, taken at New: its
	// first collection reports the utilization since New, the same 196 of
	// 495 ticks busy over all CPUs.
	got, _ := collect()
	m, ok := got["system.cpu.utilization"]
	if !ok {
		t.Fatal("the first collection has no utilization: the baseline taken at New is lost")
	}
	busy := 0.0
	for _, dp := range m.Data.(metricdata.Gauge[float64]).DataPoints {
		if mode, _ := dp.Attributes.Value("cpu.mode"); mode.AsString() != "idle" && mode.AsString() != "wait" {
			busy += dp.Value
		}
	}
	if busy <= 0 {
		t.Errorf("utilization since New shows no busy time: %+v", m)
	}
}

func TestTimes(t *testing.T) {
	tm := Times{User: 1, Nice: 2, System: 3, Idle: 4, IOWait: 5, Interrupt: 6, Steal: 7}
	if tm.Total() != 28 || tm.Busy() != 19 {
		t.Errorf("Total, Busy = %v, %v; want 28, 19", tm.Total(), tm.Busy())
	}
}
