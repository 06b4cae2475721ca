package profimport

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/resource"

	"github.com/ortel-dev/ortel/instrument/profile"
)

// Resource attributes describing where imported spans came from, beside
// the semantic conventions' process.pid and service.name.
const (
	// AttrProfileFile is the profile file imported (its base name; a list
	// when several).
	AttrProfileFile = "ortel.profile.file"
	// AttrProfileStart is the wall-clock start of the (first) profile,
	// RFC 3339.
	AttrProfileStart = "ortel.profile.start"
	// UnknownService is service.name when neither a flag, the environment
	// nor the profile names the service: the specification's fallback.
	UnknownService = "unknown_service"
)

// ResourceConfig says how [Resource] describes the profiled process.
type ResourceConfig struct {
	// ServiceName, when set, is service.name (ortel import --service-name):
	// it wins over the environment and the profile.
	ServiceName string
	// Attrs are resource attributes given on the command line (--resource
	// k=v): they win over the environment and the profile.
	Attrs []attribute.KeyValue
	// Profiles are the profile files; what they say describes the process:
	// the pid of their events (process.pid, when they agree), their names
	// and the first one's start.
	Profiles []string
	// Start, when set, is the profile's start (--start), else read as
	// StartTime reads it.
	Start time.Time
}

// Resource builds the resource of imported spans and metrics: the process
// that wrote the profiles, not ortel. Precedence, as the OpenTelemetry
// specification orders configuration: ServiceName and Attrs, then the
// environment (OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES), then what the
// profiles say, and service.name "unknown_service" when nothing names it.
// ortel's own host, pid and executable are never on it. notes says what
// the profiles could not give (pids that disagree, say).
func Resource(ctx context.Context, cfg ResourceConfig) (res *resource.Resource, notes []string, err error) {
	attrs := []attribute.KeyValue{attribute.String("service.name", UnknownService)}
	pids := map[int64]bool{}
	var names []string
	for _, p := range cfg.Profiles {
		names = append(names, filepath.Base(p))
		if pid := profilePID(p); pid != 0 {
			pids[pid] = true
		}
	}
	switch len(pids) {
	case 0:
		notes = append(notes, "the profiles hold no pid: process.pid is not set")
	case 1:
		for pid := range pids {
			attrs = append(attrs, attribute.Int64("process.pid", pid))
		}
	default:
		notes = append(notes, fmt.Sprintf("the profiles come from %d processes: process.pid is not set (import them one at a time to keep it)", len(pids)))
	}
	if len(names) == 1 {
		attrs = append(attrs, attribute.String(AttrProfileFile, names[0]))
	} else if len(names) > 1 {
		attrs = append(attrs, attribute.StringSlice(AttrProfileFile, names))
	}
	if start := cfg.Start; !start.IsZero() || len(cfg.Profiles) > 0 {
		if start.IsZero() {
			start, _ = StartTime(cfg.Profiles[0])
		}
		attrs = append(attrs, attribute.String(AttrProfileStart, start.Format(time.RFC3339Nano)))
	}
	res = resource.NewSchemaless(attrs...)
	env, envErr := resource.New(ctx, resource.WithFromEnv())
	if env != nil {
		if res, err = resource.Merge(res, env); err != nil {
			return nil, notes, err
		}
	}
	if envErr != nil {
		// A malformed OTEL_RESOURCE_ATTRIBUTES: what could be read is kept.
		notes = append(notes, "OTEL_RESOURCE_ATTRIBUTES: "+envErr.Error())
	}
	flags := append([]attribute.KeyValue(nil), cfg.Attrs...)
	if cfg.ServiceName != "" {
		flags = append(flags, attribute.String("service.name", cfg.ServiceName))
	}
	res, err = resource.Merge(res, resource.NewSchemaless(flags...))
	return res, notes, err
}

// profilePID is the pid of the first event of the profile at path that has
// one (among its first 100), or 0.
func profilePID(path string) int64 {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	rd := profile.NewReader(f)
	for i := 0; i < 100; i++ {
		ev, err := rd.Next()
		if err != nil {
			return 0
		}
		if ev.PID != 0 {
			return ev.PID
		}
	}
	return 0
}

// ErrBadResourceAttr is returned (wrapped) by ParseResourceAttr for a
// value that is not KEY=VALUE.
var ErrBadResourceAttr = errors.New("want KEY=VALUE, such as deployment.environment.name=prod")

// ParseResourceAttr parses one KEY=VALUE resource attribute (a string
// value; the key must not be empty).
func ParseResourceAttr(s string) (attribute.KeyValue, error) {
	k, v, ok := strings.Cut(s, "=")
	k = strings.TrimSpace(k)
	if !ok || k == "" {
		return attribute.KeyValue{}, fmt.Errorf("%q: %w", s, ErrBadResourceAttr)
	}
	return attribute.String(k, v), nil
}
