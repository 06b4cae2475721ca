package procfs

import (
	"fmt"
	"strings"

	"github.com/ortel-dev/ortel/receivers"
)

// Selection says which of a receiver's metrics are on. It holds every
// metric of the receiver's table, on or off.
type Selection map[string]bool

// Select turns the metrics of table, a receiver's generated table (its
// package's Metrics function, from the semconv registry), on by their
// registry default (DefaultEnabled, the Default column of
// docs/metrics.md), then all of them when all is set, then applies
// overrides (name -> on). An override naming a metric the receiver does
// not emit is an error that lists the ones it does.
func Select(source string, table []receivers.Metric, all bool, overrides map[string]bool) (Selection, error) {
	sel := make(Selection, len(table))
	for _, m := range table {
		sel[m.Name] = all || m.DefaultEnabled
	}
	for n, on := range overrides {
		if !sel.Has(n) {
			names := make([]string, len(table))
			for i, m := range table {
				names[i] = m.Name
			}
			return nil, fmt.Errorf("%s: unknown metric %q: this receiver emits %s", source, n, strings.Join(names, ", "))
		}
		sel[n] = on
	}
	return sel, nil
}

// On reports whether the metric called name is on.
func (s Selection) On(name string) bool { return s[name] }

// Has reports whether the metric called name is one of the receiver's,
// on or off.
func (s Selection) Has(name string) bool {
	_, ok := s[name]
	return ok
}
