package analysis

import (
	"strings"
	"testing"
)

// TestComputeLowOnRealDet: on the real PaddleOCR det report (this VM,
// load about 15), eight 1×1 and depthwise Conv nodes are compute-bound at
// 1-10% of the compute roof and take 20.4% of operator time: their own
// finding, with the nodes named, instead of being lumped into "Conv is
// compute-bound".
func TestComputeLowOnRealDet(t *testing.T) {
	_, fds := fixtureFindings(t, "testdata/det_report_epyc.json.gz")
	fd := findingOf(fds, "compute-far-below-peak")
	if fd == nil {
		t.Fatal("no compute-far-below-peak finding on det")
	}
	for _, want := range []string{"take 20.4% of operator time (8 Conv under 10% of the compute roof)", "conv2d_453.tmp_0_nchwc (Conv, float[1,48,160,160] → float[1,48,160,160]) 3.9% at 5.2% of peak"} {
		if !strings.Contains(fd.Title+fd.Detail, want) {
			t.Errorf("finding lacks %q:\n%s\n%s", want, fd.Title, fd.Detail)
		}
	}
	if !strings.Contains(fd.Check, "--tune") {
		t.Errorf("check %q", fd.Check)
	}
	// VAD's compute-bound convs are few and small: silent.
	if _, vad := fixtureFindings(t, "testdata/vad_report.json.gz"); findingOf(vad, "compute-far-below-peak") != nil {
		t.Error("fired on silero-vad, whose low compute-bound nodes take 3.2%")
	}
}
