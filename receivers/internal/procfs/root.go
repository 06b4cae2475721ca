package procfs

import (
	"fmt"
	"os"
	"path/filepath"
)

// EnvHostRoot names the environment variable that moves the root the host
// receivers read /proc and /sys under, for an agent running in a container
// with the host's file system mounted at, say, /host.
const EnvHostRoot = "ORTEL_HOST_ROOT"

// RootFromEnv returns the root named by ORTEL_HOST_ROOT, or "/" when it is
// unset. A value that is not an absolute path to a directory is ignored:
// the returned error says why (report it once) and the root is "/".
func RootFromEnv() (string, error) {
	v, ok := os.LookupEnv(EnvHostRoot)
	if !ok || v == "" {
		return "/", nil
	}
	if !filepath.IsAbs(v) {
		return "/", fmt.Errorf("ortel: ignoring %s=%q: want an absolute path; reading /proc under /", EnvHostRoot, v)
	}
	if fi, err := os.Stat(v); err != nil || !fi.IsDir() {
		return "/", fmt.Errorf("ortel: ignoring %s=%q: not a directory; reading /proc under /", EnvHostRoot, v)
	}
	return filepath.Clean(v), nil
}
