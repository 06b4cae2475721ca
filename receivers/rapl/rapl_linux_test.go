package rapl

import (
	"context"
	"errors"
	"io/fs"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"

	"github.com/ortel-dev/ortel/receivers"
	"github.com/ortel-dev/ortel/receivers/internal/procfs"
	"github.com/ortel-dev/ortel/receivers/internal/procfs/procfstest"
	"github.com/ortel-dev/ortel/semconv"
)

// clock is a settable clock for hw.power.
type clock struct{ t time.Time }

func (c *clock) now() time.Time          { return c.t }
func (c *clock) advance(d time.Duration) { c.t = c.t.Add(d) }
func withClock(c *clock) Option          { return Option(func(cfg *config) { cfg.now = c.now }) }
func withOpener(open opener) Option      { return Option(func(cfg *config) { cfg.open = open }) }
func newClock() *clock                   { return &clock{t: time.Unix(1_700_000_000, 0)} }

// denyOpen is an opener that refuses paths ending in one of suffixes with
// err, as the kernel does for energy_uj when not root.
func denyOpen(err error, suffixes ...string) opener {
	return func(path string) (int, error) {
		for _, s := range suffixes {
			if strings.HasSuffix(path, s) {
				return -1, err
			}
		}
		return procfs.Open(path)
	}
}

// xeonZone is a zone of testdata/xeon-2s.txtar and its expected identity.
type xeonZone struct {
	id, name, parent string
	typ              attribute.KeyValue
	start            uint64 // energy_uj in the fixture
	max              uint64 // max_energy_range_uj
}

var xeonZones = []xeonZone{
	{"intel-rapl:0", "package-0", "", semconv.HwTypeCPU, 123456789012, 262143328850},
	{"intel-rapl:0:0", "package-0/core", "intel-rapl:0", semconv.HwTypeCPU, 45678901234, 262143328850},
	{"intel-rapl:0:1", "package-0/uncore", "intel-rapl:0", semconv.HwTypeGPU, 1234567, 262143328850},
	{"intel-rapl:0:2", "package-0/dram", "intel-rapl:0", semconv.HwTypeMemory, 23456789012, 65712999613},
	{"intel-rapl:1", "package-1", "", semconv.HwTypeCPU, 98765432109, 262143328850},
	{"intel-rapl:1:0", "package-1/core", "intel-rapl:1", semconv.HwTypeCPU, 34567890123, 262143328850},
	{"intel-rapl:1:1", "package-1/dram", "intel-rapl:1", semconv.HwTypeMemory, 19876543210, 65712999613},
	{"intel-rapl:2", "psys", "", semconv.HwTypeEnclosure, 212345678901, 262143328850},
}

func (z xeonZone) attrs() attribute.Set {
	kv := []attribute.KeyValue{semconv.HwID(z.id), z.typ, semconv.HwName(z.name)}
	if z.parent != "" {
		kv = append(kv, semconv.HwParent(z.parent))
	}
	return attribute.NewSet(kv...)
}

func energyMetric(points []metricdata.DataPoint[float64]) metricdata.Metrics {
	return metricdata.Metrics{
		Name: semconv.HwEnergyName, Description: semconv.HwEnergyDescription, Unit: semconv.HwEnergyUnit,
		Data: metricdata.Sum[float64]{Temporality: metricdata.CumulativeTemporality, IsMonotonic: true, DataPoints: points},
	}
}

func powerMetric(points []metricdata.DataPoint[float64]) metricdata.Metrics {
	return metricdata.Metrics{
		Name: semconv.HwPowerName, Description: semconv.HwPowerDescription, Unit: semconv.HwPowerUnit,
		Data: metricdata.Gauge[float64]{DataPoints: points},
	}
}

