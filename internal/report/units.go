package report

import "fmt"

// FormatValue formats v in unit the way reports do: "s" as a duration
// (270.1µs), "By" in binary multiples (1.5 MiB), "J" in joules (3.2 mJ),
// "1/s" as a rate (1.25 k/s); any other unit as a number with it.
func FormatValue(v float64, unit string) string {
	switch unit {
	case "s":
		return dur(v)
	case "By":
		return bytesHuman(int64(v))
	case "J":
		return joules(v)
	case "1/s":
		return rate(v, "/s")
	}
	return fmt.Sprintf("%.4g %s", v, unit)
}
