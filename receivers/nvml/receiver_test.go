//go:build linux && cgo

package nvml

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/ortel-dev/ortel/receivers"
	"github.com/ortel-dev/ortel/receivers/internal/procfs/procfstest"
	"github.com/ortel-dev/ortel/semconv"
)

// testClock is a clock the test moves; safe for the reading goroutines.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *testClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func withClock(c *testClock) Option {
	return func(cfg *config) { cfg.now = c.now }
}

// withAfterRead sends the index of each GPU whose reading goroutine ends.
func withAfterRead(ch chan<- int) Option {
	return func(cfg *config) { cfg.afterRead = func(i int) { ch <- i } }
}

// harness is a receiver on a scripted machine, read through a ManualReader.
type harness struct {
	t      *testing.T
	m      *machine
	r      *Receiver
	reader *sdkmetric.ManualReader
	mp     *procfstest.Tracker
	clock  *testClock
}

func start(t *testing.T, m *machine, opts ...Option) *harness {
	t.Helper()
	mp := procfstest.NewTracker(t)
	h := &harness{t: t, m: m, reader: mp.Reader, mp: mp, clock: &testClock{t: time.Unix(1_700_000_000, 0)}}
	r, err := New(append([]Option{WithInterface(m.lib), WithMeterProvider(mp), WithTimeout(10 * time.Second), withClock(h.clock)}, opts...)...)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	h.r = r
	t.Cleanup(func() { r.Shutdown(context.Background()) })
	return h
}

func (h *harness) ready() {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := h.r.Ready(ctx); err != nil {
		h.t.Fatalf("Ready: %v", err)
	}
}

// points maps metric name -> encoded attribute set -> value, checking
// each metric's unit and description against the registry.
type points map[string]map[string]float64

func (h *harness) collect() (points, error) {
	h.t.Helper()
	var rm metricdata.ResourceMetrics
	err := h.reader.Collect(context.Background(), &rm)
	out := points{}
	for _, sm := range rm.ScopeMetrics {
		if sm.Scope.Name != ScopeName {
			h.t.Errorf("scope %q, want %q", sm.Scope.Name, ScopeName)
		}
		for _, m := range sm.Metrics {
			want, ok := semconv.LookupMetric(m.Name)
			if !ok || m.Unit != want.Unit || m.Description != want.Brief {
				h.t.Errorf("%s: unit %q, description %q; registry says %q, %q", m.Name, m.Unit, m.Description, want.Unit, want.Brief)
			}
			ps := map[string]float64{}
			add := func(a attribute.Set, v float64) {
				k := a.Encoded(attribute.DefaultEncoder())
				if _, dup := ps[k]; dup {
					h.t.Errorf("%s: two points with attributes %s", m.Name, k)
				}
				ps[k] = v
			}
			switch d := m.Data.(type) {
			case metricdata.Gauge[float64]:
				for _, p := range d.DataPoints {
					add(p.Attributes, p.Value)
				}
			case metricdata.Gauge[int64]:
				for _, p := range d.DataPoints {
					add(p.Attributes, float64(p.Value))
				}
			case metricdata.Sum[float64]:
				for _, p := range d.DataPoints {
					add(p.Attributes, p.Value)
				}
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					add(p.Attributes, float64(p.Value))
				}
			default:
				h.t.Errorf("%s: unexpected data %T", m.Name, m.Data)
			}
			out[m.Name] = ps
		}
	}
	return out, err
}

func key(kv ...attribute.KeyValue) string {
	s := attribute.NewSet(kv...)
	return s.Encoded(attribute.DefaultEncoder())
}

// gpuAttrs builds the attribute sets of a scripted GPU.
type gpuAttrs struct{ uuid, name, model string }

func (g gpuAttrs) id() attribute.KeyValue { return semconv.HwID(g.uuid) }
func (g gpuAttrs) ident(kv ...attribute.KeyValue) string {
	return key(append([]attribute.KeyValue{g.id(), semconv.HwName(g.name), semconv.HwModel(g.model), semconv.HwVendor("NVIDIA"), semconv.HwDriverVersion("550.54.15")}, kv...)...)
}
func (g gpuAttrs) component(kv ...attribute.KeyValue) string {
	return key(append([]attribute.KeyValue{g.id(), semconv.HwTypeGPU, semconv.HwName(g.name)}, kv...)...)
}
func (g gpuAttrs) sensor(loc string, kv ...attribute.KeyValue) string {
	return key(append([]attribute.KeyValue{g.id(), semconv.HwName(g.name), semconv.HwSensorLocation(loc)}, kv...)...)
}
func (g gpuAttrs) only(kv ...attribute.KeyValue) string {
	return key(append([]attribute.KeyValue{g.id()}, kv...)...)
}

