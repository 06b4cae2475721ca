package analysis

import (
	"math"
	"strings"
	"testing"

	"github.com/ortel-dev/ortel/internal/onnxgen"
	"github.com/ortel-dev/ortel/internal/report"
	"github.com/ortel-dev/ortel/internal/units"
)

// fixtureFindings runs the rule set on a real report fixture, as Analyze
// does with the report's own peaks.
func fixtureFindings(t *testing.T, path string) (*report.Report, []report.Finding) {
	t.Helper()
	rep := profiledFixture(t, path)
	peaks := rep.Analysis.Peaks
	roof := RooflineThreads(rep.Operators, peaks, rep.Config.IntraOpThreads)
	fds := Findings(FactsFrom(rep, roof, peaks))
	setChecks(fds, rep)
	return rep, fds
}

func findingOf(fds []report.Finding, rule string) *report.Finding {
	for i := range fds {
		if fds[i].Rule == rule {
			return &fds[i]
		}
	}
	return nil
}

func evidenceOf(fd *report.Finding, name string) (report.Evidence, bool) {
	for _, e := range fd.Evidence {
		if e.Name == name {
			return e, true
		}
	}
	return report.Evidence{}, false
}

// TestControlFlowOnRealVAD: on the real silero-vad report, whose whole
// model runs inside If_0's subgraph, the control-flow finding gives the If
// nodes' own time as the top-operators table's If share (48.3%, where the
// old dominant-op-type finding said "If takes 85.4%" from the one timeline
// run), names what runs inside with shares of the same definition, and
// says what If_0's own time is per node it ran; dominant-op-type no longer
// calls If dominant.
func TestControlFlowOnRealVAD(t *testing.T) {
	rep, fds := fixtureFindings(t, "testdata/vad_report.json.gz")
	var ifShare float64
	for _, ot := range rep.Operators.ByType {
		if ot.OpType == "If" {
			ifShare += ot.Share
		}
	}
	fd := findingOf(fds, "control-flow")
	if fd == nil {
		t.Fatal("no control-flow finding on silero-vad")
	}
	if math.Abs(fd.Impact-ifShare) > 1e-9 {
		t.Errorf("own share %.4f, want the top-operators If share %.4f", fd.Impact, ifShare)
	}
	if !strings.HasPrefix(fd.Title, "If_0 with its subgraphs takes ") || !strings.Contains(fd.Title, units.Percent(ifShare, 1)+" of it the If nodes' own time") {
		t.Errorf("title %q", fd.Title)
	}
	for _, want := range []string{"FusedConv 9.6%", "Conv 5.3%", "LSTM 4.4%", "If_0_then_branch__Inline_0__/decoder/rnn/LSTM (LSTM) 4.4%", "7 If per run", "for each of the 55 nodes its subgraphs ran", "waited for a core"} {
		if !strings.Contains(fd.Detail, want) {
			t.Errorf("detail lacks %q:\n%s", want, fd.Detail)
		}
	}
	all, _ := evidenceOf(fd, "control_flow_share")
	if all.Value < 0.95 || all.Value > 1 {
		t.Errorf("If_0 with its subgraphs: %v of operator time, want nearly all (only Equal_0 runs outside)", all.Value)
	}
	if fd.Check == "" {
		t.Error("no check command")
	}
	if d := findingOf(fds, "dominant-op-type"); d != nil && strings.HasPrefix(d.Title, "If ") {
		t.Errorf("dominant-op-type still reports If: %q", d.Title)
	}
}

// TestControlFlowOnRealMoonshineDecoder: the merged decoder runs all but
// one node in optimum::if's use_cache_branch subgraph; the finding names
// DequantizeLinear and MatMul inside and the If's own time.
func TestControlFlowOnRealMoonshineDecoder(t *testing.T) {
	_, fds := fixtureFindings(t, "testdata/moonshine_decoder_report.json.gz")
	fd := findingOf(fds, "control-flow")
	if fd == nil {
		t.Fatal("no control-flow finding on the Moonshine decoder")
	}
	for _, want := range []string{"754 nodes per run", "DequantizeLinear 16.7%", "MatMul 13.3%", "/proj_out/MatMul (MatMul)"} {
		if !strings.Contains(fd.Detail, want) {
			t.Errorf("detail lacks %q:\n%s", want, fd.Detail)
		}
	}
	if math.Abs(fd.Impact-0.1348) > 0.001 {
		t.Errorf("own share %.4f, want the If's 13.48%%", fd.Impact)
	}
}

