package telemetry

import (
	"strconv"
	"strings"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// DefaultSampler is the specification's default sampler: record every root
// span, and follow the parent's decision otherwise.
const DefaultSampler = "parentbased_always_on"

// sampler reads OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG: the
// specification's always_on, always_off, traceidratio and their
// parentbased_ forms. A bad or unsupported value falls back to the default
// with a warning. It returns the description Describe prints and the
// sampler Setup installs.
func (e *env) sampler() (string, sdktrace.Sampler) {
	name := strings.ToLower(e.lookup("OTEL_TRACES_SAMPLER"))
	arg := e.lookup("OTEL_TRACES_SAMPLER_ARG")
	if name == "" {
		name = DefaultSampler
	}
	ratio := func() (float64, string) {
		if arg == "" {
			return 1, "1"
		}
		f, err := strconv.ParseFloat(arg, 64)
		if err != nil || f < 0 || f > 1 {
			e.warnf("OTEL_TRACES_SAMPLER_ARG=%s ignored: want a ratio between 0 and 1, so 1 is used", safeQuote(arg))
			return 1, "1"
		}
		return f, strconv.FormatFloat(f, 'g', -1, 64)
	}
	switch name {
	case "always_on":
		return name, sdktrace.AlwaysSample()
	case "always_off":
		return name, sdktrace.NeverSample()
	case "traceidratio":
		f, s := ratio()
		return name + " " + s, sdktrace.TraceIDRatioBased(f)
	case "parentbased_always_on":
		return name, sdktrace.ParentBased(sdktrace.AlwaysSample())
	case "parentbased_always_off":
		return name, sdktrace.ParentBased(sdktrace.NeverSample())
	case "parentbased_traceidratio":
		f, s := ratio()
		return name + " " + s, sdktrace.ParentBased(sdktrace.TraceIDRatioBased(f))
	}
	e.warnf("OTEL_TRACES_SAMPLER=%s ignored: want always_on, always_off, traceidratio or parentbased_always_on, parentbased_always_off, parentbased_traceidratio; %s is used",
		safeQuote(name), DefaultSampler)
	return DefaultSampler, sdktrace.ParentBased(sdktrace.AlwaysSample())
}
