package telemetry_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/ortel-dev/ortel/internal/telemetry"
	"github.com/ortel-dev/ortel/test/otlptest"
)

// With no endpoint configured, Setup writes replayable OTLP/JSON files.
func ExampleSetup() {
	dir, err := os.MkdirTemp("", "ortel-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)

	ctx := context.Background()
	tel, err := telemetry.Setup(ctx, telemetry.Config{ServiceName: "example", OutputDir: dir})
	if err != nil {
		fmt.Println(err)
		return
	}
	_, span := tel.TracerProvider.Tracer("example").Start(ctx, "work")
	span.End()
	if err := tel.Shutdown(ctx); err != nil {
		fmt.Println(err)
	}
	fmt.Println(tel.Resolved.Mode)
	for _, f := range tel.Files() {
		fmt.Println(filepath.Base(f))
	}
	fmt.Printf("%+v\n", tel.Stats().SpansExported)
}

// Resolve shows what Setup would do, for a doctor command; header values
// are never printed.
func ExampleResolve() {
	r, err := telemetry.Resolve(telemetry.Config{Endpoint: "http://collector:4317"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(r.Mode, r.TracesEndpoint, r.Traces.Insecure)
	fmt.Println(r.Describe()[0])
	// Output:
	// otlp collector:4317 true
	// mode: otlp (sent to a collector)
}

// A program passes what it prints through the Redactor of its environment,
// so a malformed header variable's credential never reaches a log line.
func ExampleRedactorFromEnv() {
	r := telemetry.RedactorFromEnv([]string{"OTEL_EXPORTER_OTLP_HEADERS=authorization Bearer S3CRET"})
	fmt.Println(r.Redact(`parse headers: "input"="authorization Bearer S3CRET"`))
	fmt.Println(r.Redact("token UzNDUkVU in base64"))
	// Output:
	// parse headers: "input"="<redacted>"
	// token <redacted> in base64
}

// Replay sends an OTLP/JSON lines file — here the embedded default's
// traces.jsonl — to a collector, once: a second replay sends nothing.
func ExampleReplay() {
	dir, err := os.MkdirTemp("", "ortel-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()
	tel, err := telemetry.Setup(ctx, telemetry.Config{OutputDir: dir})
	if err != nil {
		fmt.Println(err)
		return
	}
	_, span := tel.TracerProvider.Tracer("example").Start(ctx, "work")
	span.End()
	_ = tel.Shutdown(ctx)

	collector, err := otlptest.Start()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer collector.Close()
	r, err := telemetry.Resolve(telemetry.Config{Endpoint: "http://" + collector.Endpoint()})
	if err != nil {
		fmt.Println(err)
		return
	}
	for range 2 {
		res, err := telemetry.Replay(ctx, r, tel.Resolved.TracesFile())
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("sent %d %s records, %d earlier\n", res.Sent, res.Signal, res.Earlier)
	}
	fmt.Println(len(collector.Spans()), "span received")
	// Output:
	// sent 1 traces records, 0 earlier
	// sent 0 traces records, 1 earlier
	// 1 span received
}
