package procfs

import (
	"errors"
	"testing"
)

func TestFailuresReportOnce(t *testing.T) {
	var f Failures
	errA := errors.New("read a: gone")
	errB := errors.New("read b: garbage")

	f.Fail(0, errA)
	f.Fail(3, errB)
	err := f.Err()
	if !errors.Is(err, errA) || !errors.Is(err, errB) {
		t.Fatalf("first collection: err = %v, want both failures", err)
	}
	// Still failing: nothing new to report.
	f.Fail(0, errA)
	if f.First(3) {
		t.Error("First(3) = true for a reading already failing")
	}
	if err := f.Err(); err != nil {
		t.Fatalf("second collection: err = %v, want nil (reported already)", err)
	}
	if !f.Failing(0) || f.Failing(1) {
		t.Error("Failing is wrong")
	}
	// Reading 0 recovers, then fails again: that is news.
	f.OK(0)
	f.OK(99) // unknown ids are fine
	f.Fail(0, errA)
	if err := f.Err(); !errors.Is(err, errA) || errors.Is(err, errB) {
		t.Fatalf("after recovery: err = %v, want only %v", err, errA)
	}
	if n := testing.AllocsPerRun(100, func() { f.Fail(0, errA); _ = f.Err() }); n != 0 {
		t.Errorf("a persistent failure allocates %v times per collection", n)
	}
}
