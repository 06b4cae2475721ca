package profile

import (
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"strconv"
)

// Reader streams the events of an ONNX Runtime profile. It reads through
// one reused buffer, so its memory does not grow with the size of the input,
// and it allocates nothing per event once the strings it meets repeat.
//
// A Reader is not safe for concurrent use.
type Reader struct {
	src      io.Reader
	buf      []byte
	pos, end int   // unread bytes are buf[pos:end]
	base     int64 // input offset of buf[0]
	eof      bool  // src reported io.EOF
	err      error // read failure or oversized token (sticky)
	truncMsg string

	state     int
	final     error // what Next returns from now on (io.EOF or the error)
	sawEvents bool  // the top-level object had its "traceEvents"
	mark      int64 // Offset()

	ev       Event
	strs     interner
	scratch  []byte // decoded strings with escapes or repairs
	keyBuf   []byte // the current key, when it cannot stay in buf
	stack    []byte // brackets of the value being skipped
	warnings []Warning
	nwarn    int
	rejected []Warning
	nreject  int
}

// Reader states.
const (
	stStart = iota // before the first byte
	stFirst        // inside the event array, before its first element
	stNext         // after an event
	stTail         // after the event array
)

// NewReader returns a Reader of the profile JSON in r. Both forms of the
// Chrome trace format are accepted: a top-level array of events, and an
// object whose "traceEvents" key holds that array.
func NewReader(r io.Reader) *Reader {
	pr := &Reader{}
	pr.Reset(r)
	return pr
}

// Reset makes the Reader read a new input, reusing its buffers.
func (r *Reader) Reset(src io.Reader) {
	if r.buf == nil {
		r.buf = make([]byte, defaultBufSize)
	}
	*r = Reader{
		src:     src,
		buf:     r.buf,
		ev:      r.ev,
		strs:    r.strs,
		scratch: r.scratch[:0],
		keyBuf:  r.keyBuf[:0],
		stack:   r.stack[:0],
	}
}

// Offset returns how many bytes of the input the events read so far took:
// just past the last event Next returned, or the whole input once Next has
// returned io.EOF. An error does not move it.
func (r *Reader) Offset() int64 { return r.mark }

// offset returns the input offset of r.buf[r.pos].
func (r *Reader) offset() int64 { return r.base + int64(r.pos) }

// Rejected returns the first MaxWarnings events skipped so far for
// impossible times (see Event.badTimes): a negative, non-finite or
// out-of-range ts or dur, which would make a span end before it starts or
// a duration of centuries. RejectedCount counts them all.
func (r *Reader) Rejected() []Warning { return r.rejected[:len(r.rejected):len(r.rejected)] }

// RejectedCount returns how many events were skipped for impossible times.
func (r *Reader) RejectedCount() int { return r.nreject }

// reject skips the event read from byte off, saying why.
func (r *Reader) reject(off int64, msg string) {
	r.nreject++
	if len(r.rejected) < MaxWarnings {
		r.rejected = append(r.rejected, Warning{Offset: off, Msg: msg})
	}
}

// Warnings returns the first MaxWarnings repairs made so far.
func (r *Reader) Warnings() []Warning { return r.warnings[:len(r.warnings):len(r.warnings)] }

// WarningCount returns how many repairs were made so far, including those
// beyond MaxWarnings that Warnings does not keep.
func (r *Reader) WarningCount() int { return r.nwarn }

// Next returns the next event. An event whose times are impossible is
// skipped and counted (Rejected), never returned. It returns io.EOF after
// the last one, ErrEmpty
// for an input with no JSON at all, a *SyntaxError for input it cannot read
// without guessing, or the error of the underlying reader. Once Next returns
// an error it returns the same error on every later call; every event it
// returned before was read whole (a cut or broken event is never returned).
//
// The returned Event is reused by the next call, even one that fails; see
// Event.
func (r *Reader) Next() (*Event, error) {
	if r.final != nil {
		return nil, r.final
	}
	ev, err := r.next()
	if err != nil {
		if err == io.EOF {
			r.mark = r.offset()
		}
		r.final = err
		return nil, err
	}
	r.mark = r.offset()
	return ev, nil
}

