package profimport

import (
	"fmt"
	"path/filepath"
	"testing"
)

// FuzzStartTime: any file name either carries ORT's time stamp, which
// then reads back to the same digits (seconds and, from ORT 1.25, the
// milliseconds), or falls back without a panic; the profile's own end, read
// from the tail of the file, never moves the start after the file time.
func FuzzStartTime(f *testing.F) {
	f.Add("onnxruntime_profile__2026-11-22_10-31-07.json", []byte(`[{"ts":1,"dur":2}]`))
	f.Add("p_2026-11-22_01-05-14_373.json", []byte(`[`))
	f.Add("onnxruntime_run_profile_2026-02-30_25-61-61_999.json", []byte(`{"ts" : "5", "dur" : 7}`))
	f.Fuzz(func(t *testing.T, name string, body []byte) {
		if filepath.Base(name) != name || name == "" || name == "." || name == ".." {
			return
		}
		got, src := StartTime(filepath.Join(t.TempDir(), name)) // no such file
		if src == OriginFileName {
			m := ortProfileName.FindStringSubmatch(name)
			want := got.Format("2006-01-02_15-04-05")
			if m == nil || want != m[1] {
				t.Fatalf("%q read as %v (%s)", name, got, want)
			}
			if m[2] != "" && fmt.Sprintf("%03d", got.Nanosecond()/1e6) != m[2] {
				t.Fatalf("%q: milliseconds %d", name, got.Nanosecond()/1e6)
			}
		}
		end := lastEventEnd(bytesReaderAt(body), int64(len(body)))
		if end < 0 {
			t.Fatalf("profile end %d before its start", end)
		}
	})
}

type bytesReaderAt []byte

func (b bytesReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if off >= int64(len(b)) {
		return 0, nil
	}
	return copy(p, b[off:]), nil
}
