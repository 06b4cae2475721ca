package profile

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
)

var update = flag.Bool("update", false, "rewrite testdata/messages.golden")

// sources feeds one input to the Reader in ways that cut it at different
// places, so that every refill boundary inside tokens gets exercised.
var sources = []struct {
	name string
	wrap func([]byte) io.Reader
}{
	{"whole", func(b []byte) io.Reader { return bytes.NewReader(b) }},
	{"onebyte", func(b []byte) io.Reader { return iotest.OneByteReader(bytes.NewReader(b)) }},
	{"half", func(b []byte) io.Reader { return iotest.HalfReader(bytes.NewReader(b)) }},
	{"dataerr", func(b []byte) io.Reader { return iotest.DataErrReader(bytes.NewReader(b)) }},
}

// readAllSources reads in through every source and fails unless they all
// give the same result, which it returns.
func readAllSources(t *testing.T, in []byte) result {
	t.Helper()
	want := readAll(t, sources[0].wrap(in))
	for _, s := range sources[1:] {
		got := readAll(t, s.wrap(in))
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("reading through %s differs from reading whole:\n got %+v\nwant %+v", s.name, got, want)
		}
	}
	return want
}

type readerCase struct {
	name  string
	in    string
	names []string // names of the events read, in order
	warns []string // one substring per warning, in order
	err   string   // "" for a clean end, "empty" for ErrEmpty, else a substring of the SyntaxError
	off   int64    // the SyntaxError's offset; 0: not checked, atEnd, atStart

	check func(t *testing.T, evs []Event)
}

// Offsets for readerCase.off.
const (
	atEnd   = -1
	atStart = -2
)

const (
	evA = `{"cat":"Session","name":"a","ph":"X","ts":1,"dur":2}`
	evB = `{"cat":"Session","name":"b","ph":"X","ts":3,"dur":4}`
)

