package profile

import (
	"bytes"
	"io"
	"os"
	"runtime"
	"strconv"
	"testing"
)

// TestReaderMemoryBounded streams generated profiles of 20 MB and 200 MB,
// never held in memory, and checks that the heap grows by less than 32 MB
// (docs/ARCHITECTURE.md, "Budgets") and no more for the larger one.
func TestReaderMemoryBounded(t *testing.T) {
	lines := eventLines(t, loadReal(t))
	small, big := int64(20<<20), int64(200<<20)
	if raceEnabled || testing.Short() {
		big = 60 << 20 // still three times the small one
	}
	const budgetMB = 32

	measure := func(size int64) (peakMB, rssMB float64) {
		rr := newRepeatReader(lines, size)
		var r *Reader
		n := 0
		rss0 := rssBytes()
		peakMB = peakHeapMB(func() {
			r = NewReader(rr)
			for {
				_, err := r.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatalf("%d MB stream: %v", size>>20, err)
				}
				n++
			}
		})
		if rss0 > 0 {
			rssMB = float64(rssBytes()-rss0) / (1 << 20)
		}
		if n != rr.count || r.Offset() < size {
			t.Fatalf("%d MB stream: read %d of %d events, %d bytes", size>>20, n, rr.count, r.Offset())
		}
		runtime.KeepAlive(r)
		return peakMB, rssMB
	}

	measure(1 << 20) // warm up what every run shares: code, the GC's own structures
	smallPeak, smallRSS := measure(small)
	bigPeak, bigRSS := measure(big)
	t.Logf("heap growth: %.1f MB for %d MB, %.1f MB for %d MB; RSS growth %.1f MB, %.1f MB",
		smallPeak, small>>20, bigPeak, big>>20, smallRSS, bigRSS)
	for _, m := range []struct {
		what string
		mb   float64
	}{{"heap, small", smallPeak}, {"heap, big", bigPeak}, {"RSS, small", smallRSS}, {"RSS, big", bigRSS}} {
		if m.mb > budgetMB {
			t.Errorf("%s: grew by %.1f MB, over the %d MB budget", m.what, m.mb, budgetMB)
		}
	}
	if bigPeak > smallPeak+4 {
		t.Errorf("heap growth scales with size: %.1f MB for %d MB, %.1f MB for %d MB", smallPeak, small>>20, bigPeak, big>>20)
	}
}

// rssBytes returns the resident set size of the process, or 0 where it
// cannot be read.
func rssBytes() int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := bytes.Fields(b)
	if len(f) < 2 {
		return 0
	}
	pages, err := strconv.ParseInt(string(f[1]), 10, 64)
	if err != nil {
		return 0
	}
	return pages * int64(os.Getpagesize())
}
