package procfs

import (
	"strings"
	"testing"

	"github.com/ortel-dev/ortel/semconv"
)

func TestSelect(t *testing.T) {
	// One metric on by default and one off by default, per the registry.
	names := []string{semconv.SystemCPUTimeName, semconv.SystemCPUFrequencyName}
	on, _ := semconv.LookupMetric(semconv.SystemCPUTimeName)
	off, _ := semconv.LookupMetric(semconv.SystemCPUFrequencyName)
	if !on.DefaultEnabled || off.DefaultEnabled {
		t.Fatalf("registry defaults changed (time %v, frequency %v): pick other metrics for this test", on.DefaultEnabled, off.DefaultEnabled)
	}
	tests := []struct {
		name      string
		all       bool
		overrides map[string]bool
		want      map[string]bool
	}{
		{"defaults", false, nil, map[string]bool{names[0]: true, names[1]: false}},
		{"all", true, nil, map[string]bool{names[0]: true, names[1]: true}},
		{"override on", false, map[string]bool{names[1]: true}, map[string]bool{names[0]: true, names[1]: true}},
		{"override off after all", true, map[string]bool{names[0]: false}, map[string]bool{names[0]: false, names[1]: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sel, err := Select("cpu", names, tt.all, tt.overrides)
			if err != nil {
				t.Fatal(err)
			}
			for n, want := range tt.want {
				if sel.On(n) != want {
					t.Errorf("%s on = %v, want %v", n, sel.On(n), want)
				}
			}
		})
	}
	_, err := Select("cpu", names, false, map[string]bool{"system.cpu.tme": true})
	if err == nil || !strings.Contains(err.Error(), `"system.cpu.tme"`) || !strings.Contains(err.Error(), names[0]) {
		t.Errorf("unknown metric: err = %v, want one naming it and listing the metrics", err)
	}
}