var readerCases = []readerCase{
	// Forms.
	{name: "array", in: "[\n" + evA + ",\n" + evB + "\n]\n", names: []string{"a", "b"}},
	{name: "empty array", in: "[]", names: nil},
	{name: "empty array spaced", in: " \n[ \n ] \n", names: nil},
	{name: "object form", in: `{"traceEvents":[` + evA + `,` + evB + `]}`, names: []string{"a", "b"}},
	{name: "object form with other keys", in: `{"displayTimeUnit":"ns","otherData":{"v":[1,{"x":"]"}]},"traceEvents":[` + evA + `],"stackFrames":{},"samples":[]}`, names: []string{"a"}},
	{name: "object form empty", in: `{"traceEvents":[]}`, names: nil},
	{name: "object form second traceEvents skipped", in: `{"traceEvents":[` + evA + `],"traceEvents":[` + evB + `]}`, names: []string{"a"}},
	{name: "byte order mark", in: "\xEF\xBB\xBF[" + evA + "]", names: []string{"a"}, warns: []string{"byte order mark"}},

	// Tolerated repairs.
	{name: "trailing comma after last event", in: "[\n" + evA + ",\n]", names: []string{"a"}, warns: []string{"trailing comma after the last event"}},
	{name: "trailing comma in event", in: `[{"name":"a","ts":1,}]`, names: []string{"a"}, warns: []string{"trailing comma before '}' in an event"}},
	{name: "trailing comma in args", in: `[{"name":"a","args":{"op_name":"Conv",}}]`, names: []string{"a"}, warns: []string{"trailing comma before '}' in the event's args"}},
	{name: "trailing comma in dims", in: `[{"name":"a","args":{"input_type_shape":[{"float":[1,2,]},]}}]`, names: []string{"a"},
		warns: []string{"trailing comma before ']' in a type-shape's dimensions", "trailing comma before ']' in input_type_shape"},
		check: func(t *testing.T, evs []Event) { wantShapes(t, evs[0].InputShapes, "float[1,2]") }},
	{name: "trailing comma in skipped value", in: `[{"name":"a","args":{"x":[1,{"y":2,},]}}]`, names: []string{"a"},
		warns: []string{"trailing comma before '}'", "trailing comma before ']'"}},
	{name: "unescaped quote in name", in: `[{"cat" : "Node","name" :"a"b_kernel_time","args" : {}}]`, names: []string{`a"b_kernel_time`},
		warns: []string{`unescaped '"'`},
		check: func(t *testing.T, evs []Event) {
			if got := evs[0].NodeName(); got != `a"b` {
				t.Errorf("NodeName = %q", got)
			}
		}},
	{name: "unescaped quotes around a word", in: `[{"name":"say "hi" now","ts":1}]`, names: []string{`say "hi" now`}, warns: []string{`unescaped '"'`, `unescaped '"'`}},
	{name: "unescaped quote in key", in: `[{"na"me":"x","name":"a"}]`, names: []string{"a"}, warns: []string{`unescaped '"'`}},
	{name: "raw control characters", in: "[{\"name\":\"a\tb\x01c\"}]", names: []string{"a\tb\x01c"},
		warns: []string{"raw control character (byte 0x09)", "raw control character (byte 0x01)"}},
	{name: "raw newline", in: "[{\"name\":\"a\nb\"}]", names: []string{"a\nb"}, warns: []string{"raw control character (byte 0x0a)"}},
	{name: "invalid UTF-8", in: "[{\"name\":\"a\xffb\xc3\"}]", names: []string{"a\uFFFDb\uFFFD"},
		warns: []string{"invalid UTF-8 (byte 0xff)", "invalid UTF-8 (byte 0xc3)"}},
	{name: "valid UTF-8 kept", in: `[{"name":"é😀ü"}]`, names: []string{"é😀ü"}},
	{name: "lone backslash", in: `[{"name":"a\qb"}]`, names: []string{`a\qb`},
		warns: []string{`backslash that starts no valid escape ('q' follows)`}},
	{name: "windows path", in: `[{"name":"C:\dir\x.onnx"}]`, names: []string{`C:\dir\x.onnx`}, warns: []string{"('d' follows)", "('x' follows)"}},
	{name: "backslash quote is an escape", in: `[{"name":"a\"b"}]`, names: []string{`a"b`}},
	{name: "bad unicode escape", in: `[{"name":"a\u12g4"}]`, names: []string{`a\u12g4`}, warns: []string{`"\u" without four hex digits`}},
	{name: "bad unicode escape at end", in: `[{"name":"a\u"}]`, names: []string{`a\u`}, warns: []string{`"\u" without four hex digits`}},
	{name: "valid escapes", in: `[{"name":"q\"b\\s\/n\nt\tr\rb\bf\fu\u00e9\uD83D\uDE00"}]`, names: []string{"q\"b\\s/n\nt\tr\rb\bf\fu\u00e9\U0001F600"}},
	{name: "lone surrogate", in: `[{"name":"a\ud800b\udc00"}]`, names: []string{"a\uFFFDb\uFFFD"}, warns: []string{"lone UTF-16 surrogate", "lone UTF-16 surrogate"}},
	{name: "escape then repair", in: "[{\"name\":\"a\\nb\xffc\"}]", names: []string{"a\nb\uFFFDc"}, warns: []string{"invalid UTF-8"}},

	// Errors.
	{name: "empty", in: "", err: "empty"},
	{name: "white space only", in: " \n\t\r\n ", err: "empty"},
	{name: "byte order mark only", in: "\xEF\xBB\xBF\n", err: "empty", warns: []string{"byte order mark"}},
	{name: "garbage", in: "hello", err: "expected '[' or '{' at the start of the profile, found 'h'", off: atStart},
	{name: "binary zeros", in: "\x00\x00\x00", err: "found byte 0x00", off: atStart},
	{name: "garbage element", in: "[hello]", err: "expected '{' to start an event, found 'h'", off: 1},
	{name: "number element", in: "[1]", err: "expected '{' to start an event", off: 1},
	{name: "missing comma between events", in: "[" + evA + "\n" + evB + "]", names: []string{"a"}, err: "expected ',' or ']' after an event, found '{'", off: int64(len(evA)) + 2},
	{name: "double comma", in: "[" + evA + ",," + evB + "]", names: []string{"a"}, err: "expected '{' to start an event, found ','"},
	{name: "leading comma", in: "[," + evA + "]", err: "expected '{' to start an event, found ','", off: 1},
	{name: "missing value", in: `[{"cat":}]`, err: "expected a value, found '}'", off: 8},
	{name: "missing value in args", in: `[{"args":{"op_name":,"x":1}}]`, err: "expected a value, found ','"},
	{name: "missing colon", in: `[{"cat" "Node"}]`, err: "expected ':' after a key, found '}'", // the quotes are not followed by a delimiter: part of the key
		warns: []string{`unescaped '"'`, `unescaped '"'`}},
	{name: "bare word value", in: `[{"cat":Node}]`, err: `invalid value "Node"`, off: 8},
	{name: "bare word number", in: `[{"ts":12ab}]`, err: `invalid value "12ab"`},
	{name: "bad number", in: `[{"ts":1.2.3}]`, err: `invalid number "1.2.3"`},
	{name: "unquoted key", in: `[{cat:"Node"}]`, err: "expected a quoted key in an event, found 'c'"},
	{name: "mismatched brackets in skipped value", in: `[{"x":[1}]`, err: "'}' does not match the '[' it closes"},
	{name: "quote before a word is ambiguous", in: `[{"name":"a", b_kernel_time","ts":1}]`, err: "expected a quoted key in an event, found 'b'"},
	{name: "data after the end", in: "[" + evA + "] x", names: []string{"a"}, err: "unexpected data after the end of the profile, found 'x'"},
	{name: "second array after the end", in: "[" + evA + "][]", names: []string{"a"}, err: "unexpected data after the end"},
	{name: "data after object form", in: `{"traceEvents":[]}}`, err: "unexpected data after the end"},
	{name: "object without traceEvents", in: `{"a":1}`, err: `has no "traceEvents" array`},
	{name: "traceEvents not an array", in: `{"traceEvents":{}}`, err: `"traceEvents" must be an array of events, found '{'`},
	{name: "too deep", in: `[{"x":` + strings.Repeat("[", maxDepth+1) + `}]`, err: "nested more than"},

	// Truncation.
	{name: "truncated open array", in: "[", err: "the event array is not closed", off: atEnd},
	{name: "truncated after event", in: "[" + evA, names: []string{"a"}, err: "the event array is not closed", off: atEnd},
	{name: "truncated after comma", in: "[" + evA + ",\n", names: []string{"a"}, err: "the event array is not closed", off: atEnd},
	{name: "truncated in event", in: "[" + evA + "," + evB[:20], names: []string{"a"}, err: "unexpected end of file inside an event: the profile looks truncated", off: atEnd},
	{name: "truncated in string", in: `[{"name":"abc`, err: "inside an event", off: atEnd},
	{name: "truncated in escape", in: `[{"name":"a\`, err: "inside an event", off: atEnd},
	{name: "truncated in unicode escape", in: `[{"name":"a\u00`, err: "inside an event", off: atEnd},
	{name: "truncated after quote and space", in: `[{"name":"a" `, err: "inside an event", off: atEnd},
	{name: "truncated in number", in: `[{"ts":12`, err: "inside an event", off: atEnd},
	{name: "truncated in skipped value", in: `[{"x":[[1,"a`, err: "inside an event", off: atEnd},
	{name: "truncated in top-level object", in: `{"displayTimeUnit":"n`, err: "inside the top-level object", off: atEnd},
	{name: "truncated after object-form events", in: `{"traceEvents":[]`, err: "inside the top-level object", off: atEnd},
}

func wantShapes(t *testing.T, got []TypeShape, want ...string) {
	t.Helper()
	var s []string
	for _, ts := range got {
		s = append(s, ts.String())
	}
	if !reflect.DeepEqual(s, want) && !(len(s) == 0 && len(want) == 0) {
		t.Errorf("shapes = %q, want %q", s, want)
	}
}

func TestReaderCases(t *testing.T) { runCases(t, readerCases) }

func runCases(t *testing.T, cases []readerCase) {
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := readAllSources(t, []byte(tc.in))
			var names []string
			for _, e := range res.events {
				names = append(names, e.Name)
			}
			if !reflect.DeepEqual(names, tc.names) {
				t.Errorf("events %q, want %q", names, tc.names)
			}
			if len(res.warnings) != len(tc.warns) || res.nwarn != len(tc.warns) {
				t.Errorf("%d warnings (%d kept) %v, want %d: %q", res.nwarn, len(res.warnings), res.warnings, len(tc.warns), tc.warns)
			} else {
				for i, w := range res.warnings {
					if !strings.Contains(w.Msg, tc.warns[i]) {
						t.Errorf("warning %d = %q, want it to contain %q", i, w.Msg, tc.warns[i])
					}
					if w.Offset < 0 || w.Offset > int64(len(tc.in)) {
						t.Errorf("warning %d offset %d outside the input", i, w.Offset)
					}
				}
			}
			checkErr(t, res.err, tc.err, tc.off, len(tc.in))
			if tc.check != nil && len(res.events) > 0 {
				tc.check(t, res.events)
			}
		})
	}
}

