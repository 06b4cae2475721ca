package profimport

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strconv"
)

// This file makes large profiles for tests and the import benchmark out of
// one real run: ONNX Runtime writes one event per line, so the run's lines
// are repeated with their "ts" shifted, run after run, in ORT's own order.

// SynthOptions shapes a synthetic profile.
type SynthOptions struct {
	// Bytes is the size to reach (at least one run is written).
	Bytes int64
	// NoRuns leaves out the model_run events (a broken profile: operators
	// with no run to belong to).
	NoRuns bool
}

// SynthCounts says what Synthesize wrote.
type SynthCounts struct {
	Bytes      int64
	Runs       int64 // model_run events
	NodeEvents int64 // kernel events
	Other      int64 // other session events (model loading, initialization)
}

var tsField = regexp.MustCompile(`"ts" ?: ?(\d+)`)

type synthLine struct {
	pre, post []byte // around the ts digits
	ts        int64
	kind      int // 0 other, 1 run body, 2 model_run
	kernel    bool
}

// Synthesize writes a profile to w made of the session events of src (a
// real ORT profile, one event per line) followed by copies of the last run
// in src, shifted in time, until opts.Bytes is reached.
func Synthesize(w io.Writer, src io.Reader, opts SynthOptions) (SynthCounts, error) {
	var lines [][]byte
	sc := bufio.NewScanner(src)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		l := bytes.TrimSpace(sc.Bytes())
		l = bytes.TrimSuffix(l, []byte(","))
		if len(l) > 0 && l[0] == '{' {
			lines = append(lines, append([]byte(nil), l...))
		}
	}
	if err := sc.Err(); err != nil {
		return SynthCounts{}, err
	}
	type meta struct {
		Cat  string `json:"cat"`
		Name string `json:"name"`
		TS   int64  `json:"ts"`
		Dur  int64  `json:"dur"`
	}
	ms := make([]meta, len(lines))
	last := -1
	for i, l := range lines {
		if err := json.Unmarshal(l, &ms[i]); err != nil {
			return SynthCounts{}, fmt.Errorf("line %d of the source profile: %w", i+1, err)
		}
		if ms[i].Cat == "Session" && ms[i].Name == "model_run" {
			last = i
		}
	}
	if last < 0 {
		return SynthCounts{}, fmt.Errorf("the source profile has no model_run")
	}
	run := ms[last]
	var head, body []synthLine
	for i, l := range lines {
		m := ms[i]
		loc := tsField.FindSubmatchIndex(l)
		if loc == nil {
			return SynthCounts{}, fmt.Errorf("line %d of the source profile has no ts", i+1)
		}
		sl := synthLine{pre: l[:loc[2]], post: l[loc[3]:], ts: m.TS,
			kernel: m.Cat == "Node" && bytes.HasSuffix([]byte(m.Name), []byte("_kernel_time"))}
		switch {
		case m.Cat == "Session" && m.Name != "model_run" && m.Name != "SequentialExecutor::Execute":
			head = append(head, sl)
		case m.TS >= run.TS && m.TS+m.Dur <= run.TS+run.Dur:
			sl.kind = 1
			if i == last {
				sl.kind = 2
			}
			body = append(body, sl)
		}
	}
	period := run.Dur + 100
	bw := bufio.NewWriterSize(w, 1<<20)
	var c SynthCounts
	write := func(b []byte) {
		n, _ := bw.Write(b)
		c.Bytes += int64(n)
	}
	write([]byte("[\n"))
	first := true
	emit := func(sl *synthLine, shift int64) {
		if !first {
			write([]byte(",\n"))
		}
		first = false
		write(sl.pre)
		var num [20]byte
		write(strconv.AppendInt(num[:0], sl.ts+shift, 10))
		write(sl.post)
	}
	for i := range head {
		emit(&head[i], 0)
		c.Other++
	}
	for k := int64(0); k == 0 || c.Bytes < opts.Bytes; k++ {
		shift := k * period
		for i := range body {
			sl := &body[i]
			if sl.kind == 2 {
				if opts.NoRuns {
					continue
				}
				c.Runs++
			}
			if sl.kernel {
				c.NodeEvents++
			}
			emit(sl, shift)
		}
	}
	write([]byte("\n]\n"))
	return c, bw.Flush()
}
