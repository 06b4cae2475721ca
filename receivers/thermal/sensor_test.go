package thermal

import (
	"slices"
	"testing"
)

func TestIndexed(t *testing.T) {
	tests := []struct {
		name, prefix string
		n            int
		rest         string
		ok           bool
	}{
		{"thermal_zone12", "thermal_zone", 12, "", true},
		{"temp3_input", "temp", 3, "_input", true},
		{"trip_point_0_type", "trip_point_", 0, "_type", true},
		{"temp_input", "temp", 0, "", false},
		{"cooling_device0", "thermal_zone", 0, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, rest, ok := indexed(tt.name, tt.prefix)
			if n != tt.n || rest != tt.rest || ok != tt.ok {
				t.Errorf("indexed(%q, %q) = %d, %q, %v; want %d, %q, %v", tt.name, tt.prefix, n, rest, ok, tt.n, tt.rest, tt.ok)
			}
		})
	}
	names := []string{"hwmon10", "hwmon2", "hwmon0"}
	slices.SortFunc(names, byNumber("hwmon"))
	if want := []string{"hwmon0", "hwmon2", "hwmon10"}; !slices.Equal(names, want) {
		t.Errorf("sorted %v, want %v", names, want)
	}
}

func TestPlausible(t *testing.T) {
	tests := []struct {
		name  string
		milli int64
		high  bool
		want  bool
	}{
		{"critical trip", 105000, true, true},
		{"disabled trip", 0, true, false},
		{"NVMe no upper limit", 65261850, true, false},
		{"NVMe no lower limit", -273150, false, false},
		{"real lower limit", -5150, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := plausible(tt.milli, tt.high); got != tt.want {
				t.Errorf("plausible(%d, %v) = %v, want %v", tt.milli, tt.high, got, tt.want)
			}
		})
	}
}
