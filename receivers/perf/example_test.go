package perf_test

import (
	"context"
	"fmt"

	"github.com/ortel-dev/ortel/receivers/perf"
)

// Report each part the way `ortel doctor` does.
func Example() {
	r, err := perf.New()
	if err != nil {
		fmt.Println("perf:", err)
		return
	}
	defer r.Shutdown(context.Background())
	for _, p := range r.Parts() {
		status := "ok"
		if p.Err != nil {
			status = "unsupported"
		}
		fmt.Printf("perf (%s): %s\n", p.Name, status)
	}
}
