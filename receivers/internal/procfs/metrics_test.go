package procfs

import (
	"strings"
	"testing"

	"github.com/ortel-dev/ortel/receivers"
	"github.com/ortel-dev/ortel/semconv"
)

func TestSelect(t *testing.T) {
	// One metric on by default and one off by default, as a receiver's
	// generated table says.
	table := []receivers.Metric{
		{Name: semconv.SystemCPUTimeName, DefaultEnabled: true},
		{Name: semconv.SystemCPUFrequencyName, DefaultEnabled: false},
	}
	on, off := table[0].Name, table[1].Name
	tests := []struct {
		name      string
		all       bool
		overrides map[string]bool
		want      map[string]bool
	}{
		{"defaults", false, nil, map[string]bool{on: true, off: false}},
		{"all", true, nil, map[string]bool{on: true, off: true}},
		{"override on", false, map[string]bool{off: true}, map[string]bool{on: true, off: true}},
		{"override off after all", true, map[string]bool{on: false}, map[string]bool{on: false, off: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sel, err := Select("cpu", table, tt.all, tt.overrides)
			if err != nil {
				t.Fatal(err)
			}
			for n, want := range tt.want {
				if sel.On(n) != want {
					t.Errorf("%s on = %v, want %v", n, sel.On(n), want)
				}
				if !sel.Has(n) {
					t.Errorf("Has(%s) = false for a metric of the table", n)
				}
			}
			if sel.Has(semconv.SystemMemoryUsageName) || sel.On(semconv.SystemMemoryUsageName) {
				t.Errorf("a metric outside the table is known or on")
			}
		})
	}
	_, err := Select("cpu", table, false, map[string]bool{"system.cpu.tme": true})
	if err == nil || !strings.Contains(err.Error(), `"system.cpu.tme"`) || !strings.Contains(err.Error(), on) {
		t.Errorf("unknown metric: err = %v, want one naming it and listing the metrics", err)
	}
}
