package hardware

import (
	"strings"
	"testing"
	"time"
)

// TestConfigValidate: process ids above 0 and a GPU wait not negative;
// the errors name the fields. Planted: without the PIDs check a pid of -1
// passed.
func TestConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"zero value", Config{}, ""},
		{"pids and wait", Config{PIDs: []int{1, 42}, GPUWait: 3 * time.Second}, ""},
		{"negative pid", Config{PIDs: []int{-1}}, "PIDs -1"},
		{"negative wait", Config{GPUWait: -time.Second}, "GPUWait -1s"},
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
		})
	}
}
