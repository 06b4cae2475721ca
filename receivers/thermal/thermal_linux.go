package thermal

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/ortel-dev/ortel/receivers"
	"github.com/ortel-dev/ortel/receivers/internal/lifecycle"
	"github.com/ortel-dev/ortel/receivers/internal/procfs"
	"github.com/ortel-dev/ortel/semconv"
)

// opener opens a file read-only and returns its descriptor.
type opener = procfs.OpenFunc

// The folders the kernel lists thermal zones and hwmon chips in, under the
// root.
const (
	thermalDir = "sys/class/thermal"
	hwmonDir   = "sys/class/hwmon"
)

// Receiver observes the temperature sensors of thermal zones and hwmon
// chips.
type Receiver struct {
	cb       lifecycle.Callback // its lock guards the fields below
	cfg      config
	sensors  []Sensor  // every sensor found, readable or not
	live     []*sensor // the sensors being read
	failures procfs.Failures
	temp     metric.Float64ObservableGauge
	limit    metric.Float64ObservableGauge
}

// sensor is one readable sensor with its open temperature file.
type sensor struct {
	info   Sensor
	file   *procfs.File
	attrs  []metric.ObserveOption
	limits []observedLimit
}

type observedLimit struct {
	celsius float64
	attrs   []metric.ObserveOption
}

// New finds the thermal zones (root/sys/class/thermal/thermal_zone*) and
// the hwmon temperature inputs (root/sys/class/hwmon/hwmon*/temp*_input),
// opens them and registers hw.temperature and hw.temperature.limit. When
// there is no sensor, or none can be read, it registers nothing and
// returns an error matching receivers.ErrUnsupported that says why.
// Sensors() lists every sensor found, with the reason for each one that
// is not read. Sensors that appear later (hot-plugged drives) are not
// picked up.
func New(opts ...Option) (*Receiver, error) {
	cfg := newConfig(opts)
	sel, err := cfg.Resolve("thermal", Metrics())
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
	lifecycle.Create(in, semconv.HwTemperatureName, &r.temp, semconv.NewHwTemperature)
	lifecycle.Create(in, semconv.HwTemperatureLimitName, &r.limit, semconv.NewHwTemperatureLimit)
	return r.cb.RegisterLocked("thermal", in, r.observe)
}

func (r *Receiver) discover() error {
	zones := filepath.Join(r.cfg.Root, thermalDir)
	hwmon := filepath.Join(r.cfg.Root, hwmonDir)
	r.discoverZones(zones)
	r.discoverHwmon(hwmon)
	if len(r.sensors) == 0 {
		return receivers.Unsupported("thermal", fmt.Sprintf("no thermal zone under %s and no hwmon temperature sensor under %s (common in virtual machines)", zones, hwmon), nil)
	}
	if len(r.live) > 0 {
		return nil
	}
	// Said once when every sensor fails the same way (no permission,
	// say), else every sensor's error.
	errs := make([]error, len(r.sensors))
	for i, s := range r.sensors {
		errs[i] = s.Err
	}
	reason := fmt.Sprintf("none of the %d temperature sensors can be read", len(r.sensors))
	if first := procfs.CommonReason(errs); first != nil {
		return receivers.Unsupported("thermal", reason+": "+first.Reason, first.Err)
	}
	return receivers.Unsupported("thermal", reason, errors.Join(errs...))
}

// entries lists the names in dir that start with prefix and a number, in
// number order. A missing folder has none.
func entries(dir, prefix string) []string {
	list, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var names []string
	for _, e := range list {
		if _, _, ok := indexed(e.Name(), prefix); ok {
			names = append(names, e.Name())
		}
	}
	slices.SortFunc(names, byNumber(prefix))
	return names
}

// discoverZones adds the thermal zones: thermal_zoneN/{type,temp} and the
// trip points trip_point_K_{type,temp}.
func (r *Receiver) discoverZones(dir string) {
	for _, id := range entries(dir, "thermal_zone") {
		zdir := filepath.Join(dir, id)
		name := id
		if b, err := r.readOnce(filepath.Join(zdir, "type")); err == nil && len(b) > 0 {
			name = string(b)
		}
		info := Sensor{ID: id, Name: name}
		var limits []found
		for _, f := range entries(zdir, "trip_point_") {
			k, rest, _ := indexed(f, "trip_point_")
			if rest != "_type" {
				continue
			}
			typ, err := r.readOnce(filepath.Join(zdir, f))
			if err != nil {
				continue
			}
			for _, l := range tripLimits {
				if string(typ) == l.key {
					limits = append(limits, found{l, filepath.Join(zdir, fmt.Sprintf("trip_point_%d_temp", k))})
				}
			}
		}
		r.add(info, filepath.Join(zdir, "temp"), limits)
	}
}

// discoverHwmon adds the temperature inputs of the hwmon chips:
// hwmonN/name and hwmonN/tempK_{input,label,max,crit,emergency,min,lcrit}.
func (r *Receiver) discoverHwmon(dir string) {
	for _, chip := range entries(dir, "hwmon") {
		cdir := filepath.Join(dir, chip)
		chipName := chip
		if b, err := r.readOnce(filepath.Join(cdir, "name")); err == nil && len(b) > 0 {
			chipName = string(b)
		}
		for _, f := range entries(cdir, "temp") {
			k, rest, _ := indexed(f, "temp")
			if rest != "_input" {
				continue
			}
			prefix := filepath.Join(cdir, fmt.Sprintf("temp%d_", k))
			info := Sensor{ID: fmt.Sprintf("%s/temp%d", chip, k), Name: fmt.Sprintf("%s temp%d", chipName, k)}
			if b, err := r.readOnce(prefix + "label"); err == nil && len(b) > 0 {
				info.Name = chipName + " " + string(b)
			}
			var limits []found
			for _, l := range hwmonLimits {
				limits = append(limits, found{l, prefix + l.key})
			}
			r.add(info, prefix+"input", limits)
		}
	}
}

