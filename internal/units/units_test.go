package units

import (
	"math"
	"testing"
)

func TestDuration(t *testing.T) {
	for _, tc := range []struct {
		s    float64
		want string
	}{
		{0, "0"},
		{1e-9, "1ns"},
		{999e-9, "999ns"},
		{math.Nextafter(1e-6, 0), "1000ns"},
		{1e-6, "1.0µs"},
		{270.1e-6, "270.1µs"},
		{math.Nextafter(1e-3, 0), "1000.0µs"},
		{1e-3, "1.00ms"},
		{0.12609, "126.09ms"},
		{math.Nextafter(1, 0), "1000.00ms"},
		{1, "1.00s"},
		{2.5, "2.50s"},
		{3600, "3600.00s"},
		// A negative duration is scaled by its magnitude (it printed
		// "-1200000ns" before units).
		{-1.2e-3, "-1.20ms"},
		{-35e-6, "-35.0µs"},
	} {
		if got := Duration(tc.s); got != tc.want {
			t.Errorf("Duration(%g) = %q, want %q", tc.s, got, tc.want)
		}
	}
}

func TestSignedDuration(t *testing.T) {
	for _, tc := range []struct {
		s    float64
		want string
	}{
		{0, "+0"},
		{1.2e-3, "+1.20ms"},
		{-35e-6, "-35.0µs"},
		{-2, "-2.00s"},
	} {
		if got := SignedDuration(tc.s); got != tc.want {
			t.Errorf("SignedDuration(%g) = %q, want %q", tc.s, got, tc.want)
		}
	}
}

func TestBytes(t *testing.T) {
	for _, tc := range []struct {
		n    int64
		want string
	}{
		{0, "0 B"},
		{1023, "1023 B"},
		{1024, "1.0 KiB"},
		{1536, "1.5 KiB"},
		{1<<20 - 1, "1024.0 KiB"},
		{1 << 20, "1.0 MiB"},
		{12_900_000, "12.3 MiB"},
		{1 << 30, "1.0 GiB"},
		{5 << 40, "5120.0 GiB"},
		// A negative size is scaled by its magnitude (it printed
		// "-5000 B" before units).
		{-5000, "-4.9 KiB"},
		{-1023, "-1023 B"},
	} {
		if got := Bytes(tc.n); got != tc.want {
			t.Errorf("Bytes(%d) = %q, want %q", tc.n, got, tc.want)
		}
	}
}

func TestBytesExact(t *testing.T) {
	for _, tc := range []struct {
		n          int64
		exact, chg string
	}{
		{0, "0 B", "+0 B"},
		{999, "999 B", "+999 B"},
		{1023, "1,023 B", "+1,023 B"},
		{1536, "1,536 B (1.5 KiB)", "+1,536 B (1.5 KiB)"},
		{1234567, "1,234,567 B (1.2 MiB)", "+1,234,567 B (1.2 MiB)"},
		{-1000, "-1,000 B", "-1,000 B"},
		{-2048, "-2,048 B (-2.0 KiB)", "-2,048 B (2.0 KiB)"},
	} {
		if got := BytesExact(tc.n); got != tc.exact {
			t.Errorf("BytesExact(%d) = %q, want %q", tc.n, got, tc.exact)
		}
		if got := SignedBytes(tc.n); got != tc.chg {
			t.Errorf("SignedBytes(%d) = %q, want %q", tc.n, got, tc.chg)
		}
	}
}

func TestRate(t *testing.T) {
	for _, tc := range []struct {
		v    float64
		unit string
		want string
	}{
		{0, "/s", "0 /s"},
		{4.6, "runs/s", "4.6 runs/s"},
		{999, "B/s", "999 B/s"},
		{1000, "B/s", "1.00 kB/s"},
		{1250, "/s", "1.25 k/s"},
		{20e9, "B/s", "20.00 GB/s"},
		{138.9e9, "FLOP/s", "138.90 GFLOP/s"},
		{2.5e12, "FLOP/s", "2.50 TFLOP/s"},
		{3.1e6, "FLOP", "3.10 MFLOP"},
	} {
		if got := Rate(tc.v, tc.unit); got != tc.want {
			t.Errorf("Rate(%g, %q) = %q, want %q", tc.v, tc.unit, got, tc.want)
		}
	}
}

func TestEnergy(t *testing.T) {
	for _, tc := range []struct {
		j    float64
		want string
	}{
		{0, "0 J"},
		{850e-6, "850 µJ"},
		{1e-3, "1 mJ"},
		{3.2e-3, "3.2 mJ"},
		{1, "1 J"},
		{12.5, "12.5 J"},
	} {
		if got := Energy(tc.j); got != tc.want {
			t.Errorf("Energy(%g) = %q, want %q", tc.j, got, tc.want)
		}
	}
}

func TestPercent(t *testing.T) {
	for _, tc := range []struct {
		frac     float64
		decimals int
		want     string
	}{
		{0, 1, "0.0%"},
		{0.265, 1, "26.5%"},
		{0.265, 0, "26%"},
		{0.275, 0, "28%"},
		{1.5, 0, "150%"},
		{0.00123, 2, "0.12%"},
	} {
		if got := Percent(tc.frac, tc.decimals); got != tc.want {
			t.Errorf("Percent(%g, %d) = %q, want %q", tc.frac, tc.decimals, got, tc.want)
		}
	}
}

func TestChange(t *testing.T) {
	for _, tc := range []struct {
		frac float64
		want string
	}{
		{0, "+0.0%"},
		{0.473, "+47.3%"},
		{-0.05, "-5.0%"},
	} {
		if got := Change(tc.frac); got != tc.want {
			t.Errorf("Change(%g) = %q, want %q", tc.frac, got, tc.want)
		}
	}
}

func TestValue(t *testing.T) {
	for _, tc := range []struct {
		v    float64
		unit string
		want string
	}{
		{270.1e-6, "s", "270.1µs"},
		{12_900_000, "By", "12.3 MiB"},
		{20e9, "By/s", "20.00 GB/s"},
		{138.9e9, "{flop}/s", "138.90 GFLOP/s"},
		{12.54, "{flop}/By", "12.5 FLOP/B"},
		{3.2e-3, "J", "3.2 mJ"},
		{1250, "1/s", "1.25 k/s"},
		{0.26512, "1", "0.265"},
		{71, "Cel", "71 °C"},
		{93, "", "93"},
		{93, "{node}", "93 nodes"},
		{1, "{node}", "1 node"},
		{1, "{item}/s", "1 items/s"},
		{1.2, "{item}/s", "1.2 items/s"},
		{42, "W", "42 W"},
		{42, "{}", "42 {}"},
	} {
		if got := Value(tc.v, tc.unit); got != tc.want {
			t.Errorf("Value(%g, %q) = %q, want %q", tc.v, tc.unit, got, tc.want)
		}
	}
}
