// Package otlptest is a real, in-process OTLP/gRPC receiver for tests: it
// serves the collector's TraceService and MetricsService on a loopback port,
// keeps everything it accepts, and lets a test wait for data without sleeping
// and inject faults (error statuses, slowness) to exercise exporters the way
// a collector that is down, refusing or slow would.
//
//	r, err := otlptest.Start()
//	...
//	defer r.Close()
//	// point an exporter at r.Endpoint() (plaintext gRPC)
//	err = r.WaitSpans(ctx, otlptest.HasSpanNamed("onnxruntime.run"))
//
// Everything returned is the receiver's own data: read it, do not modify it.
//
// The package emits no telemetry.
package otlptest
