package thermal

import (
	"context"
	"errors"
	"maps"
	"strings"
	"syscall"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"

	"github.com/ortel-dev/ortel/receivers"
	"github.com/ortel-dev/ortel/receivers/internal/procfs"
	"github.com/ortel-dev/ortel/receivers/internal/procfs/procfstest"
	"github.com/ortel-dev/ortel/semconv"
)

func withOpener(open opener) Option { return Option(func(c *config) { c.open = open }) }

type want struct {
	id, name string
	celsius  float64
	limits   map[string]float64
}

func gauges(name, desc string, points []metricdata.DataPoint[float64]) metricdata.Metrics {
	return metricdata.Metrics{Name: name, Description: desc, Unit: "Cel", Data: metricdata.Gauge[float64]{DataPoints: points}}
}

func expected(sensors []want) (temps, limits metricdata.Metrics) {
	var tp, lp []metricdata.DataPoint[float64]
	for _, s := range sensors {
		id, name := semconv.HwID(s.id), semconv.HwName(s.name)
		tp = append(tp, metricdata.DataPoint[float64]{Attributes: attribute.NewSet(id, name), Value: s.celsius})
		for kind, c := range s.limits {
			lp = append(lp, metricdata.DataPoint[float64]{Attributes: attribute.NewSet(id, name, semconv.HwLimitType(kind)), Value: c})
		}
	}
	return gauges(semconv.HwTemperatureName, semconv.HwTemperatureDescription, tp),
		gauges(semconv.HwTemperatureLimitName, semconv.HwTemperatureLimitDescription, lp)
}

var serverSensors = []want{
	{"thermal_zone0", "acpitz", 27.8, map[string]float64{"critical": 119, "throttled": 95}},
	{"thermal_zone1", "x86_pkg_temp", 45, nil},
	{"hwmon0/temp1", "acpitz temp1", 27.8, map[string]float64{"critical": 119}},
	{"hwmon1/temp1", "coretemp Package id 0", 45, map[string]float64{"max": 80, "critical": 100}},
	{"hwmon1/temp2", "coretemp Core 0", 43, map[string]float64{"max": 80, "critical": 100}},
	{"hwmon1/temp10", "coretemp Core 8", 44, map[string]float64{"max": 80, "critical": 100}},
	{"hwmon2/temp1", "nvme Composite", 38.85, map[string]float64{"low.degraded": -5.15, "max": 84.85, "critical": 84.85}},
	{"hwmon2/temp2", "nvme Sensor 1", 38.85, nil},
	{"hwmon3/temp1", "nvme Composite", 41.85, map[string]float64{"critical": 89.85}},
}

func TestReceiverServer(t *testing.T) {
	root := procfstest.Expand(t, "testdata/server.txtar")
	mp, reader := procfstest.NewProvider(t)
	r, err := New(WithRoot(root), WithMeterProvider(mp))
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	defer r.Shutdown(context.Background())

	sensors := r.Sensors()
	if len(sensors) != len(serverSensors) {
		t.Fatalf("Sensors() = %d, want %d: %+v", len(sensors), len(serverSensors), sensors)
	}
	for i, w := range serverSensors {
		s := sensors[i]
		if s.ID != w.id || s.Name != w.name || s.Err != nil || !maps.Equal(s.Limits, w.limits) {
			t.Errorf("sensor %d = %+v, want %+v", i, s, w)
		}
	}

	got, err := procfstest.CollectScope(t, reader, ScopeName)
	if err != nil {
		t.Fatalf("collect: %v", err)
	}
	temps, limits := expected(serverSensors)
	metricdatatest.AssertEqual(t, temps, got[semconv.HwTemperatureName], metricdatatest.IgnoreTimestamp())
	metricdatatest.AssertEqual(t, limits, got[semconv.HwTemperatureLimitName], metricdatatest.IgnoreTimestamp())

	// The next collection reads the new values.
	procfstest.WriteFile(t, root, "sys/class/hwmon/hwmon1/temp1_input", "71500\n")
	procfstest.WriteFile(t, root, "sys/class/thermal/thermal_zone1/temp", "-1250\n")
	next := append([]want(nil), serverSensors...)
	next[1].celsius, next[3].celsius = -1.25, 71.5
	got, err = procfstest.CollectScope(t, reader, ScopeName)
	if err != nil {
		t.Fatalf("collect: %v", err)
	}
	temps, _ = expected(next)
	metricdatatest.AssertEqual(t, temps, got[semconv.HwTemperatureName], metricdatatest.IgnoreTimestamp())

	snap, err := r.Snapshot()
	if err != nil || len(snap) != len(next) {
		t.Fatalf("Snapshot() = %v, %v", snap, err)
	}
	for i, w := range next {
		if snap[i] != (Reading{ID: w.id, Name: w.name, Celsius: w.celsius}) {
			t.Errorf("Snapshot()[%d] = %+v, want %s %v", i, snap[i], w.id, w.celsius)
		}
	}
}

