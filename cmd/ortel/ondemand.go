package main

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/ortel-dev/ortel/instrument"
	"github.com/ortel-dev/ortel/internal/bench"
)

// onDemandSignal is the signal that asks a running bench to profile its
// next runs.
const onDemandSignal = syscall.SIGUSR1

// onDemandStarted, when set (tests), is told once the signal is watched.
var onDemandStarted func()

// watchProfileSignal profiles the next runs runs of od's sessions on each
// SIGUSR1 (rate-limited by od), saying on stderr what it did, until the
// returned stop is called.
func watchProfileSignal(e *env, od *bench.OnDemand, runs int) (stop func()) {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, onDemandSignal)
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		for {
			select {
			case <-ch:
				switch err := od.Profile(runs); {
				case err == nil:
					fmt.Fprintf(e.stderr, "ortel bench: SIGUSR1: profiling the next %d runs\n", runs)
				case errors.Is(err, instrument.ErrRateLimited):
					fmt.Fprintf(e.stderr, "ortel bench: SIGUSR1 ignored: on-demand profiling is limited to once per %v\n", instrument.DefaultTriggerInterval)
				default:
					fmt.Fprintf(e.stderr, "ortel bench: SIGUSR1 ignored: %v\n", err)
				}
			case <-done:
				return
			}
		}
	}()
	if onDemandStarted != nil {
		onDemandStarted()
	}
	return func() {
		signal.Stop(ch)
		close(done)
		<-finished
	}
}
