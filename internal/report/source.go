package report

import (
	"fmt"
	"strings"

	"github.com/ortel-dev/ortel/internal/units"
)

// Where the renderers say what a report made from ONNX Runtime profiles
// (Source) holds and lacks: a profile has no unprofiled latency, no
// throughput, and says neither the machine nor the ONNX Runtime version.

// title is the first line of the text reports.
func title(r *Report) string {
	if r.FromProfile() {
		return "ortel report — " + r.Model.Name + ", from an ONNX Runtime profile"
	}
	return "ortel bench — " + r.Model.Name
}

// sourceText says where the numbers came from, "" for a bench report.
func sourceText(r *Report) string {
	s := r.Source
	if !r.FromProfile() {
		return ""
	}
	var files []string
	for i, f := range s.Files {
		if i == 2 && len(s.Files) > 3 {
			files = append(files, fmt.Sprintf("%d more", len(s.Files)-i))
			break
		}
		files = append(files, fmt.Sprintf("%s (%s, pid %d)", f.Path, Plural(f.Runs, "run"), f.PID))
	}
	layout := "session-level profile"
	if s.Layout == "run" {
		layout = "run-level profiles"
	}
	return fmt.Sprintf("%s: %s", layout, strings.Join(files, ", "))
}

// runtimeText is the ONNX Runtime line's value.
func runtimeText(r *Report) string {
	v := r.Runtime.ORTVersion
	if v == "" && r.FromProfile() {
		v = "(version not in the profile)"
	}
	return fmt.Sprintf("ONNX Runtime %s, %s", v, strings.Join(r.Runtime.Providers, ", "))
}

// hostText is the host line's value.
func hostText(r *Report) string {
	if r.FromProfile() && r.Host.LogicalCPUs == 0 {
		return "not in the profile (give --model FILE.onnx when it ran on this machine)"
	}
	return fmt.Sprintf("%s, %d logical CPUs, %s/%s", orDash(r.Host.CPUModel), r.Host.LogicalCPUs, r.Host.OS, r.Host.Arch)
}

// latencyHeading names the latency table: steady-state runs of a bench,
// or the profiled runs of a profile.
func latencyHeading(r *Report) string {
	if r.FromProfile() {
		return "Profiled-run latency"
	}
	return "Steady-state latency"
}

// coldText is the cold start and throughput sentence of a profile report.
func profileColdText(r *Report) string {
	out := "Cold start: not in run-level profiles."
	if r.Session.CreationS > 0 {
		out = fmt.Sprintf("Cold start (the profile's model_loading_uri + session_initialization): session creation %s (load %s, initialization %s), first run %s (profiled).",
			units.Duration(r.Session.CreationS), units.Duration(r.Source.ModelLoadS), units.Duration(r.Source.InitializationS), units.Duration(r.Session.FirstRunS))
	}
	return out + " Latency: " + r.Source.Latency + ". No throughput: a profile holds only the profiled runs."
}

// subtitle is the HTML page's line under its title.
func subtitle(r *Report) string {
	parts := []string{}
	if r.Model.Path != "" {
		parts = append(parts, r.Model.Path)
	}
	parts = append(parts, fmt.Sprintf("%s (%s)", strings.TrimSuffix(strings.SplitN(runtimeText(r), ",", 2)[0], ","), strings.Join(r.Runtime.Providers, ", ")))
	if r.FromProfile() && r.Host.LogicalCPUs == 0 {
		parts = append(parts, "machine not in the profile")
	} else {
		parts = append(parts, fmt.Sprintf("%s, %d logical CPUs", orDash(r.Host.CPUModel), r.Host.LogicalCPUs))
	}
	parts = append(parts, r.CreatedAt.Format("2006-01-02 15:04:05 MST"))
	if s := sourceText(r); s != "" {
		parts = append(parts, "from "+s)
	}
	return strings.Join(parts, " · ")
}

// passText says where the profiled runs came from.
func passText(r *Report) string {
	if r.FromProfile() {
		return "from the profile"
	}
	return "a separate pass"
}
