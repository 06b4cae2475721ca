package profimport

import (
	"bytes"
	"context"
	"testing"

	"github.com/ortel-dev/ortel/test/testenv"
)

// TestConfigValidate: the zero Config is valid (every field has a default),
// negative sizes are not, and Import refuses them before reading anything.
// Planted: without the MaxPending check, Import ran with a negative bound.
func TestConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"zero value", Config{}, ""},
		{"sizes", Config{BatchSize: 10, MaxPending: 100}, ""},
		{"negative batch", Config{BatchSize: -1}, "BatchSize -1"},
		{"negative pending", Config{MaxPending: -5}, "MaxPending -5"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			testenv.ErrContains(t, "Validate()", tc.cfg.Validate(), tc.want)
			if tc.want == "" {
				return
			}
			var sink collectSink
			_, err := Import(context.Background(), bytes.NewReader(nil), &sink, tc.cfg)
			testenv.ErrContains(t, "Import", err, tc.want)
		})
	}
}