func TestBrokenSensors(t *testing.T) {
	root := procfstest.Expand(t, "testdata/broken.txtar")
	mp, reader := procfstest.NewProvider(t)
	r, err := New(WithRoot(root), WithMeterProvider(mp))
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	defer r.Shutdown(context.Background())

	reasons := map[string]string{
		"thermal_zone0": `holds "N/A", not a temperature`,
		"thermal_zone1": "no temperature file",
	}
	good := []want{
		{"thermal_zone2", "thermal_zone2", -5, nil},
		{"hwmon0/temp1", "hwmon0 temp1", 30, nil},
		{"hwmon1/temp1", "k10temp Tctl", 51.125, map[string]float64{"critical": 95}},
	}
	sensors := r.Sensors()
	if len(sensors) != len(reasons)+len(good) {
		t.Fatalf("Sensors() = %+v", sensors)
	}
	for _, s := range sensors {
		if reason, bad := reasons[s.ID]; bad {
			if !errors.Is(s.Err, receivers.ErrUnsupported) || !strings.Contains(s.Err.Error(), reason) {
				t.Errorf("sensor %s: Err = %v, want one with %q", s.ID, s.Err, reason)
			}
		} else if s.Err != nil {
			t.Errorf("sensor %s: unexpected Err %v", s.ID, s.Err)
		}
	}
	got, err := procfstest.CollectScope(t, reader, ScopeName)
	if err != nil {
		t.Fatal(err)
	}
	temps, limits := expected(good)
	metricdatatest.AssertEqual(t, temps, got[semconv.HwTemperatureName], metricdatatest.IgnoreTimestamp())
	metricdatatest.AssertEqual(t, limits, got[semconv.HwTemperatureLimitName], metricdatatest.IgnoreTimestamp())

	// A reading that turns to garbage is left out and reported once.
	procfstest.WriteFile(t, root, "sys/class/hwmon/hwmon0/temp1_input", "\n")
	for i, wantErr := range []bool{true, false} {
		got, err := procfstest.CollectScope(t, reader, ScopeName)
		if (err != nil) != wantErr {
			t.Errorf("collection %d: error %v, want error %v", i, err, wantErr)
		}
		if err != nil && !strings.Contains(err.Error(), "hwmon0/temp1") {
			t.Errorf("error %q does not name the sensor", err)
		}
		if n := len(got[semconv.HwTemperatureName].Data.(metricdata.Gauge[float64]).DataPoints); n != len(good)-1 {
			t.Errorf("collection %d: %d temperatures, want %d", i, n, len(good)-1)
		}
	}
}

func TestUnsupported(t *testing.T) {
	tests := []struct {
		name   string
		root   func(t *testing.T) string
		open   opener
		reason string
	}{
		{"no sys tree", func(t *testing.T) string { return t.TempDir() }, nil, "no thermal zone"},
		{"every sensor refused", func(t *testing.T) string { return procfstest.Expand(t, "testdata/server.txtar") }, func(path string) (int, error) {
			if strings.HasSuffix(path, "/temp") || strings.HasSuffix(path, "_input") {
				return -1, syscall.EACCES
			}
			return procfs.Open(path)
		}, "none of the 9 temperature sensors can be read: its temperature file cannot be opened"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mp, _ := procfstest.NewProvider(t)
			r, err := New(WithRoot(tt.root(t)), WithMeterProvider(mp), withOpener(tt.open))
			if r != nil || !errors.Is(err, receivers.ErrUnsupported) {
				t.Fatalf("New = %v, %v; want an error matching ErrUnsupported", r, err)
			}
			if !strings.Contains(err.Error(), tt.reason) {
				t.Errorf("error %q lacks %q", err, tt.reason)
			}
		})
	}
}

func TestShutdown(t *testing.T) {
	r, collect := procfstest.Start(t, func(mp metric.MeterProvider) (*Receiver, error) {
		return New(WithRoot(procfstest.Expand(t, "testdata/server.txtar")), WithMeterProvider(mp))
	})
	if got, _ := collect(); len(got) == 0 {
		t.Fatal("no metrics before Shutdown")
	}
	procfstest.ShutdownTwice(t, r.Shutdown, collect)
}

// TestShutdownUnregisters: after Shutdown the SDK no longer runs the
// receiver's callback (a Shutdown that only marks the receiver down
// leaks the registration; its metrics would vanish all the same).
func TestShutdownUnregisters(t *testing.T) {
	procfstest.ShutdownUnregisters(t, func(mp metric.MeterProvider) (*Receiver, error) {
		return New(WithRoot(procfstest.Expand(t, "testdata/server.txtar")), WithMeterProvider(mp))
	})
}

// TestThisMachine runs the receiver on the real /sys: it reads sensors or
// says why not. Nothing is skipped.
func TestThisMachine(t *testing.T) {
	mp, _ := procfstest.NewProvider(t)
	r, err := New(WithRoot("/"), WithMeterProvider(mp))
	if err != nil {
		var ue *receivers.UnsupportedError
		if !errors.As(err, &ue) || ue.Reason == "" {
			t.Fatalf("New: %v; want a receiver or an UnsupportedError with a reason", err)
		}
		t.Logf("thermal on this machine: %v", err)
		return
	}
	defer r.Shutdown(context.Background())
	snap, _ := r.Snapshot()
	t.Logf("thermal on this machine: %d sensors, %d read now", len(r.Sensors()), len(snap))
}

func TestWithMetric(t *testing.T) {
	tests := []struct {
		name    string
		opts    []Option
		want    []string
		wantErr string
	}{
		{"default", nil, []string{semconv.HwTemperatureName, semconv.HwTemperatureLimitName}, ""},
		{"limits off", []Option{WithMetric(semconv.HwTemperatureLimitName, false)}, []string{semconv.HwTemperatureName}, ""},
		{"unknown", []Option{WithMetric("hw.fan.speed", true)}, nil, `unknown metric "hw.fan.speed"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mp, reader := procfstest.NewProvider(t)
			r, err := New(append([]Option{WithRoot(procfstest.Expand(t, "testdata/server.txtar")), WithMeterProvider(mp)}, tt.opts...)...)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("New error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer r.Shutdown(context.Background())
			got, err := procfstest.CollectScope(t, reader, ScopeName)
			if err != nil {
				t.Fatal(err)
			}
			procfstest.AssertNames(t, got, tt.want...)
		})
	}
}