var (
	h100 = gpuAttrs{h100UUID, "gpu0", "NVIDIA H100 80GB HBM3"}
	t4   = gpuAttrs{t4UUID, "gpu1", "Tesla T4"}
)

// expected returns every point the two scripted GPUs give: second is the
// collection after the machine moved on (2 s, energy and PCIe counters),
// with GPM values, which need two samples.
func expected(second bool) points {
	pid := semconv.ProcessPID(os.Getpid())
	status := func(g gpuAttrs, st State) map[string]float64 {
		m := map[string]float64{}
		for _, s := range states {
			v := 0.0
			if s == st {
				v = 1
			}
			m[g.component(semconv.HwState(string(s)))] = v
		}
		return m
	}
	throttle := map[string]float64{}
	for _, r := range throttleReasons {
		throttle[h100.only(r.attr)] = 0
	}
	throttle[h100.only(semconv.NvidiaThrottleReasonSwPowerCap)] = 1
	throttle[t4.only(semconv.NvidiaThrottleReasonGPUIdle)] = 1
	throttle[t4.only(semconv.NvidiaThrottleReasonSwPowerCap)] = 0
	throttle[t4.only(semconv.NvidiaThrottleReasonHwSlowdown)] = 0

	p := points{
		semconv.HwGPUUtilizationName: {
			h100.ident(semconv.HwGPUTaskGeneral): 0.87, h100.ident(semconv.HwGPUTaskEncoder): 0, h100.ident(semconv.HwGPUTaskDecoder): 0.05,
			t4.ident(semconv.HwGPUTaskGeneral): 0.12,
		},
		semconv.NvidiaGPUMemoryActivityName: {h100.only(): 0.41, t4.only(): 0.03},
		semconv.HwGPUMemoryUsageName:        {h100.ident(): 21_380_202_496, t4.ident(): 1 << 30},
		semconv.HwGPUMemoryLimitName:        {h100.ident(): 85_520_809_984, t4.ident(): 16_106_127_360},
		semconv.HwGPUMemoryUtilizationName:  {h100.ident(): 21_380_202_496.0 / 85_520_809_984, t4.ident(): float64(1<<30) / 16_106_127_360},
		semconv.HwTemperatureName:           {h100.sensor("gpu"): 45, h100.sensor("memory"): 52, t4.sensor("gpu"): 38},
		semconv.HwTemperatureLimitName: {
			h100.sensor("gpu", semconv.HwLimitTypeCritical): 92, h100.sensor("gpu", semconv.HwLimitTypeThrottled): 89,
			h100.sensor("gpu", semconv.HwLimitTypeMax): 87, h100.sensor("memory", semconv.HwLimitTypeMax): 95,
			t4.sensor("gpu", semconv.HwLimitTypeCritical): 96,
		},
		semconv.HwPowerName:  {h100.component(): 312.5, t4.component(): 27.5},
		semconv.HwEnergyName: {h100.component(): 123_456.789, t4.component(): 5000},
		semconv.HwGPUIOName: {
			h100.ident(semconv.NetworkIODirectionTransmit): 0, h100.ident(semconv.NetworkIODirectionReceive): 0,
			t4.ident(semconv.NetworkIODirectionTransmit): 0, t4.ident(semconv.NetworkIODirectionReceive): 0,
		},
		semconv.HwErrorsName: {h100.component(semconv.ErrorType("corrected")): 3, h100.component(semconv.ErrorType("uncorrected")): 0},
		semconv.HwStatusName: merge(status(h100, StateOK), status(t4, StateOK)),
		semconv.NvidiaGPUClockFrequencyName: {
			h100.only(semconv.NvidiaClockTypeGraphics): 1980e6, h100.only(semconv.NvidiaClockTypeSM): 1980e6,
			h100.only(semconv.NvidiaClockTypeMemory): 2619e6, h100.only(semconv.NvidiaClockTypeVideo): 1755e6,
			t4.only(semconv.NvidiaClockTypeGraphics): 585e6, t4.only(semconv.NvidiaClockTypeSM): 585e6,
			t4.only(semconv.NvidiaClockTypeMemory): 5001e6, t4.only(semconv.NvidiaClockTypeVideo): 540e6,
		},
		semconv.NvidiaGPUThrottleActiveName:     throttle,
		semconv.NvidiaGPUProcessMemoryUsageName: {h100.only(pid): 2 << 30},
		semconv.NvidiaGPUProcessUtilizationName: {
			h100.only(pid, semconv.HwGPUTaskGeneral): 0.8, h100.only(pid, semconv.HwGPUTaskEncoder): 0, h100.only(pid, semconv.HwGPUTaskDecoder): 0.05,
		},
	}
	if !second {
		return p
	}
	p[semconv.HwEnergyName][h100.component()] = 124_081.789
	p[semconv.HwGPUIOName] = map[string]float64{
		h100.ident(semconv.NetworkIODirectionTransmit): 5_000_000, h100.ident(semconv.NetworkIODirectionReceive): 512, // the receive counter wrapped
		t4.ident(semconv.NetworkIODirectionTransmit): 1000 * 1024 * 2, t4.ident(semconv.NetworkIODirectionReceive): 2000 * 1024 * 2,
	}
	p[semconv.NvidiaGPUSMUtilizationName] = map[string]float64{h100.only(): 0.755}
	p[semconv.NvidiaGPUSMOccupancyName] = map[string]float64{h100.only(): 0.4}
	p[semconv.NvidiaGPUTensorActivityName] = map[string]float64{h100.only(): 0.6}
	p[semconv.NvidiaGPUDRAMActivityName] = map[string]float64{h100.only(): 0.55}
	p[semconv.NvidiaGPUPCIeThroughputName] = map[string]float64{
		h100.only(semconv.NetworkIODirectionTransmit): 1200 << 20, h100.only(semconv.NetworkIODirectionReceive): 3400 << 20,
	}
	return p
}

