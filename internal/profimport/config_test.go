package profimport

import (
	"bytes"
	"context"
	"strings"
	"testing"
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
			err := tc.cfg.Validate()
			if tc.want == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Validate() = %v, want an error containing %q", err, tc.want)
			}
			var sink collectSink
			if _, err := Import(context.Background(), bytes.NewReader(nil), &sink, tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Import = %v, want the Validate error", err)
			}
		})
	}
}
