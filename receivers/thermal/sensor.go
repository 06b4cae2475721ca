package thermal

import (
	"cmp"
	"strconv"
	"strings"

	"go.opentelemetry.io/otel/attribute"

	"github.com/ortel-dev/ortel/semconv"
)

// Sensor describes one temperature sensor found at construction.
type Sensor struct {
	// ID is the hw.id: "thermal_zone0" for a thermal zone, "hwmon1/temp2"
	// for the second temperature input of hwmon1.
	ID string
	// Name is the hw.name: a thermal zone's type ("x86_pkg_temp",
	// "acpitz"), or a hwmon chip's name and the input's label
	// ("coretemp Package id 0", "nvme Composite"; "nvme temp1" without a
	// label).
	Name string
	// Limits holds the sensor's temperature limits in degrees Celsius by
	// hw.limit_type ("critical", "max", "throttled", ...), read once at
	// construction. See the package documentation for the mapping.
	Limits map[string]float64
	// Err is nil when the sensor is read; otherwise it matches
	// receivers.ErrUnsupported and says why it is not.
	Err error
}

// Reading is one temperature reading.
type Reading struct {
	ID, Name string // as in Sensor
	Celsius  float64
}

// limit is a limit's file suffix or trip type and its hw.limit_type.
type limit struct {
	key  string
	kind attribute.KeyValue
	high bool // an upper limit: of two of the same kind, the lower one counts first
}

// hwmonLimits maps the limit files of a hwmon temperature input
// (tempN_<suffix>) to hw.limit_type.
var hwmonLimits = []limit{
	{"max", semconv.HwLimitTypeMax, true},
	{"crit", semconv.HwLimitTypeCritical, true},
	{"emergency", semconv.HwLimitTypeHighCritical, true},
	{"min", semconv.HwLimitTypeLowDegraded, false},
	{"lcrit", semconv.HwLimitTypeLowCritical, false},
}

// tripLimits maps thermal-zone trip point types to hw.limit_type. Active
// trip points (fan speed steps) are not limits and are left out.
var tripLimits = []limit{
	{"passive", semconv.HwLimitTypeThrottled, true},
	{"hot", semconv.HwLimitTypeHighDegraded, true},
	{"critical", semconv.HwLimitTypeCritical, true},
}

// plausible reports whether a limit in millidegrees is a real limit:
// drivers write placeholders for "no limit", such as 0 for a disabled
// trip point or absolute zero (-273150) and 65261850 (65535 K) for an NVMe
// drive without thresholds.
func plausible(milli int64, high bool) bool {
	if high {
		return milli > 0 && milli < 1_000_000
	}
	return milli > -273_000 && milli < 1_000_000
}

// indexed splits a name like "thermal_zone12" or "temp3_input" into the
// number after prefix and what follows it.
func indexed(name, prefix string) (n int, rest string, ok bool) {
	s, ok := strings.CutPrefix(name, prefix)
	if !ok {
		return 0, "", false
	}
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i == 0 {
		return 0, "", false
	}
	n, err := strconv.Atoi(s[:i])
	if err != nil {
		return 0, "", false
	}
	return n, s[i:], true
}

// byNumber orders names with the same prefix by their number, so that
// thermal_zone2 comes before thermal_zone10.
func byNumber(prefix string) func(a, b string) int {
	return func(a, b string) int {
		na, _, _ := indexed(a, prefix)
		nb, _, _ := indexed(b, prefix)
		return cmp.Compare(na, nb)
	}
}
