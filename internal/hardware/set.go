package hardware

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.opentelemetry.io/otel/metric"

	"github.com/ortel-dev/ortel/internal/configerr"
	"github.com/ortel-dev/ortel/receivers"
	"github.com/ortel-dev/ortel/receivers/cpu"
	"github.com/ortel-dev/ortel/receivers/memory"
	"github.com/ortel-dev/ortel/receivers/nvml"
	"github.com/ortel-dev/ortel/receivers/perf"
	"github.com/ortel-dev/ortel/receivers/process"
	"github.com/ortel-dev/ortel/receivers/rapl"
	"github.com/ortel-dev/ortel/receivers/thermal"
)

// Status says whether one source is collecting, and why not.
type Status struct {
	Source    string `json:"source"` // "cpu", "perf (software events)", ...
	Available bool   `json:"available"`
	Reason    string `json:"reason"`           // why not, in plain words; what it reads when available
	Detail    string `json:"detail,omitempty"` // the underlying error, when there is one
}

// Config chooses what a Set watches.
type Config struct {
	// MeterProvider receives the readings. nil: the global provider.
	MeterProvider metric.MeterProvider
	// PIDs are the processes the process, perf and nvml receivers watch
	// (default: this process).
	PIDs []int
	// NoSelf starts the process receiver without this process when PIDs
	// is empty: ortel agent --discover adds processes to it (Watch) as it
	// finds them. The nvml receiver then reports every process on the
	// GPUs, each with its pod (per-pod GPU attribution, read under Root);
	// the perf receiver keeps its default.
	NoSelf bool
	// GPUWait bounds how long Open waits for NVML to find the GPUs. NVML
	// initializes in the background; 0 does not wait (the agent's start
	// path), and the GPUs join when found.
	GPUWait time.Duration
	// Root is the host root under which the /proc and /sys readers (cpu,
	// memory, process, perf, rapl, thermal) read. "": the receivers'
	// default, $ORTEL_HOST_ROOT or else "/". Tests point it at fixture
	// trees, so what a machine has (RAPL, thermal zones) is up to them.
	Root string
}

// Set is the receivers that could start.
type Set struct {
	CPU     *cpu.Receiver
	Memory  *memory.Receiver
	Process *process.Receiver
	Perf    *perf.Receiver
	RAPL    *rapl.Receiver
	Thermal *thermal.Receiver
	NVML    *nvml.Receiver

	statuses []Status
	pids     []int
}

// Validate checks c before anything is opened: the PIDs are process ids
// (above 0) and GPUWait is not negative. Its errors name the fields as
// {PIDs} and {GPUWait} (configerr).
func (c Config) Validate() error {
	for _, pid := range c.PIDs {
		if pid <= 0 {
			return configerr.New("hardware", "{PIDs} %d: want a process id, a whole number above 0", pid)
		}
	}
	if c.GPUWait < 0 {
		return configerr.New("hardware", "{GPUWait} %s: want 0 (do not wait) or more", c.GPUWait)
	}
	return nil
}

