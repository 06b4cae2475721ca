package history

import (
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/ortel-dev/ortel/internal/report"
)

// BenchmarkStoreSize records b.N runs (at least 10,000) made from the real
// PaddleOCR det report of internal/report's testdata (every percentile with
// its interval, 14 op types, the settings) into each kind of store, and
// reports the store's size per 10,000 runs and the time to record one.
//
//	go test -run '^$' -bench StoreSize -benchtime 10000x ./internal/history/
func BenchmarkStoreSize(b *testing.B) {
	f, err := os.Open("../report/testdata/det_report.json.gz")
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		b.Fatal(err)
	}
	var rep report.Report
	if err := json.NewDecoder(zr).Decode(&rep); err != nil {
		b.Fatal(err)
	}
	base, err := FromReport(&rep, "c0", "bench")
	if err != nil {
		b.Fatal(err)
	}
	n := max(b.N, 10000)
	for _, k := range storeKinds(b) {
		b.Run(k.name, func(b *testing.B) {
			ctx := context.Background()
			s, err := Open(ctx, k.location(b))
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			before, _ := s.Size(ctx)
			start := time.Now()
			for i := range n {
				r := base
				r.Time = base.Time.Add(time.Duration(i) * time.Minute)
				r.Commit = fmt.Sprintf("c%05d", i)
				r.Fingerprint = fmt.Sprintf("%s-%d", base.Fingerprint, i)
				if _, _, err := s.Record(ctx, r); err != nil {
					b.Fatal(err)
				}
			}
			took := time.Since(start)
			after, err := s.Size(ctx)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(after-before)/float64(n)*10000/(1<<20), "MiB/10k-runs")
			b.ReportMetric(float64(took.Microseconds())/float64(n), "µs/record")
		})
	}
}
