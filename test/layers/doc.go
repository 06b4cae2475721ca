// Package layers holds the test that the repository's imports flow one
// way, as docs/ARCHITECTURE.md ("Layers") says: semconv <- instrument,
// receivers <- internal <- cmd, with examples on the public packages only
// and test support used by tests only.
//
// The package has no code besides its test.
package layers
