package profile

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"sync"
	"testing"
)

// realProfile is testdata/cls_2runs.json.gz: a profile written by ONNX
// Runtime 1.24.3 for two Runs of ch_ppocr_mobile_v2.0_cls (see
// testdata/README.md).
const realProfile = "testdata/cls_2runs.json.gz"

// Facts about realProfile, read off the file by eye (not by this package).
const (
	realEvents        = 476
	realKernelsPerRun = 235
	realRuns          = 2
)

var realOnce = sync.OnceValues(func() ([]byte, error) {
	f, err := os.Open(realProfile)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, err
	}
	return io.ReadAll(zr)
})

// loadReal returns the uncompressed bytes of realProfile.
func loadReal(tb testing.TB) []byte {
	tb.Helper()
	b, err := realOnce()
	if err != nil {
		tb.Fatalf("load %s: %v", realProfile, err)
	}
	return b
}

// result is everything a Reader returned for one input.
type result struct {
	events   []Event
	warnings []Warning
	nwarn    int
	err      error // the error that ended the reading; nil for io.EOF
	offset   int64 // Offset() at the end
}

// readAll reads src to the end, cloning every event.
func readAll(tb testing.TB, src io.Reader) result {
	tb.Helper()
	r := NewReader(src)
	var res result
	for i := 0; ; i++ {
		ev, err := r.Next()
		if err != nil {
			if err != io.EOF {
				res.err = err
			}
			break
		}
		if i > 1<<24 {
			tb.Fatal("Next does not terminate")
		}
		res.events = append(res.events, ev.Clone())
	}
	res.warnings, res.nwarn, res.offset = r.Warnings(), r.WarningCount(), r.Offset()
	return res
}

// body splits a profile written as "[\n" + one event per line + "\n]" into
// its event lines (without the trailing commas).
func eventLines(tb testing.TB, profile []byte) [][]byte {
	tb.Helper()
	lines := bytes.Split(bytes.TrimSpace(profile), []byte("\n"))
	if len(lines) < 3 || string(lines[0]) != "[" || string(lines[len(lines)-1]) != "]" {
		tb.Fatalf("profile is not one event per line")
	}
	lines = lines[1 : len(lines)-1]
	for i, l := range lines {
		lines[i] = bytes.TrimSuffix(l, []byte(","))
	}
	return lines
}

// repeatReader streams a valid profile of about n bytes made of the events
// of a real profile repeated over and over, without holding it in memory.
type repeatReader struct {
	lines [][]byte
	n     int64 // bytes of events still to write before closing
	i     int   // next line
	state int   // 0: "[\n", 1: events, 2: "\n]\n", 3: done
	pend  []byte
	sep   bool // a ",\n" is due before the next event
	count int  // events written
}

var comma = []byte(",\n")

func newRepeatReader(lines [][]byte, n int64) *repeatReader {
	return &repeatReader{lines: lines, n: n}
}

func (rr *repeatReader) Read(p []byte) (int, error) {
	total := 0
	for len(p) > 0 {
		if len(rr.pend) == 0 {
			switch rr.state {
			case 0:
				rr.pend, rr.state = []byte("[\n"), 1
			case 1:
				if rr.sep {
					rr.pend, rr.sep = comma, false
					break
				}
				l := rr.lines[rr.i%len(rr.lines)]
				rr.i++
				rr.count++
				rr.n -= int64(len(l)) + 2
				rr.pend, rr.sep = l, true
				if rr.n <= 0 {
					rr.state, rr.sep = 2, false
				}
			case 2:
				rr.pend, rr.state = []byte("\n]\n"), 3
			default:
				if total > 0 {
					return total, nil
				}
				return 0, io.EOF
			}
		}
		n := copy(p, rr.pend)
		rr.pend, p, total = rr.pend[n:], p[n:], total+n
	}
	return total, nil
}

// enlarge returns a valid profile of about n bytes built from the events of
// profile, held in memory.
func enlarge(tb testing.TB, profile []byte, n int) []byte {
	tb.Helper()
	b, err := io.ReadAll(newRepeatReader(eventLines(tb, profile), int64(n)))
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

func bytesReader(b []byte) io.Reader { return bytes.NewReader(b) }
