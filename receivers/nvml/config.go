package nvml

import (
	"time"

	"go.opentelemetry.io/otel/metric"

	"github.com/ortel-dev/ortel/receivers/internal/options"
	"github.com/ortel-dev/ortel/receivers/internal/procfs"
)

// Option configures a Receiver.
type Option func(*config)

// DefaultTimeout is how long a collection waits for one GPU's readings.
const DefaultTimeout = 250 * time.Millisecond

type config struct {
	procfs.Config // its root holds the /proc/PID/cgroup files WithAllProcesses reads
	pids          []int
	allProcs      bool // WithAllProcesses
	timeout       time.Duration
	platform      platformConfig // the NVML library, where there is one

	// Seams for tests: afterRead, when set, is called each time a GPU's
	// reading goroutine finishes, even after its collection gave up on it,
	// so tests wait on it instead of sleeping; now is the clock samples
	// are stamped with (it paces the PCIe throughput integration);
	// expired, when set, replaces the collection's timer: the collection
	// gives up on the GPUs still reading when it receives, so a test says
	// when the timeout passes instead of racing a wall clock.
	afterRead func(index int)
	now       func() time.Time
	expired   <-chan time.Time
}

func newConfig(opts []Option) config {
	return options.Apply(config{Config: procfs.NewConfig(), timeout: DefaultTimeout, now: time.Now}, opts)
}

// WithMeterProvider sets the MeterProvider the receiver creates its
// instruments with. The default is the global one, otel.GetMeterProvider().
func WithMeterProvider(mp metric.MeterProvider) Option { return options.MeterProvider[config](mp) }

// WithPIDs sets the processes whose GPU memory and utilization are
// reported (nvidia.gpu.process.*). The default is the calling process.
func WithPIDs(pids ...int) Option {
	return func(c *config) { c.pids = append([]int(nil), pids...) }
}

// WithTimeout sets how long a collection waits for one GPU's readings
// before it reports the GPU degraded and goes on without them. The
// default is DefaultTimeout (250 ms); a collection's own context deadline
// shortens it. Values of zero or less keep the default.
func WithTimeout(d time.Duration) Option {
	return func(c *config) {
		if d > 0 {
			c.timeout = d
		}
	}
}

// WithMetric turns the metric called name on or off, and with it the NVML
// calls behind it. Default: on or off as the Default column of [Metrics]
// says. New fails on a name the receiver does not emit.
func WithMetric(name string, on bool) Option { return options.Metric[config](name, on) }

// WithAllMetrics turns on every metric the receiver can emit, before any
// WithMetric applies.
func WithAllMetrics() Option { return options.AllMetrics[config]() }