func checkErr(t *testing.T, err error, want string, off int64, size int) {
	t.Helper()
	switch want {
	case "":
		if err != nil {
			t.Errorf("error %v, want a clean end", err)
		}
		return
	case "empty":
		if !errors.Is(err, ErrEmpty) {
			t.Errorf("error %v, want ErrEmpty", err)
		}
		return
	}
	var se *SyntaxError
	if !errors.As(err, &se) {
		t.Fatalf("error %v (%T), want a *SyntaxError containing %q", err, err, want)
	}
	if !strings.Contains(se.Msg, want) {
		t.Errorf("error %q, want it to contain %q", se.Msg, want)
	}
	switch off {
	case atEnd:
		off = int64(size)
	case atStart:
		off = 0
	case 0:
		off = se.Offset // not checked
	}
	if se.Offset != off {
		t.Errorf("error at byte %d, want %d", se.Offset, off)
	}
	if se.Offset < 0 || se.Offset > int64(size) {
		t.Errorf("error offset %d outside the %d-byte input", se.Offset, size)
	}
}

// TestMessagesGolden keeps every message of readerCases in one file, so a
// reviewer reads them as a newcomer would. Run with -update to rewrite it.
func TestMessagesGolden(t *testing.T) {
	var b strings.Builder
	for _, tc := range slices.Concat(readerCases, decodeCases) {
		res := readAll(t, strings.NewReader(tc.in))
		if res.err == nil && len(res.warnings) == 0 {
			continue
		}
		fmt.Fprintf(&b, "## %s\n", tc.name)
		for _, w := range res.warnings {
			fmt.Fprintf(&b, "warning: %s\n", w)
		}
		if res.err != nil {
			fmt.Fprintf(&b, "error: %v\n", res.err)
		}
	}
	golden := filepath.Join("testdata", "messages.golden")
	if *update {
		if err := os.WriteFile(golden, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -run TestMessagesGolden -update to create it)", err)
	}
	if got := b.String(); got != string(want) {
		t.Errorf("messages differ from %s (run with -update if intended):\n%s", golden, got)
	}
}