func (r *Reader) next() (*Event, error) {
	for {
		switch r.state {
		case stStart:
			if err := r.start(); err != nil {
				return nil, err
			}
		case stFirst, stNext:
			r.truncMsg = msgTruncArray
			c, ok := r.peek()
			if !ok {
				return nil, r.truncated()
			}
			if c == ']' {
				r.pos++
				r.state = stTail
				continue
			}
			if r.state == stNext {
				if c != ',' {
					return nil, r.syntaxErr(0, "expected ',' or ']' after an event, found "+quoteByte(c))
				}
				r.pos++
				if c, ok = r.peek(); !ok {
					return nil, r.truncated()
				}
				if c == ']' {
					r.warn(0, "trailing comma after the last event: ignored")
					r.pos++
					r.state = stTail
					continue
				}
			}
			if c != '{' {
				return nil, r.syntaxErr(0, "expected '{' to start an event, found "+quoteByte(c))
			}
			start := r.offset()
			r.pos++
			r.truncMsg = msgTruncEvent
			if err := r.parseEvent(&r.ev); err != nil {
				return nil, err
			}
			r.state = stNext
			if msg := r.ev.badTimes(); msg != "" {
				r.reject(start, msg)
				continue
			}
			return &r.ev, nil
		default: // stTail
			return nil, r.finish()
		}
	}
}

// start reads the opening of the profile, up to the '[' of the event array.
func (r *Reader) start() error {
	r.truncMsg = msgTruncTopLevel
	c, ok := r.peek()
	if ok && c == 0xEF { // a UTF-8 byte order mark
		for r.pos+3 > r.end && r.more() {
		}
		if r.end-r.pos >= 3 && r.buf[r.pos+1] == 0xBB && r.buf[r.pos+2] == 0xBF {
			r.warn(0, "UTF-8 byte order mark at the start: skipped")
			r.pos += 3
			c, ok = r.peek()
		}
	}
	if !ok {
		if r.err != nil {
			return r.err
		}
		return ErrEmpty
	}
	switch c {
	case '[':
		r.pos++
		r.state = stFirst
		return nil
	case '{':
		r.pos++
		found, err := r.topKeys(true)
		if err != nil {
			return err
		}
		if !found {
			return &SyntaxError{Offset: r.offset(), Msg: `the top-level JSON object has no "traceEvents" array, so it holds no trace events`}
		}
		r.state = stFirst
		return nil
	}
	return r.syntaxErr(0, "expected '[' or '{' at the start of the profile, found "+quoteByte(c)+
		": this is not ONNX Runtime profile JSON")
}

// topKeys reads keys of the top-level object, skipping their values, up to
// the first "traceEvents" (found is true, its '[' consumed) or the closing
// '}' (found is false).
func (r *Reader) topKeys(first bool) (found bool, err error) {
	for ; ; first = false {
		key, done, err := r.nextKey(first, "the top-level object")
		if err != nil || done {
			return false, err
		}
		events := !r.sawEvents && string(key) == "traceEvents"
		if !events {
			if err := r.skipValue(); err != nil {
				return false, err
			}
			continue
		}
		c, ok := r.peek()
		if !ok {
			return false, r.truncated()
		}
		if c != '[' {
			return false, r.syntaxErr(0, `"traceEvents" must be an array of events, found `+quoteByte(c))
		}
		r.pos++
		r.sawEvents = true
		return true, nil
	}
}

// finish reads what follows the event array: the rest of the top-level
// object, if any, then only white space up to the end of the input.
func (r *Reader) finish() error {
	r.truncMsg = msgTruncTopLevel
	if r.sawEvents {
		if _, err := r.topKeys(false); err != nil {
			return err
		}
	}
	if c, ok := r.peek(); ok {
		return r.syntaxErr(0, "unexpected data after the end of the profile, found "+quoteByte(c))
	}
	if r.err != nil {
		return r.err
	}
	return io.EOF
}

// nextKey is called after an object's '{' (first) or after one of its
// values. It consumes the ',', the next key and the ':' after it, and
// returns the key, valid only until the next scanner call; done is true when
// the object's '}' was consumed instead.
func (r *Reader) nextKey(first bool, where string) (key []byte, done bool, err error) {
	// Fast path: `,"key":`, `, "key" :` and the like, whole in the buffer,
	// with a plain ASCII key.
	b, p := r.buf[:r.end], r.pos
	if p+1 < len(b) {
		switch b[p] {
		case '}':
			r.pos = p + 1
			return nil, true, nil
		case ',':
			if !first {
				p++
				if b[p] == ' ' {
					p++
				}
			}
		}
		if p < len(b) && b[p] == '"' && (p > r.pos || first) {
			i := p + 1
			for i+8 <= len(b) && plain8(binary.LittleEndian.Uint64(b[i:])) {
				i += 8
			}
			for i < len(b) && strPlain[b[i]] {
				i++
			}
			if i+2 < len(b) && b[i] == '"' {
				j := i + 1
				if b[j] == ' ' {
					j++
				}
				if b[j] == ':' {
					r.pos = j + 1
					return b[p+1 : i], false, nil
				}
			}
		}
	}
	return r.nextKeySlow(first, where)
}

