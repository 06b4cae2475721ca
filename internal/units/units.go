// Package units formats measured values for people, the one way every
// ortel output does it: durations adaptively in ns, µs, ms or s
// ("270.1µs", "126.09ms"), sizes in binary multiples ("12.3 MiB"), rates
// with an SI prefix ("138.90 GFLOP/s", "1.25 k/s"), energy in J, mJ or µJ,
// fractions as percentages ("26.5%") and changes with their sign
// ("+47.3%"). Value picks the right one from a UCUM unit ("s", "By",
// "By/s", "{flop}/s", "J", "1/s", "Cel", "{node}", ...), so a table of
// metrics or a finding's evidence needs no switch of its own.
//
// The report (text, Markdown, HTML), the analysis findings, the comparison,
// the history and the commands all format through this package; the
// charts' JavaScript (internal/report/html, the live view's page) mirrors
// Duration, Rate and Bytes in the browser.
package units

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Duration formats seconds adaptively: "0", "850ns", "270.1µs",
// "126.09ms", "2.50s". A negative duration keeps its sign in the unit its
// magnitude calls for ("-1.20ms").
func Duration(s float64) string {
	a := math.Abs(s)
	switch {
	case s == 0:
		return "0"
	case a < 1e-6:
		return fmt.Sprintf("%.0fns", s*1e9)
	case a < 1e-3:
		return fmt.Sprintf("%.1fµs", s*1e6)
	case a < 1:
		return fmt.Sprintf("%.2fms", s*1e3)
	}
	return fmt.Sprintf("%.2fs", s)
}

// SignedDuration is Duration with a "+" or "-" always in front: a change
// of time, "+1.20ms", "-35.0µs".
func SignedDuration(s float64) string {
	if s < 0 {
		return "-" + Duration(-s)
	}
	return "+" + Duration(s)
}

// Bytes formats a size in binary multiples to one decimal: "512 B",
// "1.5 KiB", "12.3 MiB", "1.1 GiB". A negative size keeps its sign in the
// multiple its magnitude calls for ("-4.9 KiB").
func Bytes(n int64) string {
	a := n
	if a < 0 {
		a = -a
	}
	switch {
	case a >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case a >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case a >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// BytesExact is n with thousands separators and, from 1 KiB on, its size
// in binary multiples: "1,536 B (1.5 KiB)". For growths that are often
// below the rounding of Bytes.
func BytesExact(n int64) string {
	digits := strconv.FormatInt(n, 10)
	out := make([]byte, 0, len(digits)+len(digits)/3)
	for i := range len(digits) {
		if i > 0 && (len(digits)-i)%3 == 0 && digits[i-1] != '-' {
			out = append(out, ',')
		}
		out = append(out, digits[i])
	}
	if n < 1<<10 && n > -(1<<10) {
		return string(out) + " B"
	}
	return string(out) + " B (" + Bytes(n) + ")"
}

// SignedBytes is BytesExact of the magnitude with a "+" or "-" in front:
// a change of size, "+1,536 B (1.5 KiB)".
func SignedBytes(d int64) string {
	if d < 0 {
		return "-" + BytesExact(-d)
	}
	return "+" + BytesExact(d)
}

// Rate formats a rate with an SI prefix and two decimals from 1000 on,
// three significant digits below: "138.90 GFLOP/s", "20.00 GB/s",
// "1.25 k/s", "4.6 runs/s". unit is what follows the prefix ("FLOP/s",
// "B/s", "/s").
func Rate(v float64, unit string) string {
	switch {
	case v >= 1e12:
		return fmt.Sprintf("%.2f T%s", v/1e12, unit)
	case v >= 1e9:
		return fmt.Sprintf("%.2f G%s", v/1e9, unit)
	case v >= 1e6:
		return fmt.Sprintf("%.2f M%s", v/1e6, unit)
	case v >= 1e3:
		return fmt.Sprintf("%.2f k%s", v/1e3, unit)
	}
	return fmt.Sprintf("%.3g %s", v, unit)
}

// Energy formats joules to three significant digits: "0 J", "850 µJ",
// "3.2 mJ", "12.5 J".
func Energy(j float64) string {
	switch {
	case j == 0:
		return "0 J"
	case j < 1e-3:
		return fmt.Sprintf("%.3g µJ", j*1e6)
	case j < 1:
		return fmt.Sprintf("%.3g mJ", j*1e3)
	}
	return fmt.Sprintf("%.3g J", j)
}

// Percent formats a fraction as a percentage with the given decimals:
// Percent(0.265, 1) is "26.5%", Percent(0.265, 0) "27%".
func Percent(frac float64, decimals int) string {
	return fmt.Sprintf("%.*f%%", decimals, 100*frac)
}

// Change formats a relative change as a signed percentage to one
// decimal: Change(0.473) is "+47.3%", Change(-0.05) "-5.0%".
func Change(frac float64) string { return fmt.Sprintf("%+.1f%%", 100*frac) }

// Value formats v in its UCUM unit the way reports do:
//
//	"s"          Duration              270.1µs
//	"By"         Bytes                 12.3 MiB
//	"By/s"       Rate                  20.00 GB/s
//	"{flop}/s"   Rate                  138.90 GFLOP/s
//	"{flop}/By"  three digits          12.5 FLOP/B
//	"J"          Energy                3.2 mJ
//	"1/s"        Rate                  1.25 k/s
//	"1"          three digits          0.265
//	"Cel"        degrees               71 °C
//	"{node}"     the noun, plural      93 nodes; "{item}/s": 1.2 items/s
//	""           the number            93
//
// Any other unit follows the number: "42 W".
func Value(v float64, unit string) string {
	switch unit {
	case "s":
		return Duration(v)
	case "By":
		return Bytes(int64(v))
	case "By/s":
		return Rate(v, "B/s")
	case "{flop}/s":
		return Rate(v, "FLOP/s")
	case "{flop}/By":
		return fmt.Sprintf("%.3g FLOP/B", v)
	case "J":
		return Energy(v)
	case "1/s":
		return Rate(v, "/s")
	case "1":
		return fmt.Sprintf("%.3g", v)
	case "Cel":
		return fmt.Sprintf("%g °C", v)
	case "":
		return fmt.Sprintf("%g", v)
	}
	// Annotations: "{node}" -> "93 nodes", "{item}/s" -> "1.2 items/s".
	if strings.HasPrefix(unit, "{") {
		if end := strings.Index(unit, "}"); end > 1 {
			noun, rest := unit[1:end], unit[end+1:]
			if v != 1 || rest != "" {
				noun += "s"
			}
			return fmt.Sprintf("%g %s%s", v, noun, rest)
		}
	}
	return fmt.Sprintf("%g %s", v, unit)
}
