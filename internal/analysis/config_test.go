package analysis

import (
	"context"
	"testing"

	"github.com/ortel-dev/ortel/test/testenv"
)

// TestConfigValidate: the zero Config is valid; negative peaks and a grid
// intensity outside 0..5000 gCO2e/kWh are not, each named by its field,
// and Analyze refuses them before any work. Planted: without the
// GridIntensity check 6000 gCO2e/kWh went into the carbon estimate.
func TestConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"zero value", Config{}, ""},
		{"given peaks", Config{PeakFLOPs: 1e12, PeakBandwidth: 5e10, GridIntensity: 480}, ""},
		{"negative flops", Config{PeakFLOPs: -1}, "PeakFLOPs -1"},
		{"negative bandwidth", Config{PeakBandwidth: -2}, "PeakBandwidth -2"},
		{"grid too high", Config{GridIntensity: 6000}, "GridIntensity 6000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			testenv.ErrContains(t, "Validate()", tc.cfg.Validate(), tc.want)
			if tc.want == "" {
				return
			}
			_, err := Analyze(context.Background(), fixtureReport(), tc.cfg)
			testenv.ErrContains(t, "Analyze", err, tc.want)
		})
	}
}