// found is a limit file that may exist.
type found struct {
	limit
	path string
}

// add opens a sensor's temperature file, reads its limits and adds it to
// the sensors, readable or not.
func (r *Receiver) add(info Sensor, tempPath string, limits []found) {
	unsupported := func(reason string, err error) {
		info.Err = receivers.Unsupported("thermal sensor "+info.ID, reason, err)
		r.sensors = append(r.sensors, info)
	}
	f, err := procfs.OpenFile(tempPath, r.cfg.open)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			unsupported("it has no temperature file", err)
		} else {
			unsupported("its temperature file cannot be opened", err)
		}
		return
	}
	s := &sensor{info: info, file: f}
	// A read error now may pass (a drive asleep, a Wi-Fi card down): keep
	// the sensor and report the error at collection. Garbage will not pass.
	if b, err := f.Read(); err == nil {
		if _, ok := procfs.ParseInt(trim(b)); !ok {
			f.Close()
			unsupported(fmt.Sprintf("%s holds %q, not a temperature in millidegrees", tempPath, trim(b)), nil)
			return
		}
	}

	base := []attribute.KeyValue{semconv.HwID(info.ID), semconv.HwName(info.Name)}
	s.attrs = []metric.ObserveOption{metric.WithAttributeSet(attribute.NewSet(base...))}
	chosen := map[string]int64{}
	var order []limit
	for _, l := range limits {
		b, err := r.readOnce(l.path)
		if err != nil {
			continue
		}
		milli, ok := procfs.ParseInt(b)
		if !ok || !plausible(milli, l.high) {
			continue
		}
		key := l.kind.Value.AsString()
		prev, seen := chosen[key]
		switch {
		case !seen:
			order = append(order, l.limit)
		case l.high && milli >= prev, !l.high && milli <= prev:
			continue // the limit reached first counts
		}
		chosen[key] = milli
	}
	if len(chosen) > 0 {
		s.info.Limits = map[string]float64{}
	}
	for _, l := range order {
		key := l.kind.Value.AsString()
		c := float64(chosen[key]) / 1000
		s.info.Limits[key] = c
		s.limits = append(s.limits, observedLimit{c, []metric.ObserveOption{metric.WithAttributeSet(attribute.NewSet(append(slices.Clone(base), l.kind)...))}})
	}
	r.sensors = append(r.sensors, s.info)
	r.live = append(r.live, s)
}

// readOnce reads a small file through the configured opener, trimmed.
func (r *Receiver) readOnce(path string) ([]byte, error) {
	b, err := procfs.ReadOnce(path, r.cfg.open)
	return trim(b), err
}

func trim(b []byte) []byte { return bytes.TrimSpace(b) }

// read reads a sensor's temperature in degrees Celsius. Callers hold
// r.cb's lock.
func (r *Receiver) read(i int, s *sensor) (float64, bool) {
	b, err := s.file.Read()
	if err == nil {
		milli, ok := procfs.ParseInt(trim(b))
		if ok {
			r.failures.OK(i)
			return float64(milli) / 1000, true
		}
		err = fmt.Errorf("%s holds %q, not a temperature in millidegrees", s.file.Path(), trim(b))
	}
	r.failures.Fail(i, fmt.Errorf("thermal: sensor %s (%s): %w", s.info.ID, s.info.Name, err))
	return 0, false
}

// observe is the receiver's callback; it runs under r.cb's lock, and not
// after Shutdown (RegisterLocked).
func (r *Receiver) observe(ctx context.Context, o metric.Observer) error {
	for i, s := range r.live {
		if ctx.Err() != nil {
			break
		}
		if r.limit != nil {
			for _, l := range s.limits {
				o.ObserveFloat64(r.limit, l.celsius, l.attrs...)
			}
		}
		if r.temp == nil {
			continue
		}
		if c, ok := r.read(i, s); ok {
			o.ObserveFloat64(r.temp, c, s.attrs...)
		}
	}
	return errors.Join(r.failures.Err(), ctx.Err())
}

// Sensors returns every sensor found at construction, readable or not:
// thermal zones first, then hwmon inputs, each in number order.
func (r *Receiver) Sensors() []Sensor {
	return slices.Clone(r.sensors)
}

// Snapshot reads every readable sensor now. Sensors that fail to read are
// left out and their failures returned joined (each failure once).
func (r *Receiver) Snapshot() ([]Reading, error) {
	r.cb.Lock()
	defer r.cb.Unlock()
	out := make([]Reading, 0, len(r.live))
	for i, s := range r.live {
		if c, ok := r.read(i, s); ok {
			out = append(out, Reading{ID: s.info.ID, Name: s.info.Name, Celsius: c})
		}
	}
	return out, r.failures.Err()
}

// Shutdown unregisters the callback and closes the sensor files. It is
// safe to call more than once.
func (r *Receiver) Shutdown(context.Context) error {
	return r.cb.Shutdown("thermal", r.close)
}

// close closes the sensor files. Callers hold r.cb's lock, or are New,
// which has not shared r yet.
func (r *Receiver) close() error {
	for _, s := range r.live {
		s.file.Close()
	}
	r.live = nil
	return nil
}