// Open starts every receiver it can. A source that is absent is not an
// error: it registers nothing and its Status says why.
func Open(ctx context.Context, o Config) *Set {
	s := &Set{pids: o.PIDs}
	mp := o.MeterProvider
	var err error

	var cpuOpts []cpu.Option
	var memOpts []memory.Option
	procOpts := []process.Option{}
	perfOpts := []perf.Option{}
	raplOpts := []rapl.Option{}
	thermOpts := []thermal.Option{}
	nvmlOpts := []nvml.Option{}
	if mp != nil {
		cpuOpts = append(cpuOpts, cpu.WithMeterProvider(mp))
		memOpts = append(memOpts, memory.WithMeterProvider(mp))
		procOpts = append(procOpts, process.WithMeterProvider(mp))
		perfOpts = append(perfOpts, perf.WithMeterProvider(mp))
		raplOpts = append(raplOpts, rapl.WithMeterProvider(mp))
		thermOpts = append(thermOpts, thermal.WithMeterProvider(mp))
		nvmlOpts = append(nvmlOpts, nvml.WithMeterProvider(mp))
	}
	if o.Root != "" {
		cpuOpts = append(cpuOpts, cpu.WithRoot(o.Root))
		memOpts = append(memOpts, memory.WithRoot(o.Root))
		procOpts = append(procOpts, process.WithRoot(o.Root))
		perfOpts = append(perfOpts, perf.WithRoot(o.Root))
		raplOpts = append(raplOpts, rapl.WithRoot(o.Root))
		thermOpts = append(thermOpts, thermal.WithRoot(o.Root))
	}
	if o.NoSelf {
		procOpts = append(procOpts, process.WithoutSelf())
		nvmlOpts = append(nvmlOpts, nvml.WithAllProcesses())
		if o.Root != "" {
			nvmlOpts = append(nvmlOpts, nvml.WithRoot(o.Root))
		}
	}
	if len(o.PIDs) > 0 {
		procOpts = append(procOpts, process.WithPIDs(o.PIDs...))
		perfOpts = append(perfOpts, perf.WithPIDs(o.PIDs...))
		nvmlOpts = append(nvmlOpts, nvml.WithPIDs(o.PIDs...))
	}

	// A receiver that fails to start is left nil: started() skips it.
	if s.CPU, err = cpu.New(cpuOpts...); err != nil {
		s.CPU = nil
	}
	s.add("cpu", err, "CPU time, utilization, frequency, load average")
	if s.Memory, err = memory.New(memOpts...); err != nil {
		s.Memory = nil
	}
	s.add("memory", err, "memory and swap usage, paging")
	if s.Process, err = process.New(procOpts...); err != nil {
		s.Process = nil
	}
	s.add("process", err, fmt.Sprintf("CPU, memory, threads, file descriptors, disk I/O of %s", pidWords(o.PIDs, o.NoSelf)))

	s.Perf, err = perf.New(perfOpts...)
	if err != nil {
		s.Perf = nil
		s.add("perf ("+perf.HardwarePart+")", err, "")
		s.add("perf ("+perf.SoftwarePart+")", err, "")
	} else {
		for _, p := range s.Perf.Parts() {
			s.add("perf ("+p.Name+")", p.Err, eventWords(p))
		}
	}

	s.RAPL, err = rapl.New(raplOpts...)
	if err == nil {
		n := 0
		for _, z := range s.RAPL.Zones() {
			if z.Err == nil {
				n++
			}
		}
		s.add("rapl", nil, fmt.Sprintf("energy of %d powercap zones", n))
	} else {
		s.RAPL = nil
		s.add("rapl", err, "")
	}

	s.Thermal, err = thermal.New(thermOpts...)
	if err == nil {
		s.add("thermal", nil, fmt.Sprintf("%d temperature sensors", len(s.Thermal.Sensors())))
	} else {
		s.Thermal = nil
		s.add("thermal", err, "")
	}

	s.NVML, err = nvml.New(nvmlOpts...)
	if err == nil && o.GPUWait > 0 {
		wctx, cancel := context.WithTimeout(ctx, o.GPUWait)
		err = s.NVML.Ready(wctx)
		cancel()
		if err != nil && errors.Is(err, receivers.ErrUnsupported) {
			s.NVML.Shutdown(ctx)
		} else if err != nil {
			// Still initializing: keep it, the GPUs join when found.
			s.add("nvml", nil, "NVIDIA GPUs: still initializing")
			return s
		}
	}
	if err == nil {
		s.add("nvml", nil, gpuWords(s.NVML))
	} else {
		s.NVML = nil
		s.add("nvml", err, "")
	}
	return s
}

// add records a source's status; a nil receiver field is set by the caller.
func (s *Set) add(source string, err error, what string) {
	if err == nil {
		s.statuses = append(s.statuses, Status{Source: source, Available: true, Reason: what})
		return
	}
	st := Status{Source: source, Reason: err.Error()}
	var ue *receivers.UnsupportedError
	if errors.As(err, &ue) {
		st.Reason = ue.Reason
		if ue.Err != nil {
			st.Detail = ue.Err.Error()
		}
	}
	s.statuses = append(s.statuses, st)
}

// Statuses lists every source, available or not, in a fixed order.
func (s *Set) Statuses() []Status { return append([]Status(nil), s.statuses...) }

// Shutdown stops every receiver that started.
func (s *Set) Shutdown(ctx context.Context) error {
	var errs []error
	for _, r := range s.started() {
		errs = append(errs, r.Shutdown(ctx))
	}
	return errors.Join(errs...)
}

// started lists the receivers that are running.
func (s *Set) started() []receivers.Receiver {
	var rs []receivers.Receiver
	add := func(ok bool, r receivers.Receiver) {
		if ok {
			rs = append(rs, r)
		}
	}
	add(s.CPU != nil, s.CPU)
	add(s.Memory != nil, s.Memory)
	add(s.Process != nil, s.Process)
	add(s.Perf != nil, s.Perf)
	add(s.RAPL != nil, s.RAPL)
	add(s.Thermal != nil, s.Thermal)
	add(s.NVML != nil, s.NVML)
	return rs
}

func pidWords(pids []int, noSelf bool) string {
	more := ""
	if noSelf {
		more = " and the processes found later"
	}
	switch len(pids) {
	case 0:
		if noSelf {
			return "the processes found later"
		}
		return "this process"
	case 1:
		return fmt.Sprintf("process %d%s", pids[0], more)
	}
	return fmt.Sprintf("%d processes%s", len(pids), more)
}

func eventWords(p perf.Part) string {
	s := fmt.Sprintf("%d events", len(p.Events))
	if p.UserOnly {
		s += ", user space only (perf_event_paranoid)"
	}
	if len(p.Missing) > 0 {
		s += fmt.Sprintf(", %d not available", len(p.Missing))
	}
	return s
}

func gpuWords(r *nvml.Receiver) string {
	devs := r.Devices()
	if len(devs) == 0 {
		return "NVIDIA GPUs: still initializing"
	}
	s := fmt.Sprintf("%d NVIDIA GPU", len(devs))
	if len(devs) > 1 {
		s += "s"
	}
	for i, d := range devs {
		if i == 0 {
			s += ": "
		} else {
			s += ", "
		}
		s += d.Model
	}
	return s
}
