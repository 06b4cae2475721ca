package bench

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/ortel-dev/ortel/internal/configerr"
)

// TestValidate: each rule of the Config is refused with an error that
// names the fields it concerns (so ortel can name the flags), and a
// Config with its defaults filled in is valid. Validate is the one place
// these rules live: ortel's bench command had its own copy of half of
// them (planted: the rule "an encoder needs generation" removed from
// validateGenerate, the "encoder without generation" row failed).
func TestValidate(t *testing.T) {
	var base Config
	base.defaults()
	if err := base.Validate(); err != nil {
		t.Fatalf("the defaults are refused: %v", err)
	}
	if err := (Config{}).Validate(); err == nil {
		t.Error("a zero Config is valid; Validate checks the Config as given (Run fills the defaults first)")
	}
	sla := &SLA{Threshold: time.Millisecond, Percentile: 99}
	tests := []struct {
		name   string
		change func(c *Config)
		fields []string
	}{
		{"no runs", func(c *Config) { c.Runs = 0 }, []string{"Runs"}},
		{"a negative duration", func(c *Config) { c.Duration = -time.Second }, []string{"Duration"}},
		{"no warm-up bound", func(c *Config) { c.WarmupMax = 0 }, []string{"WarmupMax"}},
		{"too many workers", func(c *Config) { c.Concurrency = MaxConcurrency + 1 }, []string{"Concurrency"}},
		{"workers single-stream", func(c *Config) { c.Concurrency = 2 }, []string{"Concurrency", "Scenario"}},
		{"per-worker single-stream", func(c *Config) { c.Sessions = PerWorkerSessions }, []string{"Sessions", "Scenario"}},
		{"per-worker, one worker", func(c *Config) { c.Scenario, c.QPS, c.Sessions, c.Concurrency = Server, 5, PerWorkerSessions, 1 },
			[]string{"Sessions", "Concurrency"}},
		{"a rate without the server", func(c *Config) { c.QPS = 5 }, []string{"QPS", "Scenario"}},
		{"the server without a rate", func(c *Config) { c.Scenario = Server }, []string{"Scenario", "QPS", "SLA"}},
		{"an unknown scenario", func(c *Config) { c.Scenario = "bursty" }, []string{"Scenario"}},
		{"a sweep under load", func(c *Config) { c.Scenario, c.Batches = Concurrent, []int64{1, 2} }, []string{"Batches", "Scenario"}},
		{"auto runs of the server", func(c *Config) { c.Scenario, c.QPS, c.Auto = Server, 5, &AutoRuns{Percentile: 99, Width: 0.05} },
			[]string{"Auto", "Scenario"}},
		{"auto runs at p100", func(c *Config) { c.Auto = &AutoRuns{Percentile: 100, Width: 0.05} }, []string{"Auto.Percentile"}},
		{"no trial", func(c *Config) { c.TrialDuration = 0 }, []string{"TrialDuration"}},
		{"too many trials", func(c *Config) { c.MaxTrials = MaxSLATrials + 1 }, []string{"MaxTrials"}},
		{"no SLA budget", func(c *Config) { c.SLABudget = -time.Second }, []string{"SLABudget"}},
		{"a negative generation", func(c *Config) { c.Generate = -1 }, []string{"Generate"}},
		{"an encoder without generation", func(c *Config) { c.EncoderPath = "enc.onnx" }, []string{"EncoderPath", "Generate"}},
		{"an encoder and its length", func(c *Config) { c.Generate, c.EncoderPath, c.EncoderTokens = 4, "enc.onnx", 10 },
			[]string{"EncoderPath", "EncoderTokens"}},
		{"generation in batches", func(c *Config) { c.Generate, c.Batch = 4, 2 }, []string{"Generate", "Batches"}},
		{"generation with an SLA", func(c *Config) { c.Generate, c.SLA = 4, sla }, []string{"SLA", "Generate"}},
		{"negative threads", func(c *Config) { c.IntraOpThreads = -1 }, []string{"IntraOpThreads"}},
		{"provider options for the CPU", func(c *Config) { c.Session.ProviderOptions = map[string]string{"device_id": "0"} },
			[]string{"Session.ProviderOptions", "Session.Providers"}},
		{"too many profiled runs", func(c *Config) { c.ProfileRuns = MaxProfileRuns + 1 }, []string{"ProfileRuns"}},
		{"a sweep of too few runs", func(c *Config) { c.Tune, c.Runs = &Tune{Rounds: 5}, 5 }, []string{"Tune", "Runs"}},
		{"a sweep under an SLA", func(c *Config) { c.Tune, c.SLA = &Tune{Rounds: 5}, sla }, []string{"Tune", "SLA"}},
		{"a sweep of no rounds", func(c *Config) { c.Tune = &Tune{} }, []string{"Tune.Rounds"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := base
			tt.change(&c)
			err := c.Validate()
			var ce *configerr.Error
			if !errors.As(err, &ce) {
				t.Fatalf("Validate = %v, want a *configerr.Error", err)
			}
			if ce.Engine != "bench" || !slices.Equal(ce.Fields(), tt.fields) {
				t.Errorf("%v: engine %q, fields %v; want bench, %v", err, ce.Engine, ce.Fields(), tt.fields)
			}
		})
	}
}