func TestReceiverTwoSocketXeon(t *testing.T) {
	root := procfstest.Expand(t, "testdata/xeon-2s.txtar")
	mp, reader := procfstest.NewProvider(t)
	clk := newClock()
	r, err := New(WithRoot(root), WithMeterProvider(mp), withClock(clk))
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { r.Shutdown(context.Background()) })

	zones := r.Zones()
	if len(zones) != len(xeonZones) {
		t.Fatalf("Zones() = %d zones, want %d (the mmio copy and the control folder skipped): %+v", len(zones), len(xeonZones), zones)
	}
	for i, want := range xeonZones {
		got := zones[i]
		if got.ID != want.id || got.Name != want.name || got.Parent != want.parent || got.Type != want.typ.Value.AsString() || got.Err != nil {
			t.Errorf("zone %d = %+v, want %s %q parent %q type %s", i, got, want.id, want.name, want.parent, want.typ.Value.AsString())
		}
		if got.MaxJoules != float64(want.max)/1e6 {
			t.Errorf("zone %s MaxJoules = %v, want %v", want.id, got.MaxJoules, float64(want.max)/1e6)
		}
	}

	// First collection: nothing consumed since New, no power yet.
	clk.advance(time.Second)
	got, err := procfstest.CollectScope(t, reader, ScopeName)
	if err != nil {
		t.Fatalf("collect: %v", err)
	}
	var zero []metricdata.DataPoint[float64]
	for _, z := range xeonZones {
		zero = append(zero, metricdata.DataPoint[float64]{Attributes: z.attrs(), Value: 0})
	}
	metricdatatest.AssertEqual(t, energyMetric(zero), got[semconv.HwEnergyName], metricdatatest.IgnoreTimestamp())
	if _, ok := got[semconv.HwPowerName]; ok {
		t.Errorf("hw.power reported before two readings: %+v", got[semconv.HwPowerName])
	}

	// Two seconds later every zone counted some energy; package-0 wrapped.
	consumed := map[string]uint64{
		"intel-rapl:0":   262143328850 - 123456789012 + 1_000_000, // wrapped to 1 J
		"intel-rapl:0:0": 60_000_000,
		"intel-rapl:0:1": 500_000,
		"intel-rapl:0:2": 9_000_000,
		"intel-rapl:1":   150_000_000,
		"intel-rapl:1:0": 80_000_000,
		"intel-rapl:1:1": 8_000_000,
		"intel-rapl:2":   400_000_000,
	}
	for _, z := range xeonZones {
		raw := (z.start + consumed[z.id]) % z.max
		if z.id == "intel-rapl:0" {
			raw = 1_000_000
		}
		procfstest.WriteFile(t, root, "sys/class/powercap/"+z.id+"/energy_uj", itoa(raw)+"\n")
	}
	clk.advance(2 * time.Second)
	got, err = procfstest.CollectScope(t, reader, ScopeName)
	if err != nil {
		t.Fatalf("collect: %v", err)
	}
	var energy, power []metricdata.DataPoint[float64]
	for _, z := range xeonZones {
		j := float64(consumed[z.id]) / 1e6
		energy = append(energy, metricdata.DataPoint[float64]{Attributes: z.attrs(), Value: j})
		power = append(power, metricdata.DataPoint[float64]{Attributes: z.attrs(), Value: j / 2})
	}
	metricdatatest.AssertEqual(t, energyMetric(energy), got[semconv.HwEnergyName], metricdatatest.IgnoreTimestamp())
	metricdatatest.AssertEqual(t, powerMetric(power), got[semconv.HwPowerName], metricdatatest.IgnoreTimestamp())

	// Snapshot returns the same totals without waiting for a collection.
	snap, err := r.Snapshot()
	if err != nil {
		t.Fatalf("Snapshot: %v", err)
	}
	if len(snap) != len(xeonZones) {
		t.Fatalf("Snapshot() = %d zones, want %d", len(snap), len(xeonZones))
	}
	for i, z := range xeonZones {
		if want := float64(consumed[z.id]) / 1e6; snap[i].ID != z.id || snap[i].Joules != want || snap[i].Parent != z.parent {
			t.Errorf("Snapshot()[%d] = %+v, want %s with %v J", i, snap[i], z.id, want)
		}
	}
}

func itoa(v uint64) string { return strconv.FormatUint(v, 10) }

func TestCounterAdvance(t *testing.T) {
	const max = 1000
	tests := []struct {
		name  string
		reads []uint64
		want  uint64
	}{
		{"steady", []uint64{100, 150, 400}, 300},
		{"unchanged", []uint64{100, 100}, 0},
		{"one wrap", []uint64{900, 50}, 150},
		{"wrap to zero", []uint64{900, 0}, 100},
		{"two wraps, one per interval", []uint64{900, 50, 990, 10}, 1110},
		{"from zero to max", []uint64{0, 1000}, 1000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := counter{max: max, last: tt.reads[0]}
			for _, v := range tt.reads[1:] {
				c.advance(v)
			}
			if c.total != tt.want {
				t.Errorf("total = %d, want %d", c.total, tt.want)
			}
		})
	}
}

