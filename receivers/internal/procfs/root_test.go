package procfs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRootFromEnv(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	os.WriteFile(file, nil, 0o644)
	tests := []struct {
		name, val, want, errHas string
		unset                   bool
	}{
		{name: "unset", unset: true, want: "/"},
		{name: "empty", val: "", want: "/"},
		{name: "dir", val: dir + "/", want: dir},
		{name: "relative", val: "host", want: "/", errHas: "absolute"},
		{name: "missing", val: filepath.Join(dir, "nope"), want: "/", errHas: "not a directory"},
		{name: "file", val: file, want: "/", errHas: "not a directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.unset {
				t.Setenv(EnvHostRoot, "x")
				os.Unsetenv(EnvHostRoot)
			} else {
				t.Setenv(EnvHostRoot, tt.val)
			}
			got, err := RootFromEnv()
			if got != tt.want {
				t.Errorf("root = %q, want %q", got, tt.want)
			}
			switch {
			case tt.errHas == "" && err != nil:
				t.Errorf("err = %v", err)
			case tt.errHas != "" && (err == nil || !strings.Contains(err.Error(), tt.errHas) || !strings.Contains(err.Error(), EnvHostRoot)):
				t.Errorf("err = %v, want one naming %s and saying %q", err, EnvHostRoot, tt.errHas)
			}
		})
	}
}
