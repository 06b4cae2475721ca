package rapl

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/ortel-dev/ortel/receivers"
	"github.com/ortel-dev/ortel/receivers/internal/lifecycle"
	"github.com/ortel-dev/ortel/receivers/internal/procfs"
	"github.com/ortel-dev/ortel/semconv"
)

// opener opens a file read-only and returns its descriptor.
type opener = procfs.OpenFunc

// powercapDir is where the kernel lists the powercap zones, under the root.
const powercapDir = "sys/class/powercap"

// Receiver observes the energy counters of the RAPL powercap zones.
type Receiver struct {
	cb       lifecycle.Callback // its lock guards the fields below
	cfg      config
	zones    []Zone  // every zone found, readable or not
	readable []*zone // the zones being read
	failures procfs.Failures
	energy   metric.Float64ObservableCounter
	power    metric.Float64ObservableGauge
}

// zone is one readable zone with its open energy_uj file.
type zone struct {
	info  Zone
	file  *procfs.File
	count counter
	attrs []metric.ObserveOption

	// the previous collection, for hw.power
	seen      bool
	seenTotal uint64
	seenAt    time.Time
}

// New finds the RAPL zones under the root, opens their energy counters and
// registers hw.energy and hw.power for them. When no zone can be read (no
// powercap folder, as in most virtual machines; no RAPL zone; energy_uj
// readable only by root) it registers nothing and returns an error
// matching receivers.ErrUnsupported that says why. Zones() lists every
// zone found, with the reason for each one that is not read.
func New(opts ...Option) (*Receiver, error) {
	cfg := newConfig(opts)
	sel, err := cfg.Resolve("rapl", Metrics())
	if err != nil {
		return nil, err
	}
	r := &Receiver{cfg: cfg}
	if err := r.discover(); err != nil {
		return nil, err
	}
	if err := r.register(sel); err != nil {
		r.close()
		return nil, err
	}
	return r, nil
}

// register creates the instruments that are on and registers the callback.
func (r *Receiver) register(sel procfs.Selection) error {
	in := lifecycle.NewInstruments(r.cfg.Meter(ScopeName, Version()), sel)
	lifecycle.Create(in, semconv.HwEnergyName, &r.energy, semconv.NewHwEnergy)
	lifecycle.Create(in, semconv.HwPowerName, &r.power, semconv.NewHwPower)
	return r.cb.RegisterLocked("rapl", in, r.observe)
}

// discover lists the zones and opens the readable ones.
func (r *Receiver) discover() error {
	dir := filepath.Join(r.cfg.Root, powercapDir)
	entries, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return receivers.Unsupported("rapl", "the kernel exposes no RAPL energy counters (the intel_rapl driver is not loaded, or this is a virtual machine)", err)
		}
		return receivers.Unsupported("rapl", fmt.Sprintf("cannot list %s", dir), err)
	}
	var ids []string
	for _, e := range entries {
		if _, ok := zoneNumbers(e.Name()); ok {
			ids = append(ids, e.Name())
		}
	}
	if len(ids) == 0 {
		return receivers.Unsupported("rapl", fmt.Sprintf("no RAPL zone (intel-rapl:N) under %s (the intel_rapl driver found no counters, or this is a virtual machine)", dir), nil)
	}
	slices.SortFunc(ids, compareZones)

	names := map[string]string{} // zone ID -> hw.name, for subzone names
	var errs []error
	for _, id := range ids {
		z, info := r.probe(filepath.Join(dir, id), id, names)
		r.zones = append(r.zones, info)
		if info.Err != nil {
			errs = append(errs, info.Err)
			continue
		}
		names[id] = info.Name
		r.readable = append(r.readable, z)
	}
	if len(r.readable) == 0 {
		// Said once when every zone fails the same way (energy_uj
		// readable only by root, typically), else every zone's error.
		reason, cause := procfs.Summarize(errs, fmt.Sprintf("none of the %d RAPL zones can be read", len(errs)))
		return receivers.Unsupported("rapl", reason, cause)
	}
	return nil
}