func TestEnergyReadableOnlyByRoot(t *testing.T) {
	t.Run("every zone", func(t *testing.T) {
		root := procfstest.Expand(t, "testdata/xeon-2s.txtar")
		mp, _ := procfstest.NewProvider(t)
		r, err := New(WithRoot(root), WithMeterProvider(mp), withOpener(denyOpen(syscall.EACCES, "/energy_uj")))
		if r != nil || !errors.Is(err, receivers.ErrUnsupported) {
			t.Fatalf("New = %v, %v; want nil and an error matching ErrUnsupported", r, err)
		}
		if !errors.Is(err, fs.ErrPermission) {
			t.Errorf("error %v does not keep the permission error", err)
		}
		var ue *receivers.UnsupportedError
		if !errors.As(err, &ue) || ue.Source != "rapl" {
			t.Fatalf("error %v is not a rapl UnsupportedError", err)
		}
		for _, want := range []string{"readable only by root", "chmod o+r", "energy_uj"} {
			if !strings.Contains(ue.Reason, want) {
				t.Errorf("reason %q lacks %q", ue.Reason, want)
			}
		}
	})
	t.Run("dram zones only", func(t *testing.T) {
		root := procfstest.Expand(t, "testdata/xeon-2s.txtar")
		mp, reader := procfstest.NewProvider(t)
		r, err := New(WithRoot(root), WithMeterProvider(mp),
			withOpener(denyOpen(syscall.EACCES, "intel-rapl:0:2/energy_uj", "intel-rapl:1:1/energy_uj")))
		if err != nil {
			t.Fatalf("New: %v", err)
		}
		defer r.Shutdown(context.Background())
		denied := 0
		for _, z := range r.Zones() {
			if z.Err == nil {
				continue
			}
			denied++
			if !strings.HasSuffix(z.Name, "dram") || !errors.Is(z.Err, receivers.ErrUnsupported) || !strings.Contains(z.Err.Error(), "readable only by root") {
				t.Errorf("zone %s: Err = %v", z.ID, z.Err)
			}
		}
		if denied != 2 {
			t.Errorf("%d zones refused, want the 2 dram zones", denied)
		}
		got, err := procfstest.CollectScope(t, reader, ScopeName)
		if err != nil {
			t.Fatal(err)
		}
		if n := len(got[semconv.HwEnergyName].Data.(metricdata.Sum[float64]).DataPoints); n != len(xeonZones)-2 {
			t.Errorf("hw.energy has %d points, want %d", n, len(xeonZones)-2)
		}
	})
}

func TestUnsupported(t *testing.T) {
	tests := []struct {
		name    string
		root    func(t *testing.T) string
		reason  string
		notExst bool
	}{
		{"no powercap folder", func(t *testing.T) string { return t.TempDir() }, "no RAPL energy counters", true},
		{"no zones", func(t *testing.T) string { return procfstest.Expand(t, "testdata/no-zones.txtar") }, "no RAPL zone", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mp, _ := procfstest.NewProvider(t)
			r, err := New(WithRoot(tt.root(t)), WithMeterProvider(mp))
			if r != nil || !errors.Is(err, receivers.ErrUnsupported) {
				t.Fatalf("New = %v, %v; want an error matching ErrUnsupported", r, err)
			}
			if !strings.Contains(err.Error(), tt.reason) {
				t.Errorf("error %q lacks %q", err, tt.reason)
			}
			if errors.Is(err, fs.ErrNotExist) != tt.notExst {
				t.Errorf("errors.Is(err, fs.ErrNotExist) = %v, want %v", !tt.notExst, tt.notExst)
			}
		})
	}
}

