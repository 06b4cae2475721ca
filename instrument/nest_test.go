package instrument

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/trace"

	"github.com/ortel-dev/ortel/test/testenv"
)

// TestImportProfileNestsSubgraphs imports one real Silero VAD run (If
// subgraphs, ONNX Runtime 1.24.3 and 1.30.0) through the library path:
// subgraph operators are children of the If span that ran them, the node
// observer gets self times that sum to at most the run's duration, and so
// does the node-duration histogram. It catches a flat tree and the double
// count of If time (durations alone sum to about twice the run).
func TestImportProfileNestsSubgraphs(t *testing.T) {
	for _, v := range []string{"1.24.3", "1.30.0"} {
		t.Run(v, func(t *testing.T) {
			zr := bytes.NewReader(testenv.Gunzip(t, "profile/testdata/vad_ort"+v+".json.gz"))
			p := newProviders(t)
			var self, dur time.Duration
			st, err := ImportProfile(context.Background(), zr, time.Unix(1e9, 0), p.opts(WithNodeObserver(func(n ProfiledNode) {
				self += n.Self
				dur += time.Duration(n.Node.Dur) * time.Microsecond
			}))...)
			if err != nil {
				t.Fatal(err)
			}
			if st.Runs != 1 {
				t.Fatalf("stats %+v", st)
			}
			runs := spansNamed(p.spans, "run model")
			if len(runs) != 1 {
				t.Fatalf("%d run spans", len(runs))
			}
			runDur := runs[0].EndTime().Sub(runs[0].StartTime())
			if self > runDur || dur <= runDur {
				t.Errorf("self times sum to %v, durations to %v, run %v: want self <= run < durations", self, dur, runDur)
			}
			byID := map[trace.SpanID]string{}
			for _, s := range p.spans.Ended() {
				byID[s.SpanContext().SpanID()] = s.Name()
			}
			nested := 0
			for _, s := range p.spans.Ended() {
				name, _ := attrs(s.Attributes())[attrNodeName]
				if !strings.Contains(name.AsString(), "_Inline_") {
					continue
				}
				if parent := byID[s.Parent().SpanID()]; parent != "If" {
					t.Errorf("%s: parent %q, want an If span", name.AsString(), parent)
				}
				nested++
			}
			if nested == 0 {
				t.Fatal("no subgraph operator")
			}
			m, ok := metricByName(p.collect(t), "onnxruntime.node.duration")
			if !ok {
				t.Fatal("no onnxruntime.node.duration")
			}
			var sum float64
			for _, dp := range m.Data.(metricdata.Histogram[float64]).DataPoints {
				sum += dp.Sum
			}
			if got := time.Duration(sum * 1e9); got > runDur+time.Microsecond {
				t.Errorf("node-duration histogram sums to %v, over the run's %v: time counted twice", got, runDur)
			}
			t.Logf("ORT %s: run %v, operator self times %v, durations %v, %d nested", v, runDur, self, dur, nested)
		})
	}
}