func merge(ms ...map[string]float64) map[string]float64 {
	out := map[string]float64{}
	for _, m := range ms {
		maps.Copy(out, m)
	}
	return out
}

// compare reports every difference between got and want.
func compare(t *testing.T, what string, got, want points) {
	t.Helper()
	for _, name := range slices.Sorted(maps.Keys(merge2(got, want))) {
		g, w := got[name], want[name]
		for _, k := range slices.Sorted(maps.Keys(merge(g, w))) {
			gv, gok := g[k]
			wv, wok := w[k]
			switch {
			case !gok:
				t.Errorf("%s: %s{%s} missing, want %v", what, name, k, wv)
			case !wok:
				t.Errorf("%s: %s{%s} = %v, want no such point", what, name, k, gv)
			case gv != wv:
				t.Errorf("%s: %s{%s} = %v, want %v", what, name, k, gv, wv)
			}
		}
	}
}

func merge2(a, b points) map[string]bool {
	out := map[string]bool{}
	for k := range a {
		out[k] = true
	}
	for k := range b {
		out[k] = true
	}
	return out
}

// twoGPUs is the standard machine: an H100 and a T4.
func twoGPUs() (*machine, *gpuScript) {
	s := &gpuScript{energy: 123_456_789, pcieTX: 1 << 40, pcieRX: 0xFFFF_FF00, release: make(chan struct{})}
	return newMachine(newH100(s), newT4()), s
}

// step moves the scripted machine on by 2 s: 625 J used, 5 MB sent and
// 512 bytes received (the receive counter wraps at 2^32).
func (h *harness) step(s *gpuScript) {
	h.clock.advance(2 * time.Second)
	s.set(func(s *gpuScript) {
		s.energy += 625_000
		s.pcieTX += 5_000_000
		s.pcieRX += 0x200
	})
}

