package rapl_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/ortel-dev/ortel/receivers"
	"github.com/ortel-dev/ortel/receivers/rapl"
)

// Energy per inference: read the counters before and after a batch of
// runs and divide the difference by the number of runs. Only zones without
// a parent are added up: a package includes its subzones.
func Example() {
	r, err := rapl.New()
	if errors.Is(err, receivers.ErrUnsupported) {
		return // err says why, in plain words: print it in a doctor report
	}
	if err != nil {
		fmt.Println(err)
		return
	}
	defer r.Shutdown(context.Background())

	before, err := r.Snapshot()
	if err != nil {
		fmt.Println(err)
	}
	const runs = 100
	// ... run the model runs times ...
	after, err := r.Snapshot()
	if err != nil {
		fmt.Println(err)
	}
	start := map[string]float64{}
	for _, z := range before {
		start[z.ID] = z.Joules
	}
	for _, z := range after {
		if j, ok := start[z.ID]; ok && z.Parent == "" {
			fmt.Printf("%s (%s): %.3f J per inference\n", z.Name, z.Type, (z.Joules-j)/runs)
		}
	}
}
