package attach

import (
	"testing"

	"github.com/ortel-dev/ortel/test/testenv"
)

// TestConfigValidate: Start needs something to attach to, not both kinds,
// and process ids above 0; the errors name the fields for the CLI to map
// to flags. Planted: dropping the "not both" case let {PIDs} and {Library}
// through together.
func TestConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
		want string // "" for valid
	}{
		{"pids", Config{PIDs: []int{1, 2}}, ""},
		{"library", Config{Library: "/usr/lib/libonnxruntime.so"}, ""},
		{"nothing", Config{}, "nothing to attach to"},
		{"both", Config{PIDs: []int{1}, Library: "/x.so"}, "not both"},
		{"zero pid", Config{PIDs: []int{3, 0}}, "PIDs 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			testenv.ErrContains(t, "Validate()", tc.cfg.Validate(), tc.want)
		})
	}
}
