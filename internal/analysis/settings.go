package analysis

import (
	"strconv"
	"strings"

	"github.com/ortel-dev/ortel/internal/report"
)

// Setting is one thing a run was set up with that can change its speed: the
// ONNX Runtime version, a session option, the thread count, the model file.
// Two runs whose settings differ are not measuring the same thing, and a
// change of speed between them is explained first by the settings that
// changed (ortel compare warns of them; ortel history attributes change
// points to them).
type Setting struct {
	// Name in plain words, e.g. "graph optimization level".
	Name string `json:"name"`
	// Value as text; "" when unset.
	Value string `json:"value"`
}

// Names of the settings whose differences get their own wording.
const (
	SettingModelFile = "model file (SHA-256)"
	SettingHostCPU   = "host CPU"
)

// Settings lists r's settings, always the same names in the same order.
func Settings(r *report.Report) []Setting {
	s := sessionOpts(r)
	return []Setting{
		{SettingHostCPU, r.Host.CPUModel},
		{"ONNX Runtime version", r.Runtime.ORTVersion},
		{"execution providers", strings.Join(r.Runtime.Providers, ",")},
		{"batch", strconv.FormatInt(r.Config.Batch, 10)},
		{"intra-op threads", strconv.Itoa(r.Config.IntraOpThreads)},
		{"inter-op threads", strconv.Itoa(r.Config.InterOpThreads)},
		{"input shapes", inputShapes(r)},
		{"graph optimization level", s.OptLevel},
		{"execution mode", s.ExecutionMode},
		{"session config entries", kvText(s.Config)},
		{"execution provider options", kvText(s.ProviderOptions)},
		{SettingModelFile, r.Model.SHA256},
	}
}
