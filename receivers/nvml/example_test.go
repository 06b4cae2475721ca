package nvml_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ortel-dev/ortel/receivers"
	"github.com/ortel-dev/ortel/receivers/nvml"
)

// Wait for the GPUs, then read the energy of each before and after some
// work.
func Example() {
	r, err := nvml.New()
	if errors.Is(err, receivers.ErrUnsupported) {
		return // err says why in plain words, for a doctor report
	}
	if err != nil {
		fmt.Println(err)
		return
	}
	defer r.Shutdown(context.Background())

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := r.Ready(ctx); err != nil {
		fmt.Println(err) // no GPU after all, or still initializing
		return
	}
	before, _ := r.Snapshot(ctx)
	// ... run the model ...
	after, _ := r.Snapshot(ctx)
	for i, s := range after {
		e0, ok0 := before[i].Values[nvml.Energy]
		e1, ok1 := s.Values[nvml.Energy]
		if ok0 && ok1 {
			fmt.Printf("%s (%s): %.1f J\n", s.Device.Name, s.Device.Model, e1-e0)
		}
	}
}