func TestTwoGPUs(t *testing.T) {
	m, script := twoGPUs()
	h := start(t, m)
	h.ready()

	devs := h.r.Devices()
	if len(devs) != 2 {
		t.Fatalf("Devices() = %+v", devs)
	}
	want := []Device{
		{Index: 0, UUID: h100UUID, Name: "gpu0", Model: "NVIDIA H100 80GB HBM3", DriverVersion: "550.54.15", PowerLimitWatts: 700, State: StateOK},
		{Index: 1, UUID: t4UUID, Name: "gpu1", Model: "Tesla T4", DriverVersion: "550.54.15", PowerLimitWatts: 70, State: StateOK},
	}
	for i, w := range want {
		d := devs[i]
		d.Unsupported = nil
		if fmt.Sprint(d) != fmt.Sprint(w) {
			t.Errorf("Devices()[%d] = %+v, want %+v", i, d, w)
		}
	}

	got, err := h.collect()
	if err != nil {
		t.Fatalf("collect: %v", err)
	}
	compare(t, "first collection", got, expected(false))

	h.step(script)
	got, err = h.collect()
	if err != nil {
		t.Fatalf("collect: %v", err)
	}
	compare(t, "second collection", got, expected(true))

	// The H100 offers instant power, so the 1 s average is never read.
	if n := len(m.devices[0].GetPowerUsageCalls()); n != 0 {
		t.Errorf("H100: GetPowerUsage called %d times, want 0 (instant power is offered)", n)
	}
}

func TestNotSupportedIsRemembered(t *testing.T) {
	m, script := twoGPUs()
	h := start(t, m)
	h.ready()
	for range 3 {
		if _, err := h.collect(); err != nil {
			t.Fatal(err)
		}
		h.step(script)
	}
	t4dev := m.devices[1]
	calls := map[string]int{
		"GetFieldValues":        len(t4dev.GetFieldValuesCalls()),
		"GetMemoryInfo_v2":      len(t4dev.GetMemoryInfo_v2Calls()),
		"GetEncoderUtilization": len(t4dev.GetEncoderUtilizationCalls()),
		"GetTotalEccErrors":     len(t4dev.GetTotalEccErrorsCalls()),
	}
	wantCalls := map[string]int{"GetFieldValues": 1, "GetMemoryInfo_v2": 1, "GetEncoderUtilization": 1, "GetTotalEccErrors": 2}
	if !maps.Equal(calls, wantCalls) {
		t.Errorf("T4 calls over 3 collections = %v, want %v (NOT_SUPPORTED asked once)", calls, wantCalls)
	}
	if n := len(t4dev.GetMemoryInfoCalls()); n != 3 {
		t.Errorf("T4: GetMemoryInfo (v1) called %d times, want 3", n)
	}
	for _, c := range m.lib.GpmSampleGetCalls() {
		if c.Device != m.devices[0] {
			t.Error("GPM sampled on the T4, which does not support it")
		}
	}
	unsupported := h.r.Devices()[1].Unsupported
	for _, w := range []string{"instant power (using the power usage reading)", "GPM metrics", "corrected ECC errors", "encoder utilization", "memory info v2 (using v1)", "PCIe byte counters (integrating PCIe throughput)", "memory temperature"} {
		if !slices.Contains(unsupported, w) {
			t.Errorf("T4 Unsupported = %q, lacks %q", unsupported, w)
		}
	}
	if u := h.r.Devices()[0].Unsupported; len(u) != 0 {
		t.Errorf("H100 Unsupported = %q, want none", u)
	}
}

func TestGPULost(t *testing.T) {
	m, script := twoGPUs()
	h := start(t, m)
	h.ready()
	if _, err := h.collect(); err != nil {
		t.Fatal(err)
	}

	script.lost.Store(true)
	got, err := h.collect()
	if err == nil || !strings.Contains(err.Error(), "ERROR_GPU_IS_LOST") || !strings.Contains(err.Error(), h100UUID) {
		t.Errorf("collect error %v, want one naming the lost GPU", err)
	}
	check := func(got points) {
		t.Helper()
		for st, v := range map[State]float64{StateOK: 0, StateDegraded: 0, StateFailed: 1} {
			if g := got[semconv.HwStatusName][h100.component(semconv.HwState(string(st)))]; g != v {
				t.Errorf("H100 hw.status{%s} = %v, want %v", st, g, v)
			}
		}
		for name, ps := range got {
			for k := range ps {
				if name != semconv.HwStatusName && strings.Contains(k, h100UUID) {
					t.Errorf("%s{%s} reported for the lost GPU", name, k)
				}
			}
		}
		if _, ok := got[semconv.HwPowerName][t4.component()]; !ok {
			t.Error("the T4 is no longer read")
		}
	}
	check(got)
	calls := len(m.devices[0].GetUtilizationRatesCalls())

	got, err = h.collect()
	if err != nil {
		t.Errorf("collect after the loss: %v, want nil (reported once)", err)
	}
	check(got)
	if n := len(m.devices[0].GetUtilizationRatesCalls()); n != calls {
		t.Errorf("the lost GPU was asked again (%d calls, then %d)", calls, n)
	}
	d := h.r.Devices()[0]
	if d.State != StateFailed || d.Err == nil {
		t.Errorf("Devices()[0] = %+v, want failed with a reason", d)
	}
	snap, err := h.r.Snapshot(context.Background())
	if err != nil || len(snap) != 2 || snap[0].Device.State != StateFailed || len(snap[0].Values) != 0 || snap[1].Values[Power] != 27.5 {
		t.Errorf("Snapshot() = %+v, %v", snap, err)
	}
}

