//go:build linux

package cpu

import (
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/ortel-dev/ortel/receivers/internal/procfs/procfstest"
	"github.com/ortel-dev/ortel/semconv"
)

// newTest creates a receiver on a fresh MeterProvider and returns a collect
// function.
func newTest(t *testing.T, opts ...Option) (*Receiver, func() (map[string]metricdata.Metrics, error)) {
	t.Helper()
	return procfstest.Start(t, func(mp metric.MeterProvider) (*Receiver, error) {
		return New(append([]Option{WithMeterProvider(mp)}, opts...)...)
	})
}

var modeNames = [numModes]string{"user", "nice", "system", "idle", "iowait", "interrupt", "steal"}

// cpuTimes builds the system.cpu.time points of one CPU from its /proc/stat
// columns (user nice system idle iowait irq softirq steal), at USER_HZ 100.
func cpuTimes(n int, cols ...float64) []metricdata.DataPoint[float64] {
	v := []float64{cols[0], cols[1], cols[2], cols[3]}
	if len(cols) > 4 {
		v = append(v, cols[4])
	}
	if len(cols) > 5 {
		irq := cols[5]
		if len(cols) > 6 {
			irq += cols[6]
		}
		v = append(v, irq)
	}
	if len(cols) > 7 {
		v = append(v, cols[7])
	}
	var out []metricdata.DataPoint[float64]
	for m, x := range v {
		out = append(out, metricdata.DataPoint[float64]{
			Attributes: attribute.NewSet(semconv.CPUModeKey.String(modeNames[m]), semconv.CPULogicalNumber(n)),
			Value:      x / 100,
		})
	}
	return out
}

// cpuShares builds system.cpu.utilization points of one CPU: mode -> value.
func cpuShares(n int, shares map[string]float64) []metricdata.DataPoint[float64] {
	var out []metricdata.DataPoint[float64]
	for mode, v := range shares {
		out = append(out, metricdata.DataPoint[float64]{
			Attributes: attribute.NewSet(semconv.CPUModeKey.String(mode), semconv.CPULogicalNumber(n)),
			Value:      v,
		})
	}
	return out
}

func concat[T any](parts ...[]T) []T {
	var out []T
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

func timeMetric(points ...[]metricdata.DataPoint[float64]) metricdata.Metrics {
	return procfstest.Sum(semconv.SystemCPUTimeName, true, concat(points...)...)
}

func utilMetric(points ...[]metricdata.DataPoint[float64]) metricdata.Metrics {
	return procfstest.Gauge(semconv.SystemCPUUtilizationName, concat(points...)...)
}

func countMetric(n int64) metricdata.Metrics {
	return procfstest.Sum(semconv.SystemCPULogicalCountName, false, metricdata.DataPoint[int64]{Value: n})
}

func ctxtMetric(n int64) metricdata.Metrics {
	return procfstest.Sum(semconv.OrtelSystemContextSwitchesName, true, metricdata.DataPoint[int64]{Value: n})
}

func intrMetric(n int64) metricdata.Metrics {
	return procfstest.Sum(semconv.OrtelSystemInterruptsName, true, metricdata.DataPoint[int64]{Value: n})
}

func loadMetric(l1, l5, l15 float64) metricdata.Metrics {
	pt := func(w attribute.KeyValue, v float64) metricdata.DataPoint[float64] {
		return metricdata.DataPoint[float64]{Attributes: attribute.NewSet(w), Value: v}
	}
	return procfstest.Gauge(semconv.OrtelSystemLoadAverageName,
		pt(semconv.OrtelLoadAverageWindow1m, l1), pt(semconv.OrtelLoadAverageWindow5m, l5), pt(semconv.OrtelLoadAverageWindow15m, l15))
}

func freqMetric(hz ...int64) metricdata.Metrics {
	var pts []metricdata.DataPoint[int64]
	for n, v := range hz {
		pts = append(pts, metricdata.DataPoint[int64]{Attributes: attribute.NewSet(semconv.CPULogicalNumber(n)), Value: v})
	}
	return procfstest.Gauge(semconv.SystemCPUFrequencyName, pts...)
}
