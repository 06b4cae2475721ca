package stack

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Paths of the stack's files, relative to the repository root.
const (
	ComposeFile      = "docker-compose.yaml"
	ConfigDir        = "otelcol-config"
	CollectorConfig  = "otelcol-config/collector.yaml"
	BuildManifest    = "otelcol-config/builder-config.yaml"
	PrometheusConfig = "otelcol-config/prometheus.yml"
	DashboardsDir    = "otelcol-config/grafana/dashboards"
	ProvisioningDir  = "otelcol-config/grafana/provisioning"
	BuildScript      = "scripts/build-collector.sh"
)

const modulePath = "github.com/ortel-dev/ortel"

// ErrNoRepo reports that no ortel checkout encloses a folder.
var ErrNoRepo = errors.New("not inside an ortel checkout (no go.mod of module " + modulePath + " above it)")

// RepoRoot returns the root of the ortel checkout that encloses dir: the
// nearest folder at or above dir whose go.mod declares ortel's module.
func RepoRoot(dir string) (string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("find the ortel checkout above %q: %w", dir, err)
	}
	start := dir
	for {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && declaresModule(string(b)) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("%q: %w", start, ErrNoRepo)
		}
		dir = parent
	}
}

// declaresModule reports whether a go.mod text declares ortel's module.
func declaresModule(gomod string) bool {
	for line := range strings.SplitSeq(gomod, "\n") {
		f := strings.Fields(line)
		if len(f) == 2 && f[0] == "module" && strings.Trim(f[1], `"`) == modulePath {
			return true
		}
	}
	return false
}