func (r *Reader) nextKeySlow(first bool, where string) (key []byte, done bool, err error) {
	c, ok := r.peek()
	if !ok {
		return nil, false, r.truncated()
	}
	if !first {
		switch c {
		case '}':
			r.pos++
			return nil, true, nil
		case ',':
			r.pos++
			if c, ok = r.peek(); !ok {
				return nil, false, r.truncated()
			}
			if c == '}' {
				r.warn(0, "trailing comma before '}' in "+where+": ignored")
				r.pos++
				return nil, true, nil
			}
		default:
			return nil, false, r.syntaxErr(0, "expected ',' or '}' after a value in "+where+", found "+quoteByte(c))
		}
	} else if c == '}' {
		r.pos++
		return nil, true, nil
	}
	if c != '"' {
		return nil, false, r.syntaxErr(0, "expected a quoted key in "+where+", found "+quoteByte(c))
	}
	if key, err = r.readString(false); err != nil {
		return nil, false, err
	}
	// Reading the ':' may refill the buffer: keep the key apart.
	r.keyBuf = append(r.keyBuf[:0], key...)
	if err := r.colon(); err != nil {
		return nil, false, err
	}
	return r.keyBuf, false, nil
}

// nextElem is called after an array's '[' (first) or after one of its
// values. It consumes the ',' and returns the first byte of the next value
// (not consumed); done is true when the array's ']' was consumed.
func (r *Reader) nextElem(first bool, where string) (c byte, done bool, err error) {
	// Fast paths: "]", ",x" and, first, "x", whole in the buffer.
	if p := r.pos; p+1 < r.end {
		switch c := r.buf[p]; {
		case c == ']':
			r.pos = p + 1
			return 0, true, nil
		case first && c > ' ':
			return c, false, nil
		case c == ',' && !first:
			if c = r.buf[p+1]; c > ' ' && c != ']' {
				r.pos = p + 1
				return c, false, nil
			}
		}
	}
	return r.nextElemSlow(first, where)
}

func (r *Reader) nextElemSlow(first bool, where string) (c byte, done bool, err error) {
	c, ok := r.peek()
	if !ok {
		return 0, false, r.truncated()
	}
	if !first {
		switch c {
		case ']':
			r.pos++
			return 0, true, nil
		case ',':
			r.pos++
			if c, ok = r.peek(); !ok {
				return 0, false, r.truncated()
			}
			if c == ']' {
				r.warn(0, "trailing comma before ']' in "+where+": ignored")
				r.pos++
				return 0, true, nil
			}
		default:
			return 0, false, r.syntaxErr(0, "expected ',' or ']' after a value in "+where+", found "+quoteByte(c))
		}
	} else if c == ']' {
		r.pos++
		return 0, true, nil
	}
	return c, false, nil
}

// colon consumes the ':' after a key.
func (r *Reader) colon() error {
	if p := r.pos; p+1 < r.end {
		// Fast paths: ":" and " :" (ONNX Runtime writes `"cat" : "Session"`).
		if r.buf[p] == ':' {
			r.pos = p + 1
			return nil
		}
		if r.buf[p] == ' ' && r.buf[p+1] == ':' {
			r.pos = p + 2
			return nil
		}
	}
	c, ok := r.peek()
	if !ok {
		return r.truncated()
	}
	if c != ':' {
		return r.syntaxErr(0, "expected ':' after a key, found "+quoteByte(c))
	}
	r.pos++
	return nil
}

// open consumes the '{' or '[' (want) that starts a value of key what, and
// reports whether it was there. A value of another kind is skipped: silently
// when it is null, with a warning otherwise.
func (r *Reader) open(want byte, what string) (bool, error) {
	c, ok := r.peek()
	if !ok {
		return false, r.truncated()
	}
	if c == want {
		r.pos++
		return true, nil
	}
	kind := "an object"
	if want == '[' {
		kind = "an array"
	}
	return false, r.mismatch(c, what, kind)
}

