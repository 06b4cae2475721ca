package report

import (
	"fmt"
	"strings"

	"github.com/ortel-dev/ortel/internal/units"
)

// Measurement states.
const (
	MeasurementStable    = "stable"
	MeasurementDisturbed = "disturbed"
)

// Measurement is the verdict on a measured phase itself: whether the
// machine stayed quiet enough to trust its figures (internal/interference
// samples /proc during the phase). State is "stable" or "disturbed";
// Reasons say what disturbed it and in which share of the phase.
type Measurement struct {
	State string `json:"state"`
	// AffectedShare is the share of the phase's time (0 to 1) in which at
	// least one source crossed its threshold.
	AffectedShare float64             `json:"affected_share"`
	Reasons       []MeasurementReason `json:"reasons,omitempty"`
	// Advice says what would make the measurement trustworthy, when
	// disturbed.
	Advice []string `json:"advice,omitempty"`
	// CoRunners are the other processes that used the measured cores
	// most, when /proc says who they are.
	CoRunners []CoRunner `json:"co_runners,omitempty"`
	// Sources lists every source, available or not, with why not.
	Sources   []MeasurementSource `json:"sources"`
	IntervalS float64             `json:"interval_s"`
	Samples   int                 `json:"samples"`
	// CPUs are the cores judged: the bench's affinity mask unless set.
	CPUs []int `json:"cpus,omitempty"`
	// LoadAvgStart and LoadAvgEnd are /proc/loadavg's 1, 5 and 15-minute
	// load averages at the start and end of the phase.
	LoadAvgStart []float64 `json:"load_avg_start,omitempty"`
	LoadAvgEnd   []float64 `json:"load_avg_end,omitempty"`
}

// MeasurementReason is one kind of disturbance: steal, co-runner,
// run-queue, psi-cpu, psi-memory, psi-io, throttling,
// involuntary-switches, page-faults or drift.
type MeasurementReason struct {
	Kind   string `json:"kind"`
	Detail string `json:"detail"`
	// Share is the share of the phase's time (0 to 1) this reason held
	// in; for drift, the whole phase (1).
	Share float64 `json:"share"`
}

// MeasurementSource is one source's availability.
type MeasurementSource struct {
	Source    string `json:"source"`
	Available bool   `json:"available"`
	Reason    string `json:"reason,omitempty"`
}

// CoRunner is another process seen on the measured cores.
type CoRunner struct {
	PID  int    `json:"pid"`
	Comm string `json:"comm"`
	// CPUS is the CPU time it used while it was watched, in seconds.
	CPUS float64 `json:"cpu_s"`
}

// Disturbed reports whether m is set and disturbed.
func (m *Measurement) Disturbed() bool { return m != nil && m.State == MeasurementDisturbed }

// Line is the one-line verdict the summary prints: "stable", or
// "disturbed: co-runner, steal (41% of the phase)".
func (m *Measurement) Line() string {
	if m == nil {
		return ""
	}
	if m.State != MeasurementDisturbed {
		return MeasurementStable
	}
	kinds := make([]string, len(m.Reasons))
	for i, r := range m.Reasons {
		kinds[i] = r.Kind
	}
	line := "disturbed: " + strings.Join(kinds, ", ")
	if m.AffectedShare > 0 {
		line += fmt.Sprintf(" (%.0f%% of the phase)", 100*m.AffectedShare)
	}
	return line
}

// LoadText is "load 5.20 → 6.10" (1-minute load averages at the start
// and end of the phase), or "" when unknown.
func (m *Measurement) LoadText() string {
	if m == nil || len(m.LoadAvgStart) == 0 {
		return ""
	}
	s := fmt.Sprintf("load %.2f", m.LoadAvgStart[0])
	if len(m.LoadAvgEnd) > 0 {
		s += fmt.Sprintf(" → %.2f", m.LoadAvgEnd[0])
	}
	return s
}

// writeMeasurementText renders the measurement section of the text
// report: the verdict, each reason with its share, the co-runners, the
// advice and the sources that were not available.
func writeMeasurementText(p *printer, m *Measurement) {
	if m == nil {
		return
	}
	p.f("\nMeasurement (%d samples every %s on CPUs %s; %s)\n", m.Samples, units.Duration(m.IntervalS), cpuList(m.CPUs), orDash(m.LoadText()))
	p.f("  verdict    %s\n", m.Line())
	for _, r := range m.Reasons {
		p.f("  %-20s %s of the phase: %s\n", r.Kind, units.Percent(r.Share, 0), r.Detail)
	}
	for _, a := range m.Advice {
		p.f("  → %s\n", a)
	}
	var off []string
	for _, s := range m.Sources {
		if !s.Available {
			off = append(off, s.Source)
		}
	}
	if len(off) > 0 {
		p.f("  not available here: %s\n", strings.Join(off, ", "))
	}
}

func cpuList(cpus []int) string {
	if len(cpus) == 0 {
		return "-"
	}
	s := make([]string, len(cpus))
	for i, c := range cpus {
		s[i] = fmt.Sprint(c)
	}
	return strings.Join(s, ",")
}
