package analysis

import (
	"context"
	"errors"
	"io/fs"
	"testing"
	"time"

	"github.com/ortel-dev/ortel/internal/report"
	"github.com/ortel-dev/ortel/internal/testenv"
)

func TestMeasurePeaksCancelled(t *testing.T) {
	testenv.RequireORT(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := MeasurePeaks(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

func TestPeaksCache(t *testing.T) {
	dir := t.TempDir()
	key := MachineKey("Intel(R) Xeon(R) Processor", 2, "1.24.3")
	if key != "intel-r-xeon-r-processor-2cpu-ort1.24.3" {
		t.Errorf("key = %q", key)
	}
	if _, err := LoadPeaks(dir, key); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("empty cache: err = %v, want not exist", err)
	}
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	in := report.Peaks{FLOPsPerS: 1.5e11, BytesPerS: 1.2e10, MeasuredAt: &at, Method: "m"}
	if err := SavePeaks(dir, key, in); err != nil {
		t.Fatal(err)
	}
	got, err := LoadPeaks(dir, key)
	if err != nil {
		t.Fatal(err)
	}
	if got.FLOPsPerS != in.FLOPsPerS || got.BytesPerS != in.BytesPerS || got.Ridge != 12.5 ||
		got.FLOPsSource != SourceCache || got.Machine != key || !got.MeasuredAt.Equal(at) || got.Method != "m" {
		t.Errorf("loaded %+v", got)
	}
	if err := SavePeaks(dir, key, report.Peaks{}); err == nil {
		t.Error("saving zero peaks succeeded")
	}
}
