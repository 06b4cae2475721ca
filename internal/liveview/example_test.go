package liveview_test

import (
	"context"
	"fmt"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/ortel-dev/ortel/internal/liveview"
	"github.com/ortel-dev/ortel/semconv"
)

// The live view's reader goes on the MeterProvider that exports (in ortel,
// through telemetry.Config.Readers); Serve then answers on loopback.
func Example() {
	reader := liveview.NewReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer func() { _ = mp.Shutdown(context.Background()) }()
	runs, _ := semconv.NewOnnxruntimeRunDuration(mp.Meter("example"))

	view := liveview.New(reader, liveview.Config{})
	srv, err := liveview.Serve(view, "0", false, "") // a bare port: 127.0.0.1
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()

	runs.Record(context.Background(), 0.004)
	_ = view.Sample(context.Background()) // Run does this at 12.5 Hz
	h := view.History(liveview.DefaultHistory)
	fmt.Println(len(h), h[0].Runs.Total)
	// Output: 1 1
}
