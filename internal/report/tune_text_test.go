package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/ortel-dev/ortel/internal/stats"
)

func tuneInterval(lo, est, hi float64) stats.Interval {
	return stats.Interval{Percentile: 50, Estimate: est, Lower: &lo, Upper: &hi, Confidence: 0.95, Sufficient: true, MinSamples: 6}
}

func TestWriteTuneText(t *testing.T) {
	tu := &Tune{Rounds: 3, RunsPerConfig: 30, Rule: "lowest p50", Best: 0, RunnerUp: 1, TiedWith: []int{1},
		Command: "ortel bench --opt-level extended --threads 2 --execution-mode sequential det.onnx",
		Rows: []TuneRow{
			{Label: "opt extended, 2 threads, sequential", P50: tuneInterval(0.010, 0.011, 0.012), RunsPerS: 90},
			{Label: "opt all, 2 threads, sequential", P50: tuneInterval(0.0115, 0.013, 0.014), RunsPerS: 80},
			{Label: "opt all, 1 thread, parallel", Error: "session: out of memory"},
		}}
	var b bytes.Buffer
	writeTuneText(&b, &printer{w: &b}, tu)
	out := b.String()
	for _, want := range []string{
		"Tuning sweep (3 configurations, 30 runs each in 3 interleaved rounds",
		"11.00ms [10.00ms, 12.00ms] ← best",
		"13.00ms [11.50ms, 14.00ms] (tied with the best)",
		"failed: session: out of memory",
		"the intervals overlap: the best is not distinguishable from it",
		"reproduce ortel bench --opt-level extended",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("text lacks %q:\n%s", want, out)
		}
	}
	tu.TiedWith, tu.Distinguishable = nil, true
	b.Reset()
	writeTuneText(&b, &printer{w: &b}, tu)
	if !strings.Contains(b.String(), "the intervals do not overlap, so the best is faster at 95% confidence") {
		t.Errorf("distinguishable sweep:\n%s", b.String())
	}
	tu.Best, tu.RunnerUp = -1, -1
	b.Reset()
	writeTuneText(&b, &printer{w: &b}, tu)
	if !strings.Contains(b.String(), "no configuration had enough successful runs") {
		t.Errorf("unranked sweep:\n%s", b.String())
	}
}

func TestWriteHTMLTune(t *testing.T) {
	r := &Report{SchemaVersion: SchemaVersion, Tune: &Tune{Rounds: 2, RunsPerConfig: 10, Rule: "lowest p50", Best: 0, RunnerUp: 1, Distinguishable: true,
		Command: "ortel bench --opt-level all --threads 2 --execution-mode sequential 'my det.onnx'",
		Rows: []TuneRow{
			{Label: "opt all, 2 threads, sequential", P50: tuneInterval(0.010, 0.011, 0.012), RunsPerS: 90, CreationS: 0.3},
			{Label: "opt disable, 1 thread, parallel", Error: "no <session>"},
		}}}
	var b bytes.Buffer
	if err := WriteHTML(&b, r); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{`<section id="tune">`, "11.00ms [10.00ms, 12.00ms]", "<td class=\"l\">best</td>", "failed: no &lt;session&gt;",
		"it is faster at 95% confidence", "<code>ortel bench --opt-level all --threads 2 --execution-mode sequential &#39;my det.onnx&#39;</code>"} {
		if !strings.Contains(out, want) {
			t.Errorf("HTML lacks %q", want)
		}
	}
}

func TestWriteMarkdownTune(t *testing.T) {
	r := &Report{SchemaVersion: SchemaVersion, Tune: &Tune{Rounds: 2, RunsPerConfig: 10, Best: 0, RunnerUp: 1,
		Command: "ortel bench --opt-level all det.onnx",
		Rows: []TuneRow{
			{Label: "opt all, 2 threads, sequential", P50: tuneInterval(0.010, 0.011, 0.012), RunsPerS: 90},
			{Label: "opt basic, 2 threads, sequential", P50: tuneInterval(0.0105, 0.0115, 0.013), RunsPerS: 85},
		}}}
	var b bytes.Buffer
	if err := WriteMarkdown(&b, r); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"### Tuning sweep", "| 1 | opt all, 2 threads, sequential | 11.00ms [10.00ms, 12.00ms] **best** | 90.0 |",
		"not distinguishable from the runner-up", "Reproduce: `ortel bench --opt-level all det.onnx`"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("markdown lacks %q:\n%s", want, b.String())
		}
	}
}
