package instrument

import (
	"os"
	"path/filepath"
	"regexp"
	"time"
)

// ortProfileName matches the time stamp ORT appends to profile file names:
// <prefix>_YYYY-MM-DD_HH-MM-SS.json, in local time, taken when profiling
// started.
var ortProfileName = regexp.MustCompile(`_(\d{4}-\d{2}-\d{2}_\d{2}-\d{2}-\d{2})\.json$`)

// ProfileOrigin estimates the wall-clock time at which the profile at path
// started: from ORT's file name when it carries the time stamp (second
// precision), else the file's modification time, else now.
func ProfileOrigin(path string) time.Time {
	if m := ortProfileName.FindStringSubmatch(filepath.Base(path)); m != nil {
		if t, err := time.ParseInLocation("2006-01-02_15-04-05", m[1], time.Local); err == nil {
			return t
		}
	}
	if st, err := os.Stat(path); err == nil {
		return st.ModTime()
	}
	return time.Now()
}
