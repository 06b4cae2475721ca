package profimport

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"time"
)

// ortProfileName matches the time stamp ORT appends to profile file names,
// taken in local time when profiling started: <prefix>_YYYY-MM-DD_HH-MM-SS.json
// up to 1.24, and <prefix>_YYYY-MM-DD_HH-MM-SS_mmm.json (milliseconds) from
// 1.25 on, session and per-run (onnxruntime_run_profile...) files alike.
var ortProfileName = regexp.MustCompile(`_(\d{4}-\d{2}-\d{2}_\d{2}-\d{2}-\d{2})(?:_(\d{3}))?\.json$`)

// Where StartTime found the profile's start.
const (
	OriginFileName = "the time stamp in ORT's file name"
	OriginModTime  = "the file's modification time less the profile's length"
	OriginNow      = "the current time (the file could not be read)"
)

// StartTime estimates the wall-clock time at which the profile at path
// started (its clock's zero) and says where the estimate came from:
//
//   - ORT's file name, with second precision up to ORT 1.24 and millisecond
//     precision from 1.25 on (local time);
//   - else the file's modification time, which is when ORT wrote the file at
//     the end of profiling, less the end of the profile's last event;
//   - else now.
func StartTime(path string) (time.Time, string) {
	if m := ortProfileName.FindStringSubmatch(filepath.Base(path)); m != nil {
		if t, err := time.ParseInLocation("2006-01-02_15-04-05", m[1], time.Local); err == nil {
			if m[2] != "" {
				ms, _ := strconv.Atoi(m[2])
				t = t.Add(time.Duration(ms) * time.Millisecond)
			}
			return t, OriginFileName
		}
	}
	f, err := os.Open(path)
	if err != nil {
		return time.Now(), OriginNow
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return time.Now(), OriginNow
	}
	return st.ModTime().Add(-time.Duration(lastEventEnd(f, st.Size())) * time.Microsecond), OriginModTime
}

var (
	tsKey  = regexp.MustCompile(`"ts" ?: ?"?(\d+)`)
	durKey = regexp.MustCompile(`"dur" ?: ?"?(\d+)`)
)

// lastEventEnd returns the largest ts+dur (µs) among the events in the last
// 64 KB of a profile: ORT writes each event when it ends, so the last ones
// end last. 0 when none is found.
func lastEventEnd(r io.ReaderAt, size int64) int64 {
	const tail = 64 << 10
	off := max(size-tail, 0)
	buf := make([]byte, size-off)
	n, _ := r.ReadAt(buf, off)
	buf = buf[:n]
	var end int64
	for len(buf) > 0 {
		i := bytes.IndexByte(buf, '{')
		if i < 0 {
			break
		}
		buf = buf[i+1:]
		j := bytes.IndexByte(buf, '{') // the args object, or the next event
		ev := buf
		if j >= 0 {
			ev = buf[:j]
		}
		ts, dur := tsKey.FindSubmatch(ev), durKey.FindSubmatch(ev)
		if ts != nil && dur != nil {
			a, _ := strconv.ParseInt(string(ts[1]), 10, 64)
			b, _ := strconv.ParseInt(string(dur[1]), 10, 64)
			end = max(end, a+b)
		}
	}
	return end
}