// TestReaderTruncatedEveryCut cuts a real profile at every byte: each cut
// reads the events that end before it, identical to a full read, then ends
// with ErrEmpty (nothing but white space), a clean end (only when the cut
// loses nothing but trailing white space) or a *SyntaxError at or before the
// cut. Never a panic.
func TestReaderTruncatedEveryCut(t *testing.T) {
	full := loadReal(t)
	lines := eventLines(t, full)
	// A small real profile: the first six events and the last two.
	small := []byte("[\n" + string(bytes.Join(append(lines[:6:6], lines[len(lines)-2:]...), []byte(",\n"))) + "\n]\n")
	complete := readAll(t, bytes.NewReader(small))
	if complete.err != nil || len(complete.events) != 8 {
		t.Fatalf("small profile: %d events, %v", len(complete.events), complete.err)
	}
	cuts := make([]int, 0, len(small)+300)
	for i := 0; i <= len(small); i++ {
		cuts = append(cuts, i)
	}
	check := func(in []byte, cut int, all []Event) {
		res := readAll(t, bytes.NewReader(in[:cut]))
		if len(res.events) > len(all) || len(res.events) > 0 && !reflect.DeepEqual(res.events, all[:len(res.events)]) {
			t.Fatalf("cut at %d: events differ from the full read", cut)
		}
		trimmed := len(bytes.TrimSpace(in[:cut]))
		switch {
		case trimmed == 0:
			if !errors.Is(res.err, ErrEmpty) {
				t.Fatalf("cut at %d: %v, want ErrEmpty", cut, res.err)
			}
		case trimmed == len(bytes.TrimSpace(in)):
			if res.err != nil || len(res.events) != len(all) {
				t.Fatalf("cut at %d: %d events, %v; want all, clean", cut, len(res.events), res.err)
			}
		default:
			var se *SyntaxError
			if !errors.As(res.err, &se) {
				t.Fatalf("cut at %d: %v, want a *SyntaxError", cut, res.err)
			}
			if se.Offset < 0 || se.Offset > int64(cut) {
				t.Fatalf("cut at %d: error offset %d", cut, se.Offset)
			}
			if !strings.Contains(se.Msg, "truncated") {
				t.Fatalf("cut at %d: %q does not say truncated", cut, se.Msg)
			}
		}
	}
	for _, cut := range cuts {
		check(small, cut, complete.events)
	}
	// And a few hundred cuts spread over the whole real profile.
	all := readAll(t, bytes.NewReader(full)).events
	for i := range 300 {
		check(full, len(full)*i/300+i%7, all)
	}
}

