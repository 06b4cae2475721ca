package report

import "testing"

// TestEvidenceStringIsReadable: evidence on spans and in the text report
// shows units people read, never raw UCUM codes such as "{node}" or "1".
func TestEvidenceStringIsReadable(t *testing.T) {
	tests := []struct {
		in   Evidence
		want string
	}{
		{Evidence{Name: "nodes", Value: 93, Unit: "{node}"}, "nodes=93 nodes"},
		{Evidence{Name: "chains", Value: 1, Unit: "{chain}"}, "chains=1 chain"},
		{Evidence{Name: "op_type_share", Value: 0.265, Unit: "1"}, "op_type_share=26.5%"},
		{Evidence{Name: "cpu_utilization", Value: 0.5, Unit: "1"}, "cpu_utilization=50%"},
		{Evidence{Name: "cv", Value: 0.1234, Unit: "1"}, "cv=0.123"},
		{Evidence{Name: "throughput", Value: 12.5, Unit: "{item}/s"}, "throughput=12.5 items/s"},
		{Evidence{Name: "temp", Value: 81, Unit: "Cel"}, "temp=81 °C"},
		{Evidence{Name: "intensity", Value: 2.5, Unit: "{flop}/By"}, "intensity=2.5 FLOP/B"},
		{Evidence{Name: "provider", Text: "CPUExecutionProvider"}, "provider=CPUExecutionProvider"},
		{Evidence{Name: "nodes", Value: 4, Unit: "{node}", Text: "Transpose"}, "nodes=4 nodes (Transpose)"},
	}
	for _, tt := range tests {
		if got := EvidenceString(tt.in); got != tt.want {
			t.Errorf("EvidenceString(%+v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
