package analysis

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/ortel-dev/ortel/instrument/ortlib"
	"github.com/ortel-dev/ortel/internal/configerr"
)

// EnvGridIntensity names the environment variable holding the grid carbon
// intensity in gCO2e/kWh.
const EnvGridIntensity = "ORTEL_GRID_INTENSITY"

// DefaultGridIntensity is the grid carbon intensity used when none is
// given: 480 gCO2e/kWh, the world-average carbon intensity of electricity
// generation in 2023 reported by Ember's Global Electricity Review 2024.
// Local grids range from under 50 (hydro, nuclear) to over 700 (coal).
const DefaultGridIntensity = 480.0

// DefaultGridSource says where DefaultGridIntensity comes from.
const DefaultGridSource = "default: world average 2023 (Ember, Global Electricity Review 2024)"

// Config configures Analyze, Export and MeasurePeaks. Its zero value is
// valid: peaks measured (once per machine, then cached) when the report
// has none, the grid intensity from ORTEL_GRID_INTENSITY or the default,
// the global providers.
type Config struct {
	// PeakFLOPs and PeakBandwidth (bytes/s) are the machine's peaks, given
	// instead of measured or cached (the --peak-flops and --peak-bw flags);
	// 0 keeps the measured or cached value.
	PeakFLOPs, PeakBandwidth float64
	// NoMeasure forbids Analyze to run the peak microbenchmark when no
	// cached peaks exist for this machine. Analyze never measures when the
	// report was recorded on another machine.
	NoMeasure bool
	// Remeasure runs the peak microbenchmark even when peaks are cached or
	// in the report (--remeasure-peaks); the cache keeps the highest
	// measurement.
	Remeasure bool
	// CacheDir is the project cache folder the peaks are cached in (the
	// file is peaks/<machine key>.json); "": ortlib.CacheDir().
	CacheDir string
	// HostRoot is where sysfs is read for the cache sizes (a fixture tree
	// in tests, the host's file system in a container); "": "/".
	HostRoot string
	// GridIntensity is the grid carbon intensity in gCO2e/kWh
	// (--grid-intensity); above 0 it overrides ORTEL_GRID_INTENSITY, whose
	// absence gives DefaultGridIntensity.
	GridIntensity float64
	// Progress, when set, gets one line per slow step (the peak
	// microbenchmark).
	Progress io.Writer
	// TracerProvider and MeterProvider receive Export's analysis span and
	// gauges; nil: the global ones.
	TracerProvider trace.TracerProvider
	MeterProvider  metric.MeterProvider

	// sources, when set, replace the second and third sources of cache
	// sizes (CPUID and the bandwidth sweep; discoverCaches) in tests.
	sources *cacheSources
}

// Validate checks c: peaks not negative, a grid intensity from 0 to 5000
// gCO2e/kWh. Its errors name the fields (configerr).
func (c Config) Validate() error {
	switch {
	case c.PeakFLOPs < 0:
		return configerr.New("analysis", "{PeakFLOPs} %g: want a rate above 0, or 0 to measure it", c.PeakFLOPs)
	case c.PeakBandwidth < 0:
		return configerr.New("analysis", "{PeakBandwidth} %g: want a rate above 0, or 0 to measure it", c.PeakBandwidth)
	case c.GridIntensity < 0 || c.GridIntensity > 5000:
		return configerr.New("analysis", "{GridIntensity} %g gCO2e/kWh is out of range (0 to 5000)", c.GridIntensity)
	}
	return nil
}

// config is a Config resolved: defaults, then the environment, then the
// Config's fields.
type config struct {
	Config
	measure       bool
	gridIntensity float64
	gridSource    string
	warnings      []string
	// cpuid and sweep are the second and third sources of cache sizes
	// (discoverCaches): CPUID and the bandwidth sweep, unless
	// Config.sources replaces them.
	cpuid func() ([]CacheLevel, string)
	sweep func(context.Context) ([]int64, []float64, error)
}

