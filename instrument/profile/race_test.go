//go:build race

package profile

// raceEnabled reports whether the tests run under the race detector, which
// slows parsing about tenfold.
const raceEnabled = true
