package report

import (
	"bytes"
	"strings"
	"testing"
)

// TestMeasurementRendered: a disturbed verdict reaches the summary (line,
// load, first advice), the text report (each reason with its share, all
// the advice, the unavailable sources) and report.md; a stable one is one
// word in the summary.
func TestMeasurementRendered(t *testing.T) {
	m := &Measurement{
		State: MeasurementDisturbed, AffectedShare: 0.41, IntervalS: 0.2, Samples: 50, CPUs: []int{1},
		Reasons:      []MeasurementReason{{Kind: "co-runner", Share: 0.41, Detail: "other processes used up to 0.98 of a core"}, {Kind: "drift", Share: 1, Detail: "latency rose 12%"}},
		Advice:       []string{"stop the co-runner or move it off the bench's cores: pid 77 (spin, 4.0 s of CPU)", "use --ab"},
		Sources:      []MeasurementSource{{Source: "proc/stat", Available: true}, {Source: "pressure cpu", Reason: "no such file"}},
		LoadAvgStart: []float64{2.5, 1, 1}, LoadAvgEnd: []float64{3.25, 1, 1},
	}
	r := &Report{Measurement: m, Verdict: m.Line()}
	var sum, text, md bytes.Buffer
	if err := WriteSummary(&sum, r); err != nil {
		t.Fatal(err)
	}
	if err := WriteText(&text, r); err != nil {
		t.Fatal(err)
	}
	if err := WriteMarkdown(&md, r); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, out string
		want      []string
	}{
		{"summary", sum.String(), []string{"verdict     disturbed: co-runner, drift (41% of the phase); load 2.50 → 3.25", "→ stop the co-runner or move it off the bench's cores: pid 77 (spin"}},
		{"text", text.String(), []string{"co-runner", "41% of the phase: other processes", "→ use --ab", "not available here: pressure cpu"}},
		{"markdown", md.String(), []string{"## Measurement", "**disturbed: co-runner, drift (41% of the phase)**", "| drift | 100% | latency rose 12% |", "- use --ab"}},
	} {
		for _, w := range c.want {
			if !strings.Contains(c.out, w) {
				t.Errorf("%s lacks %q:\n%s", c.name, w, c.out)
			}
		}
	}
	stable := &Measurement{State: MeasurementStable}
	sum.Reset()
	if err := WriteSummary(&sum, &Report{Measurement: stable, Verdict: stable.Line()}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(sum.String(), "verdict     stable\n") {
		t.Errorf("stable summary:\n%s", sum.String())
	}
}