// cacheSources replace CPUID and the bandwidth sweep in tests
// (Config.sources); a nil sweep means none.
type cacheSources struct {
	cpuid func() ([]CacheLevel, string)
	sweep func(context.Context) ([]int64, []float64, error)
}

// newConfig applies defaults, then the environment, then c.
func newConfig(c Config) *config {
	r := &config{Config: c, measure: !c.NoMeasure, gridIntensity: DefaultGridIntensity, gridSource: DefaultGridSource,
		cpuid: cpuidCacheLevels, sweep: sweepBandwidth}
	if c.sources != nil {
		r.cpuid, r.sweep = c.sources.cpuid, c.sources.sweep
	}
	if v := os.Getenv(EnvGridIntensity); v != "" {
		g, err := ParseGridIntensity(v)
		if err != nil {
			r.warnings = append(r.warnings, fmt.Sprintf("%s: %v; using the default %g gCO2e/kWh", EnvGridIntensity, err, DefaultGridIntensity))
		} else {
			r.gridIntensity, r.gridSource = g, "environment "+EnvGridIntensity
		}
	}
	if c.GridIntensity > 0 {
		r.gridIntensity, r.gridSource = c.GridIntensity, "flag --grid-intensity"
	}
	if r.HostRoot == "" {
		r.HostRoot = "/"
	}
	if r.CacheDir == "" {
		r.CacheDir = ortlib.CacheDir()
	}
	if r.TracerProvider == nil {
		r.TracerProvider = otel.GetTracerProvider()
	}
	if r.MeterProvider == nil {
		r.MeterProvider = otel.GetMeterProvider()
	}
	return r
}

func (c *config) progressf(format string, args ...any) {
	if c.Progress != nil {
		fmt.Fprintf(c.Progress, format+"\n", args...)
	}
}

// ParseRate parses a rate such as "150G", "1.5e11", "150 GFLOP/s" or
// "20GB/s": a number with an optional SI prefix (k, M, G, T, P) and an
// optional unit word that is ignored. It is what --peak-flops and --peak-bw
// take.
func ParseRate(s string) (float64, error) {
	t := strings.TrimSpace(s)
	// Split the number from the rest.
	i := 0
	for i < len(t) && (t[i] >= '0' && t[i] <= '9' || t[i] == '.' || t[i] == '+' || t[i] == '-' ||
		(t[i] == 'e' || t[i] == 'E') && i > 0 && i+1 < len(t) && (t[i+1] >= '0' && t[i+1] <= '9' || t[i+1] == '-' || t[i+1] == '+')) {
		i++
	}
	v, err := strconv.ParseFloat(t[:i], 64)
	if err != nil || i == 0 {
		return 0, fmt.Errorf("%q is not a rate (want a number with an optional k/M/G/T prefix, like 150G or 1.5e11)", s)
	}
	rest := strings.TrimSpace(t[i:])
	if rest != "" {
		mult := map[byte]float64{'k': 1e3, 'K': 1e3, 'M': 1e6, 'G': 1e9, 'T': 1e12, 'P': 1e15}
		if m, ok := mult[rest[0]]; ok {
			v *= m
			rest = rest[1:]
		}
		u := strings.ToLower(strings.TrimSpace(rest))
		switch u {
		case "", "flop/s", "flops", "flop", "b/s", "by/s", "byte/s", "bytes/s", "bps":
		default:
			return 0, fmt.Errorf("%q is not a rate: unknown unit %q (want FLOP/s or B/s, or none)", s, rest)
		}
	}
	if v <= 0 {
		return 0, fmt.Errorf("%q: a rate must be positive", s)
	}
	return v, nil
}

// ParseGridIntensity parses a grid carbon intensity in gCO2e/kWh.
func ParseGridIntensity(s string) (float64, error) {
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a number of gCO2e/kWh (like 480)", s)
	}
	if v < 0 || v > 5000 {
		return 0, fmt.Errorf("%g gCO2e/kWh is out of range (0 to 5000)", v)
	}
	return v, nil
}