func TestReaderRealProfile(t *testing.T) {
	in := loadReal(t)
	res := readAllSources(t, in)
	if res.err != nil || res.nwarn != 0 {
		t.Fatalf("err %v, %d warnings %v", res.err, res.nwarn, res.warnings)
	}
	if res.offset != int64(len(in)) {
		t.Errorf("Offset() = %d at the end, want %d", res.offset, len(in))
	}
	if len(res.events) != realEvents {
		t.Errorf("%d events, want %d", len(res.events), realEvents)
	}
	count := map[string]int{}
	var runs []Event
	kernels := 0
	for _, e := range res.events {
		if e.Category == "Session" {
			count[e.Name]++
		}
		if e.Name == "model_run" {
			runs = append(runs, e)
		}
		if e.IsKernel() {
			kernels++
		}
	}
	if count["model_run"] != realRuns || count["SequentialExecutor::Execute"] != realRuns {
		t.Errorf("session events %v, want %d runs", count, realRuns)
	}
	if kernels != realRuns*realKernelsPerRun {
		t.Errorf("%d kernel events, want %d", kernels, realRuns*realKernelsPerRun)
	}
	for i, run := range runs {
		in := 0
		for _, e := range res.events {
			if e.IsKernel() && e.TS >= run.TS && e.TS+e.Dur <= run.TS+run.Dur {
				in++
			}
		}
		if in != realKernelsPerRun {
			t.Errorf("run %d: %d kernels inside it, want %d", i, in, realKernelsPerRun)
		}
	}

	// The first kernel, as written in the file.
	want := Event{
		Category: "Node", Name: "batch_norm_0.tmp_3_nchwc_kernel_time", Phase: "X",
		PID: 5606, TID: 5606, TS: 78723, Dur: 4242,
		OpName: "Conv", Provider: "CPUExecutionProvider", NodeIndex: 246,
		ActivationSize: 110592, ParameterSize: 1792, OutputSize: 147456,
		InputShapes:  []TypeShape{{"float", []int64{1, 3, 48, 192}}, {"float", []int64{16, 3, 3, 3}}, {"float", []int64{16}}},
		OutputShapes: []TypeShape{{"float", []int64{1, 16, 24, 96}}},
		Threads: ThreadStats{Present: true, PoolName: "session-1-intra-op", BlockSizes: 1,
			Distribution: 4097, DistributionEnqueue: 0, Run: 0, Wait: 2, WaitRevoke: 1,
			SubThreads: []SubThread{{ID: "140634695530176", NumRun: 1, Core: 1}}},
	}
	if got := res.events[2]; !reflect.DeepEqual(normalize(got), normalize(want)) {
		t.Errorf("first kernel:\n got %+v\nwant %+v", got, want)
	}
	if got := res.events[2].NodeName(); got != "batch_norm_0.tmp_3_nchwc" {
		t.Errorf("NodeName = %q", got)
	}
}

// TestReaderMatchesEncodingJSON reads the real profile, in both forms, with
// encoding/json as an independent oracle and compares every field.
func TestReaderMatchesEncodingJSON(t *testing.T) {
	in := loadReal(t)
	want := oracle(t, in)
	forms := map[string][]byte{
		"array":  in,
		"object": []byte(`{"displayTimeUnit":"us","traceEvents":` + string(in) + `,"otherData":{"ort":"1.24.3"}}`),
	}
	for name, data := range forms {
		t.Run(name, func(t *testing.T) {
			res := readAll(t, bytes.NewReader(data))
			if res.err != nil {
				t.Fatal(res.err)
			}
			if len(res.events) != len(want) {
				t.Fatalf("%d events, encoding/json %d", len(res.events), len(want))
			}
			for i := range want {
				if !reflect.DeepEqual(normalize(res.events[i]), normalize(want[i])) {
					t.Fatalf("event %d:\n got %+v\nwant %+v", i, res.events[i], want[i])
				}
			}
		})
	}
}

// normalize makes nil and empty slices alike, for comparisons.
func normalize(e Event) Event {
	e = e.Clone()
	if e.InputShapes == nil {
		e.InputShapes = []TypeShape{}
	}
	if e.OutputShapes == nil {
		e.OutputShapes = []TypeShape{}
	}
	if e.Threads.SubThreads == nil {
		e.Threads.SubThreads = []SubThread{}
	}
	for _, s := range [][]TypeShape{e.InputShapes, e.OutputShapes} {
		for i := range s {
			if s[i].Dims == nil {
				s[i].Dims = []int64{}
			}
		}
	}
	return e
}

