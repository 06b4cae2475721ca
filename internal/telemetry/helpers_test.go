package telemetry

import (
	"context"
	"testing"
	"time"
)

// testContext bounds a test's waiting on exporters and receivers.
func testContext(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}