func TestHungCall(t *testing.T) {
	m, script := twoGPUs()
	reads := make(chan int, 64)
	// The collection's timeout passes when the test sends on expired, never
	// by the wall clock: a loaded machine cannot make a healthy GPU late.
	expired := make(chan time.Time, 1)
	h := start(t, m, withAfterRead(reads), Option(func(cfg *config) { cfg.expired = expired }))
	h.ready()
	if _, err := h.collect(); err != nil {
		t.Fatal(err)
	}
	// Each GPU's reading goroutine reports once, after its result is
	// handed over, and may do so after collect returned: wait for both
	// reports, so none is mistaken below for a report of a later reading.
	for range 2 {
		<-reads
	}

	// expire ends the collection in flight once the T4 has answered (and,
	// with hungToo, once the H100 is inside its hung call): its timeout
	// passes then, never by the wall clock. The returned func waits for
	// that and takes back an expiry no collection needed.
	expire := func(hungToo bool) (wait func()) {
		done := make(chan struct{})
		go func() {
			defer close(done)
			if hungToo {
				<-script.hung
			}
			for i := range reads {
				if i == 1 {
					select {
					case expired <- time.Now():
					default:
					}
					return
				}
			}
		}()
		return func() {
			<-done
			select {
			case <-expired:
			default:
			}
		}
	}

	// The hung call returns only when script.release is closed, below: a
	// collection that waited for it instead of giving up at its timeout
	// never returns, and the test fails by its deadline.
	script.hung = make(chan struct{}, 1)
	script.hang.Store(true)
	wait := expire(true)
	got, err := h.collect()
	wait()
	if err == nil || !strings.Contains(err.Error(), "did not answer") {
		t.Errorf("collect error %v, want one saying the GPU did not answer", err)
	}
	degraded := func(got points, want bool) {
		t.Helper()
		v := got[semconv.HwStatusName][h100.component(semconv.HwState(string(StateDegraded)))]
		if (v == 1) != want {
			t.Errorf("H100 hw.status{degraded} = %v, want degraded %v", v, want)
		}
		if _, ok := got[semconv.HwTemperatureName][t4.sensor("gpu")]; !ok {
			t.Error("the T4 was not read while the H100 hung")
		}
		if _, ok := got[semconv.HwPowerName][h100.component()]; ok == want {
			t.Errorf("H100 power reported %v while degraded %v", ok, want)
		}
	}
	degraded(got, true)
	if d := h.r.Devices()[0]; d.State != StateDegraded || d.Err == nil {
		t.Errorf("Devices()[0] = %+v, want degraded with a reason", d)
	}

	// Still hung: skipped at once, no second call piles up, not reported
	// again. (A collection that asked it again would hang in it until the
	// T4 answers and the expiry ends it.)
	wait = expire(false)
	got, err = h.collect()
	wait()
	if err != nil {
		t.Errorf("second collect: %v, want nil (reported once)", err)
	}
	degraded(got, true)
	if n := len(m.devices[0].GetTemperatureCalls()); n != 2 {
		t.Errorf("GetTemperature called %d times, want 2 (one before the hang, one hung)", n)
	}

	// The call returns: the GPU recovers.
	script.hang.Store(false)
	close(script.release)
	for i := range reads {
		if i == 0 {
			break
		}
	}
	got, err = h.collect()
	if err != nil {
		t.Errorf("collect after recovery: %v", err)
	}
	degraded(got, false)
	if got[semconv.HwStatusName][h100.component(semconv.HwState(string(StateOK)))] != 1 {
		t.Error("H100 hw.status{ok} is not 1 after recovery")
	}
}

