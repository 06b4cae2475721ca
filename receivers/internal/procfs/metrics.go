package procfs

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ortel-dev/ortel/semconv"
)

// Selection says which of a receiver's metrics are on.
type Selection map[string]bool

// Select turns a receiver's metrics on by their registry default
// (semconv "default_enabled", the Default column of docs/metrics.md), then
// all of them when all is set, then applies overrides (name -> on). An
// override naming a metric the receiver does not emit is an error that
// lists the ones it does.
func Select(source string, names []string, all bool, overrides map[string]bool) (Selection, error) {
	sel := make(Selection, len(names))
	for _, n := range names {
		m, _ := semconv.LookupMetric(n)
		sel[n] = all || m.DefaultEnabled
	}
	for n, on := range overrides {
		if !slices.Contains(names, n) {
			return nil, fmt.Errorf("%s: unknown metric %q: this receiver emits %s", source, n, strings.Join(names, ", "))
		}
		sel[n] = on
	}
	return sel, nil
}

// On reports whether the metric called name is on.
func (s Selection) On(name string) bool { return s[name] }
