package units_test

import (
	"fmt"

	"github.com/ortel-dev/ortel/internal/units"
)

func Example() {
	fmt.Println(units.Duration(0.12609), units.Duration(270.1e-6))
	fmt.Println(units.Bytes(12_900_000), units.BytesExact(1536))
	fmt.Println(units.Rate(138.9e9, "FLOP/s"), units.Rate(20e9, "B/s"))
	fmt.Println(units.Energy(3.2e-3), units.Percent(0.265, 1), units.Change(0.473))
	fmt.Println(units.Value(93, "{node}"), units.Value(1250, "1/s"))
	// Output:
	// 126.09ms 270.1µs
	// 12.3 MiB 1,536 B (1.5 KiB)
	// 138.90 GFLOP/s 20.00 GB/s
	// 3.2 mJ 26.5% +47.3%
	// 93 nodes 1.25 k/s
}