func TestInitFailures(t *testing.T) {
	tests := []struct {
		name   string
		script func(*mock.Interface)
		reason string
	}{
		{"library not found", func(l *mock.Interface) { l.InitFunc = func() nvml.Return { return nvml.ERROR_LIBRARY_NOT_FOUND } }, "libnvidia-ml.so.1 cannot be loaded"},
		{"driver not loaded", func(l *mock.Interface) { l.InitFunc = func() nvml.Return { return nvml.ERROR_DRIVER_NOT_LOADED } }, "kernel driver is not loaded"},
		{"no GPU", func(l *mock.Interface) { l.DeviceGetCountFunc = func() (int, nvml.Return) { return 0, nvml.SUCCESS } }, "sees no GPU"},
		{"no GPU can be identified", func(l *mock.Interface) {
			l.DeviceGetHandleByIndexFunc = func(int) (nvml.Device, nvml.Return) { return nil, nvml.ERROR_GPU_IS_LOST }
		}, "none of the 2 GPUs can be identified"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, _ := twoGPUs()
			tt.script(m.lib)
			h := start(t, m)
			err := h.r.Ready(context.Background())
			var ue *receivers.UnsupportedError
			if !errors.Is(err, receivers.ErrUnsupported) || !errors.As(err, &ue) || ue.Source != "nvml" || !strings.Contains(ue.Reason, tt.reason) {
				t.Fatalf("Ready() = %v, want an nvml UnsupportedError with %q", err, tt.reason)
			}
			got, err := h.collect()
			if err != nil || len(got) != 0 {
				t.Errorf("collect after a failed init: %v, %v; want nothing", got, err)
			}
			if _, err := h.r.Snapshot(context.Background()); !errors.Is(err, receivers.ErrUnsupported) {
				t.Errorf("Snapshot error %v, want the init error", err)
			}
		})
	}
}

// TestStartupDoesNotWaitForNVML: New returns while nvmlInit is still
// running; nothing is observed until it finishes.
func TestStartupDoesNotWaitForNVML(t *testing.T) {
	m, _ := twoGPUs()
	entered, release := make(chan struct{}), make(chan struct{})
	m.lib.InitFunc = func() nvml.Return {
		close(entered)
		<-release
		return nvml.SUCCESS
	}
	h := start(t, m)
	<-entered // New has returned and Init is running

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	if err := h.r.Ready(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Ready while Init runs = %v, want the context's deadline", err)
	}
	if got, err := h.collect(); err != nil || len(got) != 0 {
		t.Errorf("collect while Init runs: %d metrics, %v; want none", len(got), err)
	}
	if d := h.r.Devices(); d != nil {
		t.Errorf("Devices() while Init runs = %+v, want nil", d)
	}
	close(release)
	h.ready()
	if got, err := h.collect(); err != nil || len(got[semconv.HwPowerName]) != 2 {
		t.Errorf("collect after Init: %v, %v", got[semconv.HwPowerName], err)
	}
}