// oracle decodes a profile with encoding/json into generic values and maps
// them onto Events by the rules Event documents.
func oracle(t *testing.T, in []byte) []Event {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(in))
	d.UseNumber()
	var raw []map[string]any
	if err := d.Decode(&raw); err != nil {
		t.Fatal(err)
	}
	var num func(v any, def int64) int64
	num = func(v any, def int64) int64 {
		switch v := v.(type) {
		case json.Number:
			n, err := v.Int64()
			if err != nil {
				t.Fatalf("number %v: %v", v, err)
			}
			return n
		case string:
			return num(json.Number(v), def)
		}
		return def
	}
	str := func(v any) string { s, _ := v.(string); return s }
	shapes := func(v any) []TypeShape {
		out := []TypeShape{}
		list, _ := v.([]any)
		for _, o := range list {
			for typ, dims := range o.(map[string]any) {
				ts := TypeShape{Type: typ, Dims: []int64{}}
				for _, d := range dims.([]any) {
					ts.Dims = append(ts.Dims, num(d, -1))
				}
				out = append(out, ts)
			}
		}
		return out
	}
	var evs []Event
	for _, m := range raw {
		e := Event{
			Category: str(m["cat"]), Name: str(m["name"]), Phase: str(m["ph"]),
			PID: num(m["pid"], 0), TID: num(m["tid"], 0), TS: num(m["ts"], 0), Dur: num(m["dur"], 0),
			InputShapes: []TypeShape{}, OutputShapes: []TypeShape{},
			Threads: ThreadStats{SubThreads: []SubThread{}},
		}
		args, _ := m["args"].(map[string]any)
		e.OpName, e.Provider = str(args["op_name"]), str(args["provider"])
		e.NodeIndex = num(args["node_index"], -1)
		e.ActivationSize = num(args["activation_size"], -1)
		e.ParameterSize = num(args["parameter_size"], -1)
		e.OutputSize = num(args["output_size"], -1)
		if v, ok := args["input_type_shape"]; ok {
			e.InputShapes = shapes(v)
		}
		if v, ok := args["output_type_shape"]; ok {
			e.OutputShapes = shapes(v)
		}
		if ts, ok := args["thread_scheduling_stats"].(map[string]any); ok {
			e.Threads.Present = true
			mt, _ := ts["main_thread"].(map[string]any)
			e.Threads.PoolName = str(mt["thread_pool_name"])
			bs, _ := mt["block_size"].([]any)
			e.Threads.BlockSizes = len(bs)
			e.Threads.Distribution = num(mt["Distribution"], 0)
			e.Threads.DistributionEnqueue = num(mt["DistributionEnqueue"], 0)
			e.Threads.Run = num(mt["Run"], 0)
			e.Threads.Wait = num(mt["Wait"], 0)
			e.Threads.WaitRevoke = num(mt["WaitRevoke"], 0)
			sub, _ := ts["sub_threads"].(map[string]any)
			for _, id := range slices.Sorted(maps.Keys(sub)) {
				st := sub[id].(map[string]any)
				e.Threads.SubThreads = append(e.Threads.SubThreads, SubThread{ID: id, NumRun: num(st["num_run"], 0), Core: num(st["core"], -1)})
			}
		}
		evs = append(evs, e)
	}
	return evs
}

func TestReaderReadErrors(t *testing.T) {
	boom := errors.New("disk on fire")
	in := "[" + evA + "," + evB + "]"
	tests := []struct {
		name  string
		src   io.Reader
		names []string
	}{
		{"at once", iotest.ErrReader(boom), nil},
		{"after one event", io.MultiReader(strings.NewReader("["+evA+","), iotest.ErrReader(boom)), []string{"a"}},
		{"inside an event", io.MultiReader(strings.NewReader(in[:len(in)-10]), iotest.ErrReader(boom)), []string{"a"}},
		{"at the very end", io.MultiReader(strings.NewReader(in), iotest.ErrReader(boom)), []string{"a", "b"}},
		{"no progress", io.MultiReader(strings.NewReader("["), zeroReader{}), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := readAll(t, tt.src)
			var names []string
			for _, e := range res.events {
				names = append(names, e.Name)
			}
			if !reflect.DeepEqual(names, tt.names) {
				t.Errorf("events %q, want %q", names, tt.names)
			}
			if !errors.Is(res.err, boom) && !errors.Is(res.err, io.ErrNoProgress) {
				t.Fatalf("error %v, want the source's error", res.err)
			}
			if !strings.HasPrefix(res.err.Error(), "read profile at byte ") {
				t.Errorf("error %q does not say where", res.err)
			}
		})
	}
}

// zeroReader returns no bytes and no error, forever.
type zeroReader struct{}

