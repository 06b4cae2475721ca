package instrument

import (
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/otel"
)

func TestProfilingFromEnv(t *testing.T) {
	tests := []struct {
		name      string
		env       map[string]string
		want      Profiling
		wantWarns int64
	}{
		{"nothing set", nil, Profiling{}, 0},
		{"every and slow", map[string]string{EnvProfileEvery: "100", EnvProfileSlowRun: "250ms"}, Profiling{EveryN: 100, SlowRun: 250 * time.Millisecond}, 0},
		{"ratio and dir", map[string]string{EnvProfileRatio: "0.01", EnvProfileDir: "/tmp/p"}, Profiling{Ratio: 0.01, Dir: "/tmp/p"}, 0},
		{"bad values are reported and ignored", map[string]string{EnvProfileEvery: "-3", EnvProfileRatio: "2", EnvProfileSlowRun: "soon"}, Profiling{}, 3},
		{"negative duration", map[string]string{EnvProfileSlowRun: "-1s"}, Profiling{}, 1},
		{"cpu cap", map[string]string{EnvProfileEvery: "100", EnvProfileMaxCPUShare: "0.02"}, Profiling{EveryN: 100, MaxCPUShare: 0.02}, 0},
		{"bad cpu cap", map[string]string{EnvProfileMaxCPUShare: "2%"}, Profiling{}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, k := range []string{EnvProfileEvery, EnvProfileRatio, EnvProfileWindowRuns, EnvProfileDir, EnvProfileSlowRun, EnvProfileMaxCPUShare} {
				t.Setenv(k, tt.env[k])
			}
			var warns atomic.Int64
			otel.SetErrorHandler(otel.ErrorHandlerFunc(func(error) { warns.Add(1) }))
			defer otel.SetErrorHandler(otel.ErrorHandlerFunc(func(error) {}))
			if got := profilingFromEnv(); got != tt.want {
				t.Errorf("profilingFromEnv() = %+v, want %+v", got, tt.want)
			}
			if warns.Load() != tt.wantWarns {
				t.Errorf("%d bad values reported, want %d", warns.Load(), tt.wantWarns)
			}
		})
	}
}