func TestOldDriver(t *testing.T) {
	m, _ := twoGPUs()
	for _, s := range []string{"nvmlDeviceGetMemoryInfo_v2", "nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetSupportedClocksEventReasons", "nvmlGpmQueryDeviceSupport", "nvmlDeviceGetFieldValues"} {
		m.missing[s] = true
	}
	h100dev := m.devices[0]
	h100dev.GetMemoryInfoFunc = func() (nvml.Memory, nvml.Return) { return nvml.Memory{Total: 100, Used: 25}, nvml.SUCCESS }
	h100dev.GetCurrentClocksThrottleReasonsFunc = func() (uint64, nvml.Return) { return nvml.ClocksThrottleReasonHwSlowdown, nvml.SUCCESS }
	h100dev.GetSupportedClocksThrottleReasonsFunc = func() (uint64, nvml.Return) { return nvml.ClocksThrottleReasonHwSlowdown, nvml.SUCCESS }
	h100dev.GetPcieThroughputFunc = func(nvml.PcieUtilCounter) (uint32, nvml.Return) { return 10, nvml.SUCCESS }
	m.devices[1].GetCurrentClocksThrottleReasonsFunc = func() (uint64, nvml.Return) { return 0, nvml.SUCCESS }
	m.devices[1].GetSupportedClocksThrottleReasonsFunc = func() (uint64, nvml.Return) { return nvml.ClocksEventReasonGpuIdle, nvml.SUCCESS }
	h := start(t, m)
	h.ready()
	got, err := h.collect()
	if err != nil {
		t.Fatal(err)
	}
	for name, n := range map[string]int{
		"GetMemoryInfo_v2":             len(h100dev.GetMemoryInfo_v2Calls()),
		"GetCurrentClocksEventReasons": len(h100dev.GetCurrentClocksEventReasonsCalls()),
		"GpmQueryDeviceSupport":        len(h100dev.GpmQueryDeviceSupportCalls()),
		"GetFieldValues":               len(h100dev.GetFieldValuesCalls()),
	} {
		if n != 0 {
			t.Errorf("%s called %d times though the driver lacks it", name, n)
		}
	}
	if v := got[semconv.HwGPUMemoryUtilizationName][h100.ident()]; v != 0.25 {
		t.Errorf("memory utilization from v1 = %v, want 0.25", v)
	}
	if v := got[semconv.NvidiaGPUThrottleActiveName][h100.only(semconv.NvidiaThrottleReasonHwSlowdown)]; v != 1 || len(got[semconv.NvidiaGPUThrottleActiveName]) != 2 {
		t.Errorf("throttle = %v, want hw_slowdown active on the H100 and gpu_idle on the T4", got[semconv.NvidiaGPUThrottleActiveName])
	}
	if v, ok := got[semconv.HwPowerName][h100.component()]; !ok || v != 300 {
		t.Errorf("H100 power without field values = %v, want the power usage reading, 300 W", v)
	}
}

func TestWithMetric(t *testing.T) {
	m, _ := twoGPUs()
	h := start(t, m, WithMetric(semconv.NvidiaGPUProcessMemoryUsageName, false), WithMetric(semconv.NvidiaGPUProcessUtilizationName, false),
		WithMetric(semconv.NvidiaGPUSMUtilizationName, false), WithMetric(semconv.NvidiaGPUSMOccupancyName, false),
		WithMetric(semconv.NvidiaGPUTensorActivityName, false), WithMetric(semconv.NvidiaGPUDRAMActivityName, false),
		WithMetric(semconv.NvidiaGPUPCIeThroughputName, false))
	h.ready()
	for range 2 {
		if _, err := h.collect(); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(m.devices[0].GetComputeRunningProcessesCalls()); n != 0 {
		t.Errorf("GetComputeRunningProcesses called %d times with the process metrics off", n)
	}
	if n := len(m.lib.GpmSampleAllocCalls()); n != 0 {
		t.Errorf("GPM samples allocated with the GPM metrics off")
	}

	if _, err := New(WithInterface(m.lib), WithMetric("hw.gpu.fan", true)); err == nil || !strings.Contains(err.Error(), `unknown metric "hw.gpu.fan"`) {
		t.Errorf("New with an unknown metric: %v", err)
	}
}

func TestSnapshot(t *testing.T) {
	m, script := twoGPUs()
	h := start(t, m)
	before, err := h.r.Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	h.step(script)
	after, err := h.r.Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(before) != 2 || len(after) != 2 {
		t.Fatalf("Snapshot() = %d, %d samples, want 2", len(before), len(after))
	}
	if d := after[0].Values[Energy] - before[0].Values[Energy]; d != 625 {
		t.Errorf("H100 energy between snapshots = %v J, want 625", d)
	}
	wantH100 := map[Quantity]float64{Utilization: 0.87, MemoryUsed: 21_380_202_496, MemoryLimit: 85_520_809_984, Temperature: 45, Power: 312.5, Energy: 124_081.789, SMUtilization: 0.755, ProcessMemory: 2 << 30}
	if !maps.Equal(after[0].Values, wantH100) {
		t.Errorf("H100 sample = %v, want %v", after[0].Values, wantH100)
	}
	if after[0].Device.UUID != h100UUID || !after[0].Time.Equal(h.clock.now()) {
		t.Errorf("H100 sample device %+v at %v", after[0].Device, after[0].Time)
	}
	if _, ok := after[1].Values[SMUtilization]; ok {
		t.Error("T4 sample has GPM SM utilization")
	}
}

func TestShutdown(t *testing.T) {
	m, _ := twoGPUs()
	h := start(t, m)
	h.ready()
	for range 2 {
		if _, err := h.collect(); err != nil {
			t.Fatal(err)
		}
	}
	for range 2 {
		if err := h.r.Shutdown(context.Background()); err != nil {
			t.Fatalf("Shutdown: %v", err)
		}
	}
	if n := len(m.lib.ShutdownCalls()); n != 1 {
		t.Errorf("nvml Shutdown called %d times, want 1", n)
	}
	m.mu.Lock()
	samples := slices.Clone(m.samples)
	m.mu.Unlock()
	if len(samples) != 2 {
		t.Fatalf("%d GPM samples allocated, want 2 (the H100's)", len(samples))
	}
	for _, s := range samples {
		if n := len(s.FreeCalls()); n != 1 {
			t.Errorf("GPM sample freed %d times, want 1", n)
		}
	}
	before := h.mp.Calls()
	if got, err := h.collect(); err != nil || len(got) != 0 {
		t.Errorf("collect after Shutdown: %v, %v; want nothing", got, err)
	}
	if h.mp.Live() != 0 || h.mp.Calls() != before {
		t.Errorf("after Shutdown: %d callbacks registered, %d runs; want none", h.mp.Live(), h.mp.Calls()-before)
	}
	if _, err := h.r.Snapshot(context.Background()); err == nil {
		t.Error("Snapshot after Shutdown read the GPUs")
	}
}

func TestFieldValue(t *testing.T) {
	tests := []struct {
		name      string
		v         nvml.FieldValue
		want      uint64
		wantWidth uint64
		ok        bool
	}{
		{"unsigned int", fieldU32(1, 312_500), 312_500, 1<<32 - 1, true},
		{"unsigned long long", fieldU64(1, 1<<40), 1 << 40, 1<<64 - 1, true},
		{"negative signed", func() nvml.FieldValue {
			f := fieldU64(1, ^uint64(0))
			f.ValueType = uint32(nvml.VALUE_TYPE_SIGNED_LONG_LONG)
			return f
		}(), 0, 0, false},
		{"unknown type", nvml.FieldValue{ValueType: 99}, 0, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, w, ok := fieldValue(tt.v)
			if v != tt.want || w != tt.wantWidth || ok != tt.ok {
				t.Errorf("fieldValue = %d, %#x, %v; want %d, %#x, %v", v, w, ok, tt.want, tt.wantWidth, tt.ok)
			}
		})
	}
}