func (zeroReader) Read([]byte) (int, error) { return 0, nil }

func TestReaderSticky(t *testing.T) {
	r := NewReader(strings.NewReader("[" + evA + "] x"))
	if _, err := r.Next(); err != nil {
		t.Fatal(err)
	}
	_, err1 := r.Next()
	_, err2 := r.Next()
	if err1 == nil || err1 != err2 {
		t.Errorf("errors %v then %v, want the same error twice", err1, err2)
	}
	r = NewReader(strings.NewReader("[]"))
	for range 3 {
		if _, err := r.Next(); err != io.EOF {
			t.Fatalf("Next after the end = %v, want io.EOF", err)
		}
	}
}

func TestReaderReset(t *testing.T) {
	r := NewReader(strings.NewReader("[" + evA + ",]"))
	for {
		if _, err := r.Next(); err != nil {
			break
		}
	}
	if r.WarningCount() != 1 {
		t.Fatalf("%d warnings before Reset, want 1", r.WarningCount())
	}
	r.Reset(strings.NewReader("[" + evB + "]"))
	ev, err := r.Next()
	if err != nil || ev.Name != "b" {
		t.Fatalf("after Reset: %v, %v", ev, err)
	}
	if r.WarningCount() != 0 || len(r.Warnings()) != 0 {
		t.Errorf("warnings survive Reset: %v", r.Warnings())
	}
	if _, err := r.Next(); err != io.EOF {
		t.Errorf("Next = %v, want io.EOF", err)
	}
	if r.Offset() != int64(len(evB)+2) {
		t.Errorf("Offset = %d after Reset, want %d", r.Offset(), len(evB)+2)
	}
}

func TestReaderWarningCap(t *testing.T) {
	const n = MaxWarnings + 50
	var b strings.Builder
	b.WriteString("[")
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString("{\"name\":\"a\x01\"}")
	}
	b.WriteString("]")
	res := readAll(t, strings.NewReader(b.String()))
	if res.err != nil || len(res.events) != n {
		t.Fatalf("%d events, %v", len(res.events), res.err)
	}
	if len(res.warnings) != MaxWarnings || res.nwarn != n {
		t.Errorf("%d warnings kept, %d counted; want %d, %d", len(res.warnings), res.nwarn, MaxWarnings, n)
	}
}

func TestReaderOffsetAdvances(t *testing.T) {
	in := "[\n" + evA + ",\n" + evB + "\n]\n"
	r := NewReader(iotest.OneByteReader(strings.NewReader(in)))
	var offs []int64
	for {
		if _, err := r.Next(); err != nil {
			break
		}
		offs = append(offs, r.Offset())
	}
	want := []int64{int64(2 + len(evA)), int64(2 + len(evA) + 2 + len(evB))}
	if !reflect.DeepEqual(offs, want) {
		t.Errorf("offsets after each event %v, want %v", offs, want)
	}
	if r.Offset() != int64(len(in)) {
		t.Errorf("Offset at the end = %d, want %d", r.Offset(), len(in))
	}
}

