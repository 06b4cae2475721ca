package rapl

import (
	"slices"
	"testing"

	"github.com/ortel-dev/ortel/semconv"
)

func TestZoneNames(t *testing.T) {
	tests := []struct {
		id     string
		ok     bool
		parent string
	}{
		{"intel-rapl:0", true, ""},
		{"intel-rapl:1:2", true, "intel-rapl:1"},
		{"intel-rapl:10:0", true, "intel-rapl:10"},
		{"intel-rapl", false, ""},
		{"intel-rapl-mmio:0", false, ""},
		{"intel-rapl:", false, ""},
		{"intel-rapl:x", false, ""},
		{"intel-rapl:0:", false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			if _, ok := zoneNumbers(tt.id); ok != tt.ok {
				t.Errorf("zoneNumbers(%q) ok = %v, want %v", tt.id, ok, tt.ok)
			}
			if p := parentID(tt.id); p != tt.parent {
				t.Errorf("parentID(%q) = %q, want %q", tt.id, p, tt.parent)
			}
		})
	}
}

func TestCompareZones(t *testing.T) {
	ids := []string{"intel-rapl:10", "intel-rapl:1:1", "intel-rapl:2", "intel-rapl:1", "intel-rapl:1:0"}
	slices.SortFunc(ids, compareZones)
	want := []string{"intel-rapl:1", "intel-rapl:1:0", "intel-rapl:1:1", "intel-rapl:2", "intel-rapl:10"}
	if !slices.Equal(ids, want) {
		t.Errorf("sorted %v, want %v", ids, want)
	}
}

func TestZoneKind(t *testing.T) {
	tests := []struct {
		name string
		want string // "" = unknown
	}{
		{"package-0", semconv.HwTypeCPU.Value.AsString()},
		{"package-12", "cpu"},
		{"core", "cpu"},
		{"uncore", "gpu"},
		{"dram", "memory"},
		{"psys", "enclosure"},
		{"mmio", ""},
		{"", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kind, ok := zoneKind(tt.name)
			if got := kind.Value.AsString(); ok != (tt.want != "") || got != tt.want {
				t.Errorf("zoneKind(%q) = %q, %v; want %q", tt.name, got, ok, tt.want)
			}
		})
	}
}