func TestAdvancePCIe(t *testing.T) {
	tests := []struct {
		name  string
		mask  uint64
		reads []uint64
		want  uint64
	}{
		{"first reading is the baseline", 1<<32 - 1, []uint64{12345}, 0},
		{"steady", 1<<32 - 1, []uint64{100, 600, 1600}, 1500},
		{"32-bit wrap", 1<<32 - 1, []uint64{1<<32 - 16, 16}, 32},
		{"64-bit wrap", 1<<64 - 1, []uint64{1<<64 - 1, 9}, 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var g gpu
			for _, r := range tt.reads {
				g.advancePCIe(transmit, r, tt.mask)
			}
			if g.pcieTotal[transmit] != tt.want {
				t.Errorf("total = %d, want %d", g.pcieTotal[transmit], tt.want)
			}
		})
	}
}

// TestThisMachine runs the receiver with the real library: on a machine
// without an NVIDIA driver New says so at once; with one, the GPUs are
// listed. Nothing is skipped. (That New does not wait for NVML's
// initialization is TestStartupDoesNotWaitForNVML's, with a scripted Init.)
func TestThisMachine(t *testing.T) {
	r, err := New(WithMeterProvider(sdkmetric.NewMeterProvider()))
	if err != nil {
		var ue *receivers.UnsupportedError
		if !errors.As(err, &ue) || !strings.Contains(ue.Reason, "libnvidia-ml.so.1") {
			t.Fatalf("New: %v; want a receiver or an UnsupportedError about the library", err)
		}
		t.Logf("nvml on this machine: %v", err)
		return
	}
	defer r.Shutdown(context.Background())
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := r.Ready(ctx); err != nil {
		if !errors.Is(err, receivers.ErrUnsupported) {
			t.Fatalf("Ready: %v", err)
		}
		t.Logf("nvml on this machine: %v", err)
		return
	}
	for _, d := range r.Devices() {
		t.Logf("GPU %d %s %s: %s; not offered: %q", d.Index, d.UUID, d.Model, d.State, d.Unsupported)
	}
}
