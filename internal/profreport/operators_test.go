package profreport

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ortel-dev/ortel/instrument"
	"github.com/ortel-dev/ortel/internal/report"
	"github.com/ortel-dev/ortel/test/testenv"
)

// importInto feeds a real profile excerpt through the library's import
// path into an Collector, as the profiling pass does.
func importInto(t *testing.T, c *Collector, file string) {
	t.Helper()
	zr := bytes.NewReader(testenv.Gunzip(t, "../../instrument/profile/testdata/"+file))
	if _, err := instrument.ImportProfile(context.Background(), zr, time.Unix(1e9, 0), instrument.WithNodeObserver(c.Observe)); err != nil {
		t.Fatal(err)
	}
}

// TestOperatorsSelfTimeAndArena: the top-operators table of a Silero VAD
// run (If subgraphs) sums self times, so operator time stays within the
// run; the first run of ORT 1.30 grows the arena, which the memory view
// names. It catches the If time counted twice and a memory view that reads
// only the last run (where the arena no longer grows).
func TestOperatorsSelfTimeAndArena(t *testing.T) {
	c := NewCollector()
	importInto(t, c, "vad_ort1.30.0.json.gz")
	ops := c.Summary()
	if ops.TotalS <= 0 || ops.TotalS > 641e-6 {
		t.Errorf("operator time %g s, want (0, 641 µs]: the run's duration bounds it", ops.TotalS)
	}
	var ifSelf, ifDur float64
	for _, n := range ops.Timeline {
		if n.Name == "If_0" {
			ifSelf, ifDur = n.SelfS(), n.DurS
		}
	}
	if ifDur == 0 || ifSelf >= ifDur/2 {
		t.Errorf("If_0 self %g s of %g s: want its subgraph taken out", ifSelf, ifDur)
	}

	c = NewCollector()
	importInto(t, c, "vad_ort1.30.0_first.json.gz")
	importInto(t, c, "vad_ort1.30.0.json.gz")
	ops = c.Summary()
	if ops.ArenaPeakBytes <= 0 || len(ops.ArenaGrowth) != 1 || ops.ArenaGrowth[0].Name != "Equal_0" || ops.ArenaGrowth[0].Bytes != 1048576 {
		t.Fatalf("arena peak %d, growth %+v; want Equal_0 growing it by 1 MiB", ops.ArenaPeakBytes, ops.ArenaGrowth)
	}
	var buf bytes.Buffer
	if err := report.WriteText(&buf, &report.Report{Operators: ops}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "Memory arena") || !strings.Contains(buf.String(), "+1.0 MiB") {
		t.Errorf("text report lacks the memory view:\n%s", buf.String())
	}

	c = NewCollector()
	importInto(t, c, "vad_ort1.24.3.json.gz")
	if ops := c.Summary(); ops.ArenaPeakBytes != 0 || ops.ArenaGrowth != nil {
		t.Errorf("a 1.24.3 profile has no mem_* args, yet arena %d %v", ops.ArenaPeakBytes, ops.ArenaGrowth)
	}
}
