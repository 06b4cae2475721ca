package hardware

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/ortel-dev/ortel/receivers/cpu"
	"github.com/ortel-dev/ortel/receivers/rapl"
	"github.com/ortel-dev/ortel/receivers/thermal"
)

// TestOpenThisMachine opens every receiver on this machine: cpu, memory,
// process and perf's software events must be available on Linux, and every
// unavailable source must say why.
func TestOpenThisMachine(t *testing.T) {
	reader := metric.NewManualReader()
	mp := metric.NewMeterProvider(metric.WithReader(reader))
	defer mp.Shutdown(context.Background())
	set := Open(context.Background(), Config{MeterProvider: mp, GPUWait: time.Second})
	defer set.Shutdown(context.Background())
	byName := map[string]Status{}
	for _, st := range set.Statuses() {
		byName[st.Source] = st
		if !st.Available && st.Reason == "" {
			t.Errorf("%s is unavailable without a reason", st.Source)
		}
	}
	for _, want := range []string{"cpu", "memory", "process"} {
		if !byName[want].Available {
			t.Errorf("%s should be available on Linux: %+v", want, byName[want])
		}
	}
	// perf_event_open may be forbidden (perf_event_paranoid 3, a seccomp
	// filter): then perf must say why, which the loop above checked.
	perfOK := byName["perf (software events)"].Available
	for _, src := range []string{"rapl", "thermal", "nvml", "perf (hardware counters)", "perf (software events)"} {
		if _, ok := byName[src]; !ok {
			t.Errorf("no status for %s", src)
		}
	}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Logf("collect: %v", err)
	}
	names := map[string]bool{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			names[m.Name] = true
		}
	}
	want := []string{"system.cpu.time", "system.memory.usage", "process.memory.usage"}
	if perfOK {
		want = append(want, "ortel.perf.page_faults")
	}
	for _, want := range want {
		if !names[want] {
			t.Errorf("metric %s not collected (have %d metrics)", want, len(names))
		}
	}
}

// TestSamplerSummarizesThisMachine samples a busy phase and checks the
// summary holds CPU utilization and peak RSS, and explains missing energy.
// It burns CPU until the sampler has ticked three times and this process
// has used 100ms of CPU, however long that takes on a loaded machine: no
// count of samples or share of a core is assumed.
func TestSamplerSummarizesThisMachine(t *testing.T) {
	set := Open(context.Background(), Config{})
	defer set.Shutdown(context.Background())
	s := NewSampler(set, 20*time.Millisecond, -1)
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	cpu0 := ownCPU(t)
	x := 0.0
	for ticks := 0; ticks < 3 || ownCPU(t)-cpu0 < 100*time.Millisecond; {
		for i := 0; i < 10000; i++ {
			x += math.Sqrt(float64(i))
		}
		s.mu.Lock()
		ticks = len(s.series)
		s.mu.Unlock()
	}
	buf := make([]byte, 32<<20) // touch 32 MiB: peak RSS must see it
	for i := range buf {
		buf[i] = byte(i)
	}
	h := s.Stop(100)
	if h == nil {
		t.Fatal("no summary")
	}
	if h.Inferences != 100 || h.WallS <= 0 {
		t.Errorf("inferences %d, wall %.2fs", h.Inferences, h.WallS)
	}
	if h.CPU == nil || h.CPU.UtilizationMean <= 0 || h.CPU.UtilizationMax < h.CPU.UtilizationMean {
		t.Errorf("cpu = %+v", h.CPU)
	}
	if h.Process == nil || h.Process.PeakRSSBytes < 32<<20 || h.Process.CPUUtilizationMean <= 0 {
		t.Errorf("process = %+v (x=%v, buf=%d)", h.Process, x, buf[len(buf)-1])
	}
	if len(h.Series) < 4 {
		t.Errorf("series has %d samples, want the 3 ticks seen and the final one", len(h.Series))
	}
	if len(h.Energy) == 0 && !strings.Contains(h.EnergyUnavailable, "rapl") {
		t.Errorf("no energy and no reason naming rapl: %q", h.EnergyUnavailable)
	}
	if len(h.Sources) == 0 {
		t.Error("sources not listed")
	}
}