// TestPlaceControlFlow: a Loop whose body runs an If, then a main-graph
// node: each subgraph node is tied to the outermost node, nested control
// flow counts as control flow, the node after the Loop is outside.
func TestPlaceControlFlow(t *testing.T) {
	n := func(name, op string, start, dur, sub float64, depth int) report.NodeTiming {
		return report.NodeTiming{Name: name, OpType: op, StartS: start, DurS: dur, SubgraphS: sub, Depth: depth}
	}
	tl := []report.NodeTiming{
		n("pre", "Add", 0, 1, 0, 0),
		n("loop", "Loop", 2, 20, 15, 0),
		n("body/mm", "MatMul", 3, 5, 0, 1),
		n("body/if", "If", 9, 6, 4, 1),
		n("body/if/relu", "Relu", 10, 4, 0, 2),
		n("body/add", "Add", 16, 4, 0, 1),
		n("post", "Add", 23, 1, 0, 0),
	}
	cf := placeControlFlow(tl)
	if len(cf.roots) != 1 || cf.roots[0].Name != "loop" {
		t.Fatalf("roots %v", cf.roots)
	}
	var inside []string
	for _, x := range cf.inside {
		inside = append(inside, x.Name)
	}
	if got := strings.Join(inside, ","); got != "body/mm,body/if/relu,body/add" {
		t.Errorf("inside %s", got)
	}
	if cf.nested != 1 || len(cf.own) != 2 || cf.children["loop"] != 4 {
		t.Errorf("nested %d, own %d, children %d", cf.nested, len(cf.own), cf.children["loop"])
	}
}

// TestControlFlowInsideOnly: a Loop holding most of the time in its body
// with little of its own is reported as information (where the op types
// run), not as a cost.
func TestControlFlowInsideOnly(t *testing.T) {
	loop := report.NodeTiming{Name: "loop", OpType: "Loop", Provider: cpuEP, DurS: 4.1e-3, SubgraphS: 4e-3}
	c1, c2 := convNode(2e-3), convNode(2e-3)
	c1.StartS, c2.StartS, c1.Depth, c2.Depth = 1e-3, 3e-3, 1, 1
	fd := ruleControlFlow(timeline(loop, c1, c2))
	if fd == nil || fd.Severity != SeverityInfo || !strings.Contains(fd.Title, "2.4% of it the Loop nodes' own time") {
		t.Errorf("finding %+v", fd)
	}
}

// TestControlFlowOnRealLoop: a generated Loop of 20 trips over 64 floats,
// run by real ONNX Runtime, profiles its body's nodes nested in the Loop
// (60 of them a run); the finding ties them to the Loop, names Mul and
// Relu inside and gives the Loop's own time per body node. The Loop holds
// all the model's time, so it fires whatever its own share on a machine.
func TestControlFlowOnRealLoop(t *testing.T) {
	rep := profiledReport(t, onnxgen.Loop(20, 64), nil)
	f := FactsFrom(rep, Roofline(rep.Operators, fixedPeaks), fixedPeaks)
	cf := placeControlFlow(f.Timeline)
	if len(cf.roots) != 1 || cf.roots[0].OpType != "Loop" || cf.children["loop"] != 60 || len(cf.inside) != 60 {
		t.Fatalf("roots %d, children %d, inside %d; timeline %+v", len(cf.roots), cf.children["loop"], len(cf.inside), f.Timeline)
	}
	fd := ruleControlFlow(f)
	if fd == nil {
		t.Fatal("no control-flow finding on a Loop")
	}
	for _, want := range []string{"loop with its subgraphs takes", "the Loop nodes' own time", "Its subgraphs ran 60 nodes per run", "Mul ", "Relu ", "for each of the 60 nodes its subgraphs ran"} {
		if !strings.Contains(fd.Title+fd.Detail, want) {
			t.Errorf("finding lacks %q:\n%s\n%s", want, fd.Title, fd.Detail)
		}
	}
}