// TestReaderReusesEvent checks what Event documents: the *Event and its
// slices are reused, Clone copies.
func TestReaderReusesEvent(t *testing.T) {
	in := `[{"name":"a","args":{"input_type_shape":[{"float":[1,2]}],"thread_scheduling_stats":{"sub_threads":{"1":{"num_run":1}}}}},
{"name":"b","args":{"input_type_shape":[{"int8":[3,4]}],"thread_scheduling_stats":{"sub_threads":{"2":{"num_run":2}}}}}]`
	r := NewReader(strings.NewReader(in))
	first, err := r.Next()
	if err != nil {
		t.Fatal(err)
	}
	kept := first.Clone()
	second, err := r.Next()
	if err != nil {
		t.Fatal(err)
	}
	if first != second {
		t.Errorf("Next returned a new *Event; the doc says it is reused")
	}
	if kept.Name != "a" || kept.InputShapes[0].String() != "float[1,2]" || kept.Threads.SubThreads[0].ID != "1" {
		t.Errorf("Clone changed by the next event: %+v", kept)
	}
	if second.InputShapes[0].String() != "int8[3,4]" || second.Threads.SubThreads[0].NumRun != 2 {
		t.Errorf("second event %+v", second)
	}
}

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.json")
	if err := os.WriteFile(good, []byte("["+evA+",\n"+evB+",\n]"), 0o644); err != nil {
		t.Fatal(err)
	}
	var names []string
	warns, err := ReadFile(good, func(e *Event) error { names = append(names, e.Name); return nil })
	if err != nil || !reflect.DeepEqual(names, []string{"a", "b"}) || len(warns) != 1 {
		t.Errorf("ReadFile: %q, %v, %v", names, warns, err)
	}

	stop := errors.New("stop")
	calls := 0
	_, err = ReadFile(good, func(*Event) error { calls++; return stop })
	if err != stop || calls != 1 {
		t.Errorf("fn error: %v after %d calls, want it returned as is after 1", err, calls)
	}

	cut := filepath.Join(dir, "cut.json")
	if err := os.WriteFile(cut, []byte("["+evA+","+evB[:9]), 0o644); err != nil {
		t.Fatal(err)
	}
	calls = 0
	_, err = ReadFile(cut, func(*Event) error { calls++; return nil })
	var se *SyntaxError
	if !errors.As(err, &se) || calls != 1 || !strings.HasPrefix(err.Error(), fmt.Sprintf("read profile %q: profile JSON at byte ", cut)) {
		t.Errorf("truncated file: %v after %d events", err, calls)
	}

	empty := filepath.Join(dir, "empty.json")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFile(empty, func(*Event) error { return nil }); !errors.Is(err, ErrEmpty) || !strings.Contains(err.Error(), "empty.json") {
		t.Errorf("empty file: %v", err)
	}

	missing := filepath.Join(dir, "missing.json")
	if _, err := ReadFile(missing, func(*Event) error { return nil }); !errors.Is(err, os.ErrNotExist) || !strings.HasPrefix(err.Error(), "read profile ") {
		t.Errorf("missing file: %v", err)
	}
}

// TestReaderRejectsImpossibleTimes: an event whose ts or dur is negative,
// not finite (1e999, a string "Infinity") or out of range (1e308, int64's
// largest, a sum past 100 years) is skipped and counted with its offset
// and a reason, never returned; the events around it are.
func TestReaderRejectsImpossibleTimes(t *testing.T) {
	events := []struct {
		json string
		bad  string // what the rejection names; "" for a good event
	}{
		{`{"name":"ok","ts":5,"dur":3}`, ""},
		{`{"name":"neg","ts":5,"dur":-5}`, `"neg": dur -5`},
		{`{"name":"huge","ts":5,"dur":1e308}`, `"huge": dur 9223372036854775807`},
		{`{"name":"inf","ts":1e999,"dur":1}`, `"inf": ts 9223372036854775807`},
		{`{"name":"infstr","ts":1,"dur":"Infinity"}`, `"infstr": dur 9223372036854775807`},
		{`{"name":"max","ts":9223372036854775807,"dur":0}`, `"max": ts 9223372036854775807`},
		{`{"name":"sum","ts":3000000000000000,"dur":200000000000000}`, `"sum": ts+dur 3200000000000000`},
		{`{"name":"negts","ts":-1,"dur":1}`, `"negts": ts -1`},
		{`{"name":"edge","ts":0,"dur":3155760000000000}`, ""},
		{`{"name":"last","ts":7,"dur":0}`, ""},
	}
	var parts []string
	var wantNames, wantBad []string
	var offsets []int64
	off := int64(1)
	for i, e := range events {
		if i > 0 {
			off++ // the comma
		}
		parts = append(parts, e.json)
		if e.bad == "" {
			wantNames = append(wantNames, strings.Split(strings.Split(e.json, `"name":"`)[1], `"`)[0])
		} else {
			wantBad = append(wantBad, e.bad)
			offsets = append(offsets, off)
		}
		off += int64(len(e.json))
	}
	r := NewReader(strings.NewReader("[" + strings.Join(parts, ",") + "]"))
	var got []string
	for {
		ev, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, ev.Name)
	}
	if strings.Join(got, " ") != strings.Join(wantNames, " ") {
		t.Errorf("events %q, want %q", got, wantNames)
	}
	rej := r.Rejected()
	if r.RejectedCount() != len(wantBad) || len(rej) != len(wantBad) {
		t.Fatalf("%d rejected (%d kept), want %d: %v", r.RejectedCount(), len(rej), len(wantBad), rej)
	}
	for i, w := range rej {
		if !strings.Contains(w.Msg, wantBad[i]) || !strings.Contains(w.Msg, "skipped") || w.Offset != offsets[i] {
			t.Errorf("rejection %d: %v, want byte %d and %q", i, w, offsets[i], wantBad[i])
		}
	}
	if r.WarningCount() != 0 {
		t.Errorf("rejections counted as repairs too: %v", r.Warnings())
	}
}
