package thermal_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/ortel-dev/ortel/receivers"
	"github.com/ortel-dev/ortel/receivers/thermal"
)

// List the sensors the receiver found, or why there are none.
func Example() {
	r, err := thermal.New()
	if errors.Is(err, receivers.ErrUnsupported) {
		return // err says why, in plain words: print it in a doctor report
	}
	if err != nil {
		fmt.Println(err)
		return
	}
	defer r.Shutdown(context.Background())
	for _, s := range r.Sensors() {
		if s.Err != nil {
			fmt.Printf("%s (%s): %v\n", s.ID, s.Name, s.Err)
			continue
		}
		fmt.Printf("%s (%s): limits %v\n", s.ID, s.Name, s.Limits)
	}
}