// probe reads a zone's name and range and opens its energy counter.
func (r *Receiver) probe(dir, id string, names map[string]string) (*zone, Zone) {
	info := Zone{ID: id, Parent: parentID(id)}
	source := "rapl zone " + id
	unsupported := func(reason string, err error) (*zone, Zone) {
		info.Err = receivers.Unsupported(source, reason, err)
		return nil, info
	}

	b, err := r.readOnce(filepath.Join(dir, "name"))
	if err != nil {
		return unsupported("its name file cannot be read", err)
	}
	name := strings.TrimSpace(string(b))
	kind, ok := zoneKind(name)
	if !ok {
		return unsupported(fmt.Sprintf("unknown RAPL domain %q (known: package-N, core, uncore, dram, psys)", name), nil)
	}
	info.Type = kind.Value.AsString()
	info.Name = name
	if p, ok := names[info.Parent]; ok {
		info.Name = p + "/" + name
	}

	rangePath := filepath.Join(dir, "max_energy_range_uj")
	if b, err = r.readOnce(rangePath); err != nil {
		return unsupported("max_energy_range_uj cannot be read, so counter wraps cannot be handled", err)
	}
	maxRange, ok := procfs.ParseUint(trim(b))
	if !ok || maxRange == 0 {
		return unsupported(fmt.Sprintf("%s holds %q, not a positive number", rangePath, trim(b)), nil)
	}
	info.MaxJoules = float64(maxRange) / 1e6

	energyPath := filepath.Join(dir, "energy_uj")
	f, err := procfs.OpenFile(energyPath, r.cfg.open)
	if err != nil {
		if errors.Is(err, fs.ErrPermission) {
			// The same reason for every zone (the path is in err), so New
			// can say it once when all zones are refused.
			all := filepath.Join(filepath.Dir(dir), zonePrefix+"*", "energy_uj")
			return unsupported(fmt.Sprintf("energy_uj is readable only by root (Linux 5.10 and later, since CVE-2020-8694): run as root, or make it readable with: chmod o+r %s", all), err)
		}
		return unsupported("energy_uj cannot be opened", err)
	}
	z := &zone{info: info, file: f, count: counter{max: maxRange}}
	raw, err := z.read()
	if err != nil {
		f.Close()
		return unsupported("energy_uj cannot be read", err)
	}
	z.count.last = raw
	attrs := []attribute.KeyValue{semconv.HwID(id), kind, semconv.HwName(info.Name)}
	if info.Parent != "" {
		attrs = append(attrs, semconv.HwParent(info.Parent))
	}
	z.attrs = []metric.ObserveOption{metric.WithAttributeSet(attribute.NewSet(attrs...))}
	return z, info
}

// readOnce reads a small file through the configured opener.
func (r *Receiver) readOnce(path string) ([]byte, error) {
	return procfs.ReadOnce(path, r.cfg.open)
}

func trim(b []byte) []byte { return bytes.TrimSpace(b) }

// read reads the raw counter, in µJ.
func (z *zone) read() (uint64, error) {
	b, err := z.file.Read()
	if err != nil {
		return 0, err
	}
	v, ok := procfs.ParseUint(trim(b))
	if !ok {
		return 0, fmt.Errorf("%s holds %q, not a number", z.file.Path(), trim(b))
	}
	if v > z.count.max {
		return 0, fmt.Errorf("%s holds %d, above its range max_energy_range_uj %d", z.file.Path(), v, z.count.max)
	}
	return v, nil
}

// update reads a zone and advances its running total. Callers hold
// r.cb's lock.
func (r *Receiver) update(i int, z *zone) bool {
	raw, err := z.read()
	if err != nil {
		r.failures.Fail(i, fmt.Errorf("rapl: zone %s (%s): %w", z.info.ID, z.info.Name, err))
		return false
	}
	r.failures.OK(i)
	z.count.advance(raw)
	return true
}

// observe is the receiver's callback; it runs under r.cb's lock, and not
// after Shutdown (RegisterLocked).
func (r *Receiver) observe(ctx context.Context, o metric.Observer) error {
	for i, z := range r.readable {
		if ctx.Err() != nil {
			break
		}
		if !r.update(i, z) {
			continue
		}
		now := r.cfg.now()
		if r.energy != nil {
			o.ObserveFloat64(r.energy, float64(z.count.total)/1e6, z.attrs...)
		}
		if z.seen && r.power != nil {
			if dt := now.Sub(z.seenAt).Seconds(); dt > 0 {
				o.ObserveFloat64(r.power, float64(z.count.total-z.seenTotal)/1e6/dt, z.attrs...)
			}
		}
		z.seen, z.seenTotal, z.seenAt = true, z.count.total, now
	}
	return errors.Join(r.failures.Err(), ctx.Err())
}

// Zones returns every zone found at construction, readable or not, in
// zone order (intel-rapl:0, intel-rapl:0:0, ..., intel-rapl:1, ...).
func (r *Receiver) Zones() []Zone {
	return slices.Clone(r.zones)
}

// Snapshot reads every readable zone now and returns the energy each has
// consumed since New, for callers that need the numbers directly, such as
// joules per inference (read before and after, subtract, divide by the
// runs). It also keeps the running totals current, so calling it often is
// as good as a collection for catching counter wraps. Zones that fail to
// read are left out and their failures returned joined.
func (r *Receiver) Snapshot() ([]Energy, error) {
	r.cb.Lock()
	defer r.cb.Unlock()
	out := make([]Energy, 0, len(r.readable))
	for i, z := range r.readable {
		if !r.update(i, z) {
			continue
		}
		out = append(out, Energy{ID: z.info.ID, Name: z.info.Name, Type: z.info.Type, Parent: z.info.Parent, Joules: float64(z.count.total) / 1e6})
	}
	return out, r.failures.Err()
}

// Shutdown unregisters the callback and closes the counters. It is safe to
// call more than once.
func (r *Receiver) Shutdown(context.Context) error {
	return r.cb.Shutdown("rapl", r.close)
}

// close closes the counters. Callers hold r.cb's lock, or are New, which
// has not shared r yet.
func (r *Receiver) close() error {
	for _, z := range r.readable {
		z.file.Close()
	}
	r.readable = nil
	return nil
}
