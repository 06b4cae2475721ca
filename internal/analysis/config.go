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

// config holds the options of Analyze and Export.
type config struct {
	peakFLOPs, peakBytes float64
	measure, remeasure   bool
	cacheDir             string
	hostRoot             string
	// cpuid and sweep are the second and third sources of cache sizes
	// (discoverCaches); tests replace them.
	cpuid         func() ([]CacheLevel, string)
	sweep         func(context.Context) ([]int64, []float64, error)
	gridIntensity float64
	gridSource    string
	progress      io.Writer
	warnings      []string

	tracerProvider trace.TracerProvider
	meterProvider  metric.MeterProvider
}

// Option configures Analyze and Export.
type Option interface{ apply(*config) }

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

// newConfig applies defaults, then the environment, then opts.
func newConfig(opts []Option) *config {
	c := &config{measure: true, gridIntensity: DefaultGridIntensity, gridSource: DefaultGridSource,
		cpuid: cpuidCacheLevels, sweep: sweepBandwidth}
	if v := os.Getenv(EnvGridIntensity); v != "" {
		g, err := ParseGridIntensity(v)
		if err != nil {
			c.warnings = append(c.warnings, fmt.Sprintf("%s: %v; using the default %g gCO2e/kWh", EnvGridIntensity, err, DefaultGridIntensity))
		} else {
			c.gridIntensity, c.gridSource = g, "environment "+EnvGridIntensity
		}
	}
	for _, o := range opts {
		o.apply(c)
	}
	if c.hostRoot == "" {
		c.hostRoot = "/"
	}
	if c.cacheDir == "" {
		c.cacheDir = ortlib.CacheDir()
	}
	if c.tracerProvider == nil {
		c.tracerProvider = otel.GetTracerProvider()
	}
	if c.meterProvider == nil {
		c.meterProvider = otel.GetMeterProvider()
	}
	return c
}

// WithPeakFLOPs sets the machine's peak FLOP/s instead of measuring it (the
// `--peak-flops` flag). Zero or less keeps the measured or cached value.
func WithPeakFLOPs(v float64) Option { return optionFunc(func(c *config) { c.peakFLOPs = v }) }

// WithPeakBandwidth sets the machine's peak memory bandwidth in bytes/s
// instead of measuring it (the `--peak-bw` flag). Zero or less keeps the
// measured or cached value.
func WithPeakBandwidth(v float64) Option { return optionFunc(func(c *config) { c.peakBytes = v }) }

// WithMeasurePeaks says whether Analyze may run the peak microbenchmark
// when no cached peaks exist for this machine (default true). Analyze never
// measures when the report was recorded on another machine.
func WithMeasurePeaks(on bool) Option { return optionFunc(func(c *config) { c.measure = on }) }

// WithRemeasurePeaks runs the peak microbenchmark even when peaks are
// cached or in the report (the `--remeasure-peaks` flag); the cache keeps
// the highest measurement.
func WithRemeasurePeaks(on bool) Option { return optionFunc(func(c *config) { c.remeasure = on }) }

// WithCacheDir sets the project cache folder the peaks are cached in
// (default ortlib.CacheDir(); the cache file is peaks/<machine key>.json).
func WithCacheDir(dir string) Option { return optionFunc(func(c *config) { c.cacheDir = dir }) }

// WithGridIntensity sets the grid carbon intensity in gCO2e/kWh (the
// `--grid-intensity` flag). It overrides ORTEL_GRID_INTENSITY; the default
// is DefaultGridIntensity. Zero or less keeps the environment or default.
func WithGridIntensity(g float64) Option {
	return optionFunc(func(c *config) {
		if g > 0 {
			c.gridIntensity, c.gridSource = g, "flag --grid-intensity"
		}
	})
}

// WithProgress sends one line per slow step (the peak microbenchmark) to w.
func WithProgress(w io.Writer) Option { return optionFunc(func(c *config) { c.progress = w }) }

// WithTracerProvider sets where Export's analysis span goes (default: the
// global TracerProvider).
func WithTracerProvider(tp trace.TracerProvider) Option {
	return optionFunc(func(c *config) { c.tracerProvider = tp })
}

// WithMeterProvider sets where Export's metrics go (default: the global
// MeterProvider).
func WithMeterProvider(mp metric.MeterProvider) Option {
	return optionFunc(func(c *config) { c.meterProvider = mp })
}

func (c *config) progressf(format string, args ...any) {
	if c.progress != nil {
		fmt.Fprintf(c.progress, format+"\n", args...)
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