// mismatch skips a value of the wrong kind (first byte c) for key what.
func (r *Reader) mismatch(c byte, what, kind string) error {
	off := r.offset()
	if err := r.skipValue(); err != nil {
		return err
	}
	if c == 'n' && r.offset()-off == 4 { // null: the key is simply absent
		return nil
	}
	r.nwarn++
	if len(r.warnings) < MaxWarnings {
		r.warnings = append(r.warnings, Warning{Offset: off,
			Msg: strconv.Quote(what) + " is not " + kind + ": ignored"})
	}
	return nil
}

// str reads a string value and returns it interned.
func (r *Reader) str(what string) (string, error) {
	if p := r.pos; p+1 < r.end && r.buf[p] == ' ' && r.buf[p+1] == '"' {
		r.pos++ // `"cat" : "Node"`
	}
	c, ok := r.peek()
	if !ok {
		return "", r.truncated()
	}
	if c != '"' {
		return "", r.mismatch(c, what, "a string")
	}
	b, err := r.readString(false)
	if err != nil {
		return "", err
	}
	return r.strs.get(b), nil
}

// num reads an integer value, written as a JSON number or as a string of
// one, into *dst. Fractions are rounded. *dst is left alone when the value
// is null or not a number.
func (r *Reader) num(dst *int64, what string) error {
	// Fast path: a non-negative integer of up to 18 digits, bare or quoted,
	// whole in the buffer.
	b, p := r.buf[:r.end], r.pos
	if p < len(b) && b[p] == ' ' {
		p++
	}
	if p < len(b) {
		c := b[p]
		q := p
		if c == '"' {
			q++
		}
		var v int64
		i := q
		for ; i < len(b) && i-q < 18; i++ {
			d := b[i] - '0'
			if d > 9 {
				break
			}
			v = v*10 + int64(d)
		}
		if i > q && i+2 < len(b) {
			if c != '"' {
				if !scalarByte[b[i]] {
					*dst = v
					r.pos = i
					return nil
				}
			} else if b[i] == '"' {
				d := b[i+1]
				if d == ' ' {
					d = b[i+2]
				}
				if isDelim[d] {
					*dst = v
					r.pos = i + 1
					return nil
				}
			}
		}
	}
	return r.numSlow(dst, what)
}

func (r *Reader) numSlow(dst *int64, what string) error {
	c, ok := r.peek()
	if !ok {
		return r.truncated()
	}
	if c == '"' {
		off := r.offset()
		b, err := r.readString(false)
		if err != nil {
			return err
		}
		if v, ok := parseNumber(b); ok {
			*dst = v
			return nil
		}
		r.nwarn++
		if len(r.warnings) < MaxWarnings {
			r.warnings = append(r.warnings, Warning{Offset: off,
				Msg: strconv.Quote(what) + " holds a string that is not a number: ignored"})
		}
		return nil
	}
	if !scalarByte[c] {
		return r.mismatch(c, what, "a number")
	}
	tok, err := r.scalar()
	if err != nil {
		return err
	}
	switch classify(tok) {
	case scalarInt, scalarFloat:
		v, ok := parseNumber(tok)
		if !ok {
			return r.syntaxErr(0, "invalid number "+strconv.Quote(string(tok[:min(len(tok), 40)])))
		}
		*dst = v
		r.pos += len(tok)
		return nil
	case scalarBad:
		return r.syntaxErr(0, "invalid value "+strconv.Quote(string(tok[:min(len(tok), 40)])))
	}
	return r.mismatch(c, what, "a number")
}

// ReadFile reads the profile at path and calls fn with each event, in file
// order. The *Event passed to fn is reused after fn returns (see Event). An
// error of fn stops the reading and is returned as is; read and syntax
// errors are returned wrapped with the path. The warnings are returned in
// every case.
func ReadFile(path string, fn func(*Event) error) (warnings []Warning, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read profile %q: %w", path, err)
	}
	defer f.Close()
	r := NewReader(f)
	for {
		ev, err := r.Next()
		if err == io.EOF {
			return r.Warnings(), nil
		}
		if err != nil {
			return r.Warnings(), fmt.Errorf("read profile %q: %w", path, err)
		}
		if err := fn(ev); err != nil {
			return r.Warnings(), err
		}
	}
}