func TestBrokenZones(t *testing.T) {
	root := procfstest.Expand(t, "testdata/broken.txtar")
	mp, reader := procfstest.NewProvider(t)
	r, err := New(WithRoot(root), WithMeterProvider(mp))
	if err != nil {
		t.Fatalf("New: %v (intel-rapl:0 is readable)", err)
	}
	defer r.Shutdown(context.Background())

	wantReasons := map[string]string{
		"intel-rapl:0:0": "energy_uj cannot be read",
		"intel-rapl:1":   "max_energy_range_uj cannot be read",
		"intel-rapl:2":   `unknown RAPL domain "mystery"`,
		"intel-rapl:3":   "not a positive number",
		"intel-rapl:4":   "name file cannot be read",
	}
	zones := r.Zones()
	if len(zones) != 6 {
		t.Fatalf("Zones() = %+v, want 6 zones", zones)
	}
	for _, z := range zones {
		want, bad := wantReasons[z.ID]
		switch {
		case !bad && z.Err != nil:
			t.Errorf("zone %s: unexpected error %v", z.ID, z.Err)
		case bad && (z.Err == nil || !strings.Contains(z.Err.Error(), want) || !errors.Is(z.Err, receivers.ErrUnsupported)):
			t.Errorf("zone %s: Err = %v, want one matching ErrUnsupported with %q", z.ID, z.Err, want)
		}
	}

	// Garbage appears at run time: reported once, the zone left out, and
	// reported again only after it recovered and broke anew.
	path := "sys/class/powercap/intel-rapl:0/energy_uj"
	steps := []struct {
		content string
		wantErr bool
		points  int
	}{
		{"oops", true, 0},
		{"oops", false, 0},
		{"2000000", false, 1},
		{"", true, 0},
		{"99999999999999999", false, 0}, // above the range: still failing, not reported again
		{"3000000", false, 1},
	}
	for i, s := range steps {
		procfstest.WriteFile(t, root, path, s.content+"\n")
		got, err := procfstest.CollectScope(t, reader, ScopeName)
		if (err != nil) != s.wantErr {
			t.Errorf("step %d (%q): collect error %v, want error %v", i, s.content, err, s.wantErr)
		}
		if err != nil && !strings.Contains(err.Error(), "intel-rapl:0") {
			t.Errorf("step %d: error %q does not name the zone", i, err)
		}
		n := 0
		if m, ok := got[semconv.HwEnergyName]; ok {
			n = len(m.Data.(metricdata.Sum[float64]).DataPoints)
		}
		if n != s.points {
			t.Errorf("step %d (%q): %d hw.energy points, want %d", i, s.content, n, s.points)
		}
	}
	snap, err := r.Snapshot()
	if err != nil || len(snap) != 1 || snap[0].Joules != 2 {
		t.Errorf("Snapshot() = %+v, %v; want intel-rapl:0 with 2 J (1 J to 2 J, then 3 J)", snap, err)
	}
}

func TestShutdown(t *testing.T) {
	r, collect := procfstest.Start(t, func(mp metric.MeterProvider) (*Receiver, error) {
		return New(WithRoot(procfstest.Expand(t, "testdata/xeon-2s.txtar")), WithMeterProvider(mp))
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
		return New(WithRoot(procfstest.Expand(t, "testdata/xeon-2s.txtar")), WithMeterProvider(mp))
	})
}

// TestThisMachine runs the receiver on the real /sys: it either reads
// zones or says why not. Nothing is skipped.
func TestThisMachine(t *testing.T) {
	mp, _ := procfstest.NewProvider(t)
	r, err := New(WithRoot("/"), WithMeterProvider(mp))
	if err != nil {
		var ue *receivers.UnsupportedError
		if !errors.As(err, &ue) || ue.Reason == "" {
			t.Fatalf("New: %v; want a working receiver or an UnsupportedError with a reason", err)
		}
		t.Logf("rapl on this machine: %v", err)
		return
	}
	defer r.Shutdown(context.Background())
	snap, err := r.Snapshot()
	if err != nil || len(snap) == 0 {
		t.Fatalf("Snapshot() = %v, %v; want the readable zones", snap, err)
	}
	t.Logf("rapl on this machine: %d zones readable, first %+v", len(snap), snap[0])
}

func TestWithMetric(t *testing.T) {
	tests := []struct {
		name    string
		opts    []Option
		want    []string
		wantErr string
	}{
		{"default", nil, []string{semconv.HwEnergyName, semconv.HwPowerName}, ""},
		{"power off", []Option{WithMetric(semconv.HwPowerName, false)}, []string{semconv.HwEnergyName}, ""},
		{"all off", []Option{WithMetric(semconv.HwPowerName, false), WithMetric(semconv.HwEnergyName, false)}, nil, ""},
		{"unknown", []Option{WithMetric("hw.voltage", true)}, nil, `unknown metric "hw.voltage"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mp, reader := procfstest.NewProvider(t)
			clk := newClock()
			r, err := New(append([]Option{WithRoot(procfstest.Expand(t, "testdata/xeon-2s.txtar")), WithMeterProvider(mp), withClock(clk)}, tt.opts...)...)
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
			procfstest.CollectScope(t, reader, ScopeName)
			clk.advance(time.Second)
			got, err := procfstest.CollectScope(t, reader, ScopeName)
			if err != nil {
				t.Fatal(err)
			}
			procfstest.AssertNames(t, got, tt.want...)
		})
	}
}
