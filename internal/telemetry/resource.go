package telemetry

import (
	"context"
	"fmt"
	"runtime"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/resource"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
)

// newResource builds the resource every span and metric carries: the
// detected host (host.name, host.arch), OS (os.type, os.description),
// process (process.pid, process.executable.name, process.runtime.*) and
// SDK (telemetry.sdk.*) attributes, then the configured ResourceAttrs,
// which win over detected ones. Process command-line arguments and owner
// are deliberately left out: arguments can hold credentials.
//
// A detector that fails leaves its attributes out; the failure is returned
// as a warning, not an error.
func newResource(ctx context.Context, r Resolved) (*resource.Resource, []string) {
	res, err := resource.New(ctx,
		resource.WithHost(),
		resource.WithAttributes(hostArch()...),
		resource.WithOS(),
		resource.WithProcessPID(),
		resource.WithProcessExecutableName(),
		resource.WithProcessRuntimeName(),
		resource.WithProcessRuntimeVersion(),
		resource.WithProcessRuntimeDescription(),
		resource.WithTelemetrySDK(),
		resource.WithSchemaURL(semconv.SchemaURL),
		resource.WithAttributes(r.ResourceAttrs...),
	)
	var warnings []string
	if err != nil {
		warnings = append(warnings, fmt.Sprintf("resource detection incomplete: %v", err))
	}
	if res == nil {
		res = resource.NewWithAttributes(semconv.SchemaURL, r.ResourceAttrs...)
	}
	return res, warnings
}

// hostArch returns host.arch for the machine, in the semantic conventions'
// values; nothing for an architecture they do not name.
func hostArch() []attribute.KeyValue {
	switch runtime.GOARCH {
	case "amd64":
		return []attribute.KeyValue{semconv.HostArchAMD64}
	case "arm64":
		return []attribute.KeyValue{semconv.HostArchARM64}
	case "arm":
		return []attribute.KeyValue{semconv.HostArchARM32}
	case "386":
		return []attribute.KeyValue{semconv.HostArchX86}
	case "ppc64", "ppc64le":
		return []attribute.KeyValue{semconv.HostArchPPC64}
	case "s390x":
		return []attribute.KeyValue{semconv.HostArchS390x}
	}
	return nil
}
