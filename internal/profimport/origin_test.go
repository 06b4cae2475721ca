package profimport

import (
	"os"
	"testing"
	"time"
)

// TestStartTime reads ORT's file-name time stamps, with seconds (ORT
// up to 1.24) and milliseconds (1.25+, session and per-run files), and
// otherwise takes the modification time less the profile's length. It
// catches the 1.30 name falling back to the modification time, and the
// fallback placing the profile's start at its end.
func TestStartTime(t *testing.T) {
	for _, tc := range []struct {
		name string
		want time.Time
	}{
		{"/tmp/onnxruntime_profile__2026-11-22_10-31-07.json", time.Date(2026, 11, 22, 10, 31, 7, 0, time.Local)},
		{"/tmp/p_2026-11-22_01-05-14_373.json", time.Date(2026, 11, 22, 1, 5, 14, 373e6, time.Local)},
		{"/tmp/onnxruntime_run_profile_2026-11-22_01-05-14_009.json", time.Date(2026, 11, 22, 1, 5, 14, 9e6, time.Local)},
	} {
		got, src := StartTime(tc.name)
		if !got.Equal(tc.want) || src != OriginFileName {
			t.Errorf("%s: origin %v from %s, want %v from the file name", tc.name, got, src, tc.want)
		}
	}
	dir := t.TempDir()
	f := dir + "/p.json"
	// The last event ends at 2,500,000 µs: the profile started 2.5 s before
	// ORT wrote the file.
	os.WriteFile(f, []byte("[\n{\"cat\" : \"Session\",\"dur\" :100,\"ts\" :5,\"name\":\"a\",\"args\" : {}},\n"+
		"{\"cat\" : \"Session\",\"dur\" :500000,\"ts\" :2000000,\"name\":\"model_run\",\"args\" : {}}\n]\n"), 0o644)
	mt := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	os.Chtimes(f, mt, mt)
	got, src := StartTime(f)
	if want := mt.Add(-2500 * time.Millisecond); !got.Equal(want) || src != OriginModTime {
		t.Errorf("origin %v from %s, want %v from the modification time", got, src, want)
	}
}
