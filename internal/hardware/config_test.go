package hardware

import (
	"testing"
	"time"

	"github.com/ortel-dev/ortel/test/testenv"
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
			testenv.ErrContains(t, "Validate()", tc.cfg.Validate(), tc.want)
		})
	}
}
