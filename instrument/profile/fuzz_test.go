package profile

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"testing"
	"testing/iotest"
)

// FuzzReader feeds the Reader arbitrary bytes: it must never panic, always
// terminate, keep its offsets inside the input, read the same whatever the
// source's read sizes, and read every valid JSON array of objects without
// an error.
func FuzzReader(f *testing.F) {
	// The real profile cut down to its first six and last two events (the
	// whole 321 KB makes each run slow and minimizing hopeless; the tests
	// read it whole in every way anyway).
	lines := eventLines(f, loadReal(f))
	excerpt := append(lines[:6:6], lines[len(lines)-2:]...)
	f.Add([]byte("[\n" + string(bytes.Join(excerpt, []byte(",\n"))) + "\n]\n"))
	f.Add([]byte(`{"traceEvents":[` + string(bytes.Join(excerpt[1:4], []byte(","))) + `],"displayTimeUnit":"ns"}`))
	// ORT 1.30: mem_* args, and a subgraph (nested Execute inside an If).
	v130 := eventLines(f, gunzipTestdata(f, "vad_ort1.30.0.json.gz"))
	f.Add([]byte("[\n" + string(bytes.Join(v130[len(v130)-12:], []byte(",\n"))) + "\n]\n"))
	for _, tc := range readerCases {
		f.Add([]byte(tc.in))
	}
	for _, tc := range decodeCases {
		f.Add([]byte(tc.in))
	}

	f.Fuzz(func(t *testing.T, data []byte) {
		res := fuzzRead(t, bytes.NewReader(data), len(data))
		one := fuzzRead(t, iotest.OneByteReader(bytes.NewReader(data)), len(data))
		checkNest(t, res.events)
		if !reflect.DeepEqual(res, one) {
			t.Fatalf("one byte at a time reads differently:\n got %+v\nwant %+v", one, res)
		}

		// Valid JSON that is an array of objects, or an object with a
		// traceEvents array of objects, must read cleanly.
		if !json.Valid(data) {
			return
		}
		start := bytes.TrimLeft(data, " \t\r\n")
		var arr []json.RawMessage
		if bytes.HasPrefix(start, []byte("[")) && json.Unmarshal(data, &arr) == nil && allObjects(arr) {
			if res.err != nil || len(res.events) != len(arr) {
				t.Fatalf("valid JSON array of %d objects: read %d events, error %v", len(arr), len(res.events), res.err)
			}
			return
		}
		var obj map[string]json.RawMessage
		if bytes.HasPrefix(start, []byte("{")) && json.Unmarshal(data, &obj) == nil {
			var evs []json.RawMessage
			if raw, ok := obj["traceEvents"]; ok && json.Unmarshal(raw, &evs) == nil && allObjects(evs) && countKey(data) == 1 {
				if res.err != nil || len(res.events) != len(evs) {
					t.Fatalf("valid trace object with %d events: read %d, error %v", len(evs), len(res.events), res.err)
				}
			}
		}
	})
}

// fuzzRead reads everything, checking the invariants that hold for any
// input, and returns what was read.
func fuzzRead(t *testing.T, src io.Reader, size int) result {
	r := NewReader(src)
	var res result
	for n := 0; ; n++ {
		if n > size/2+1 { // every event takes at least "{}"
			t.Fatalf("Next returned %d events from %d bytes: it does not terminate", n, size)
		}
		ev, err := r.Next()
		if off := r.Offset(); off < 0 || off > int64(size) {
			t.Fatalf("Offset() = %d outside the %d-byte input", off, size)
		}
		if err != nil {
			if err != io.EOF {
				res.err = err
				var se *SyntaxError
				switch {
				case errors.As(err, &se):
					if se.Offset < 0 || se.Offset > int64(size) {
						t.Fatalf("error offset %d outside the %d-byte input", se.Offset, size)
					}
				case errors.Is(err, ErrEmpty):
				default:
					t.Fatalf("error of an unexpected kind: %v", err)
				}
			}
			if _, again := r.Next(); again != err {
				t.Fatalf("Next after %v returned %v", err, again)
			}
			break
		}
		res.events = append(res.events, ev.Clone())
	}
	for _, w := range r.Warnings() {
		if w.Offset < 0 || w.Offset > int64(size) {
			t.Fatalf("warning offset %d outside the %d-byte input", w.Offset, size)
		}
	}
	res.warnings, res.nwarn, res.offset = r.Warnings(), r.WarningCount(), r.Offset()
	return res
}

func allObjects(vs []json.RawMessage) bool {
	for _, v := range vs {
		if len(v) == 0 || v[0] != '{' {
			return false
		}
	}
	return true
}

// countKey counts the top-level "traceEvents" keys of a JSON object, as
// duplicates read differently in encoding/json (last wins) and here (first).
func countKey(data []byte) int {
	d := json.NewDecoder(bytes.NewReader(data))
	if _, err := d.Token(); err != nil {
		return 0
	}
	n := 0
	for d.More() {
		k, err := d.Token()
		if err != nil {
			return 0
		}
		if k == "traceEvents" {
			n++
		}
		var skip json.RawMessage
		if d.Decode(&skip) != nil {
			return 0
		}
	}
	return n
}

// checkNest nests whatever kernel and Execute events were read and checks
// the tree's invariants: a parent is a kernel enclosing its child, depths
// follow parents, self times lie in [0, duration].
func checkNest(t *testing.T, all []Event) {
	var evs []Event
	for _, e := range all {
		if e.IsKernel() || e.IsExecute() {
			evs = append(evs, e)
		}
	}
	pl := Nest(evs)
	for i, p := range pl {
		e := &evs[i]
		if p.Self < 0 || p.Self > max(e.Dur, 0) {
			t.Fatalf("%s: self %d outside [0, %d]", e.Name, p.Self, e.Dur)
		}
		if p.Parent < 0 {
			if p.Depth != 0 {
				t.Fatalf("%s: depth %d without a parent", e.Name, p.Depth)
			}
			continue
		}
		if p.Parent >= len(evs) || p.Parent == i {
			t.Fatalf("%s: parent index %d", e.Name, p.Parent)
		}
		par := &evs[p.Parent]
		if !par.IsKernel() || e.TS < par.TS || e.TS+e.Dur > par.TS+par.Dur {
			t.Fatalf("%s [%d,+%d]: parent %s [%d,+%d] does not enclose it", e.Name, e.TS, e.Dur, par.Name, par.TS, par.Dur)
		}
		if p.Depth != pl[p.Parent].Depth+1 {
			t.Fatalf("%s: depth %d under depth %d", e.Name, p.Depth, pl[p.Parent].Depth)
		}
	}
}

// FuzzNest nests arbitrary events (kernels and Executes with any times):
// the tree's invariants hold and nothing panics.
func FuzzNest(f *testing.F) {
	f.Add([]byte{0, 10, 100, 1, 15, 80, 0, 20, 10, 0, 200, 5})
	f.Add([]byte{0, 0, 0, 1, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		var evs []Event
		for ; len(data) >= 3; data = data[3:] {
			e := Event{Category: "Node", Name: "n_kernel_time", OpName: "If", TS: int64(data[1]), Dur: int64(data[2]) - 8}
			if data[0]&1 == 1 {
				e = Event{Category: "Session", Name: ExecuteName, TS: int64(data[1]), Dur: int64(data[2]) - 8}
			}
			evs = append(evs, e)
		}
		checkNest(t, evs)
	})
}
