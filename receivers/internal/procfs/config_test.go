package procfs

import (
	"strings"
	"testing"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric/noop"

	"github.com/ortel-dev/ortel/receivers"
	"github.com/ortel-dev/ortel/semconv"
)

func TestConfig(t *testing.T) {
	c := NewConfig()
	global := c.MeterProvider
	c.SetMeterProvider(nil)
	if c.MeterProvider != global {
		t.Error("a nil MeterProvider replaced the global one")
	}
	mp := noop.NewMeterProvider()
	c.SetMeterProvider(mp)
	if c.MeterProvider != mp {
		t.Error("SetMeterProvider ignored")
	}
	c.SetAllMetrics()
	c.SetMetric(semconv.SystemCPUTimeName, false)
	table := []receivers.Metric{{Name: semconv.SystemCPUTimeName, DefaultEnabled: true}, {Name: semconv.SystemCPUFrequencyName}}
	sel, err := c.Select("cpu", table)
	if err != nil || sel.On(semconv.SystemCPUTimeName) || !sel.On(semconv.SystemCPUFrequencyName) {
		t.Errorf("Select = %v, %v; want frequency on (all), time off (override after all)", sel, err)
	}
	if _, err := c.Select("cpu", table[1:]); err == nil {
		t.Error("Select accepted an override of a metric the receiver does not emit")
	}
}

func TestConfigRoot(t *testing.T) {
	var handled []error
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) { handled = append(handled, err) }))
	t.Cleanup(func() { otel.SetErrorHandler(otel.ErrorHandlerFunc(func(error) {})) })
	dir := t.TempDir()
	tests := []struct {
		name, env, option, want string
		reported                bool
	}{
		{"default", "", "", "/", false},
		{"environment", dir, "", dir, false},
		{"bad environment", "relative/path", "", "/", true},
		{"option over environment", dir, "/elsewhere", "/elsewhere", false},
		{"option over bad environment", "relative/path", "/elsewhere", "/elsewhere", false},
		{"empty option ignored", dir, "", dir, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			handled = nil
			t.Setenv(EnvHostRoot, tt.env)
			c := NewConfig()
			c.SetRoot(tt.option)
			c.ResolveRoot()
			c.ResolveRoot() // a second call changes nothing and reports nothing
			if c.Root != tt.want {
				t.Errorf("Root = %q, want %q", c.Root, tt.want)
			}
			if got := len(handled); tt.reported && (got != 1 || !strings.Contains(handled[0].Error(), EnvHostRoot)) || !tt.reported && got != 0 {
				t.Errorf("reported %v; want one naming %s: %v", handled, EnvHostRoot, tt.reported)
			}
		})
	}
}