// ownCPU is the CPU time this process has used.
func ownCPU(t *testing.T) time.Duration {
	t.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// writeZone writes one RAPL zone of a fixture sysfs tree.
func writeZone(t *testing.T, root, dir, name string, uj uint64) {
	t.Helper()
	d := filepath.Join(root, "sys/class/powercap", dir)
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
	for file, v := range map[string]string{"name": name, "energy_uj": strconv.FormatUint(uj, 10), "max_energy_range_uj": "262143328850", "enabled": "1"} {
		if err := os.WriteFile(filepath.Join(d, file), []byte(v+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestSamplerEnergyPerInference uses a fixture RAPL tree: the package uses
// 50 J and its dram subzone 5 J over the phase; 10 inferences make 5 J and
// 0.5 J per inference, and the subzone keeps its parent.
func TestSamplerEnergyPerInference(t *testing.T) {
	root := t.TempDir()
	writeZone(t, root, "intel-rapl:0", "package-0", 1_000_000_000)
	writeZone(t, root, "intel-rapl:0:0", "dram", 2_000_000)
	r, err := rapl.New(rapl.WithRoot(root))
	if err != nil {
		t.Fatal(err)
	}
	set := &Set{RAPL: r, statuses: []Status{{Source: "rapl", Available: true}}}
	defer set.Shutdown(context.Background())
	s := NewSampler(set, time.Hour, -1)
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	writeZone(t, root, "intel-rapl:0", "package-0", 1_050_000_000)
	writeZone(t, root, "intel-rapl:0:0", "dram", 7_000_000)
	h := s.Stop(10)
	if len(h.Energy) != 2 || h.EnergyUnavailable != "" {
		t.Fatalf("energy = %+v (unavailable %q)", h.Energy, h.EnergyUnavailable)
	}
	want := map[string][3]float64{"package-0": {50, 5, 0}, "package-0/dram": {5, 0.5, 1}}
	for _, e := range h.Energy {
		w, ok := want[e.Name]
		if !ok {
			t.Fatalf("unexpected zone %q", e.Name)
		}
		if math.Abs(e.Joules-w[0]) > 1e-9 || math.Abs(e.JoulesPerInference-w[1]) > 1e-9 {
			t.Errorf("%s: %v J, %v J/inference, want %v and %v", e.Name, e.Joules, e.JoulesPerInference, w[0], w[1])
		}
		if (e.Parent != "") != (w[2] == 1) {
			t.Errorf("%s: parent %q", e.Name, e.Parent)
		}
		if e.Source != "rapl" || e.Type == "" || e.PowerMeanW <= 0 {
			t.Errorf("%s: %+v", e.Name, e)
		}
	}
}

func TestSamplerStopWithoutStart(t *testing.T) {
	s := NewSampler(&Set{}, 0, 0)
	if h := s.Stop(3); h != nil {
		t.Errorf("Stop without Start = %+v, want nil", h)
	}
}

// TestSamplerReportsReadErrors: a counter that breaks during the phase is
// reported in the summary, once, instead of vanishing.
func TestSamplerReportsReadErrors(t *testing.T) {
	root := t.TempDir()
	writeZone(t, root, "intel-rapl:0", "package-0", 1_000_000_000)
	r, err := rapl.New(rapl.WithRoot(root))
	if err != nil {
		t.Fatal(err)
	}
	set := &Set{RAPL: r, statuses: []Status{{Source: "rapl", Available: true}}}
	defer set.Shutdown(context.Background())
	s := NewSampler(set, time.Hour, -1)
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "sys/class/powercap/intel-rapl:0/energy_uj"), []byte("garbage\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h := s.Stop(1)
	if len(h.ReadErrors) != 1 || !strings.HasPrefix(h.ReadErrors[0], "rapl: ") {
		t.Fatalf("read errors = %q, want one naming rapl", h.ReadErrors)
	}
}

// copyTree copies the fixture tree src into dst.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestOpenFixtureHost opens every receiver on a host root built from the
// receivers' fixtures, once with a RAPL zone and a thermal zone and once
// without: the sensors' statuses and hw.* metrics follow the tree, not the
// machine the test runs on. (NVML, which has no root, is left out of the
// comparison.)
func TestOpenFixtureHost(t *testing.T) {
	for _, sensors := range []bool{true, false} {
		t.Run(fmt.Sprintf("sensors=%v", sensors), func(t *testing.T) {
			root := t.TempDir()
			copyTree(t, "../../receivers/cpu/testdata/xeon4", root)
			copyTree(t, "../../receivers/memory/testdata/swap", root)
			if sensors {
				writeZone(t, root, "intel-rapl:0", "package-0", 1_000_000_000)
				zone := filepath.Join(root, "sys/class/thermal/thermal_zone0")
				if err := os.MkdirAll(zone, 0o755); err != nil {
					t.Fatal(err)
				}
				for file, v := range map[string]string{"type": "x86_pkg_temp", "temp": "45000"} {
					if err := os.WriteFile(filepath.Join(zone, file), []byte(v+"\n"), 0o644); err != nil {
						t.Fatal(err)
					}
				}
			}
			reader := metric.NewManualReader()
			mp := metric.NewMeterProvider(metric.WithReader(reader))
			defer mp.Shutdown(context.Background())
			set := Open(context.Background(), Config{MeterProvider: mp, Root: root})
			defer set.Shutdown(context.Background())

			byName := map[string]Status{}
			for _, st := range set.Statuses() {
				byName[st.Source] = st
				if !st.Available && st.Reason == "" {
					t.Errorf("%s is unavailable without a reason", st.Source)
				}
			}
			for _, want := range []string{"cpu", "memory"} {
				if !byName[want].Available {
					t.Errorf("%s unavailable on the fixture host: %+v", want, byName[want])
				}
			}
			for _, src := range []string{"rapl", "thermal"} {
				if byName[src].Available != sensors {
					t.Errorf("%s available %v, want %v: %+v", src, byName[src].Available, sensors, byName[src])
				}
			}

			var rm metricdata.ResourceMetrics
			if err := reader.Collect(context.Background(), &rm); err != nil {
				t.Logf("collect: %v", err)
			}
			scopes := map[string][]string{}
			for _, sm := range rm.ScopeMetrics {
				for _, m := range sm.Metrics {
					scopes[sm.Scope.Name] = append(scopes[sm.Scope.Name], m.Name)
				}
			}
			if got := scopes[rapl.ScopeName]; sensors != slices.Contains(got, "hw.energy") || !sensors && len(got) > 0 {
				t.Errorf("rapl metrics %v, sensors %v", got, sensors)
			}
			if got := scopes[thermal.ScopeName]; sensors != slices.Contains(got, "hw.temperature") || !sensors && len(got) > 0 {
				t.Errorf("thermal metrics %v, sensors %v", got, sensors)
			}
			if got := scopes[cpu.ScopeName]; !slices.Contains(got, "system.cpu.time") {
				t.Errorf("cpu metrics %v, want system.cpu.time from the fixture", got)
			}
		})
	}
}

// TestOpenNoSelf: with NoSelf and no PIDs the process receiver starts
// empty (ortel agent --discover fills it) and says so; this process is not
// read.
func TestOpenNoSelf(t *testing.T) {
	reader := metric.NewManualReader()
	mp := metric.NewMeterProvider(metric.WithReader(reader))
	defer mp.Shutdown(context.Background())
	set := Open(context.Background(), Config{MeterProvider: mp, NoSelf: true})
	defer set.Shutdown(context.Background())
	if set.Process == nil {
		t.Fatal("process receiver not started")
	}
	if got := set.Process.PIDs(); len(got) != 0 {
		t.Errorf("watching %v, want nothing", got)
	}
	for _, st := range set.Statuses() {
		if st.Source == "process" && !strings.Contains(st.Reason, "the processes found later") {
			t.Errorf("process status %q does not say its processes come later", st.Reason)
		}
	}
	if err := set.Process.Watch(os.Getpid()); err != nil {
		t.Fatal(err)
	}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Logf("collect: %v", err)
	}
	found := false
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			found = found || m.Name == "process.memory.usage"
		}
	}
	if !found {
		t.Error("no process.memory.usage after Watch")
	}
}
