package lifecycle

import (
	"errors"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"

	"github.com/ortel-dev/ortel/receivers/internal/procfs"
	"github.com/ortel-dev/ortel/semconv"
)

func TestCreate(t *testing.T) {
	in := NewInstruments(noop.NewMeterProvider().Meter("test"), procfs.Selection{semconv.HwPowerName: true, semconv.HwEnergyName: false})
	var power metric.Float64ObservableGauge
	var energy metric.Float64ObservableCounter
	Create(in, semconv.HwPowerName, &power, semconv.NewHwPower)
	Create(in, semconv.HwEnergyName, &energy, semconv.NewHwEnergy)
	if power == nil || energy != nil {
		t.Errorf("on: %v, off: %v; want only the one that is on", power, energy)
	}
	if in.Len() != 1 || in.Err("test") != nil {
		t.Errorf("%d instruments, %v; want 1, nil", in.Len(), in.Err("test"))
	}
}

func TestCreateFailure(t *testing.T) {
	in := NewInstruments(noop.NewMeterProvider().Meter("test"), procfs.Selection{semconv.HwPowerName: true})
	bad := errors.New("invalid instrument name")
	var gauge metric.Float64ObservableGauge
	Create(in, semconv.HwPowerName, &gauge, func(metric.Meter, ...metric.Float64ObservableGaugeOption) (metric.Float64ObservableGauge, error) {
		return nil, bad
	})
	err := in.Err("rapl")
	if !errors.Is(err, bad) || !strings.Contains(err.Error(), "rapl: create hw.power: ") {
		t.Errorf("Err = %v, want %q for hw.power from rapl", err, bad)
	}
	var cb Callback
	if err := cb.Register("rapl", in, nil); !errors.Is(err, bad) {
		t.Errorf("Register = %v, want the creation error", err)
	}
	if in.Len() != 0 {
		t.Errorf("%d instruments kept, want none", in.Len())
	}
}

// TestNotInTable: an instrument for a metric that is not in the receiver's
// table (the registry does not give the metric to this receiver) is an
// error naming it, whether the receiver creates it through Create or
// itself through Add, so that the receiver fails to start instead of
// emitting a metric its table, WithMetric and docs/metrics.md do not know.
func TestNotInTable(t *testing.T) {
	meter := noop.NewMeterProvider().Meter("test")
	tests := []struct {
		name   string
		create func(*Instruments)
	}{
		{"Create", func(in *Instruments) {
			var energy metric.Float64ObservableCounter
			Create(in, semconv.HwEnergyName, &energy, semconv.NewHwEnergy)
			if energy != nil {
				t.Error("Create made an instrument for a metric outside the table")
			}
		}},
		{"Add", func(in *Instruments) {
			energy, err := semconv.NewHwEnergy(meter)
			in.Add(semconv.HwEnergyName, energy, err)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := NewInstruments(meter, procfs.Selection{semconv.HwPowerName: true})
			tt.create(in)
			err := in.Err("rapl")
			if err == nil || !strings.Contains(err.Error(), "rapl: create hw.energy: not one of this receiver's metrics") {
				t.Errorf("Err = %v, want one naming hw.energy as outside the table", err)
			}
			if in.Len() != 0 {
				t.Errorf("%d instruments kept, want none", in.Len())
			}
		})
	}
}
