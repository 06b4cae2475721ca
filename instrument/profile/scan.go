package profile

import (
	"encoding/binary"
	"io"
	"strconv"
	"unicode/utf8"
)

// The scanner below reads JSON tokens straight out of the Reader's buffer.
// Every scanning function works on r.buf[r.pos:r.end] with indexes relative
// to r.pos; more() moves the unread bytes (from r.pos on) to the front of the
// buffer before reading, so those relative indexes survive a refill and a
// token being scanned stays whole (but a skipped string, which is dropped as
// it is scanned, so that its length costs no memory). Fast paths handle the
// layout ONNX Runtime writes when it lies whole in the buffer; anything else
// takes the general path.

const (
	defaultBufSize = 256 << 10 // read size; the buffer grows only for a longer token
	maxTokenSize   = 8 << 20   // longest single string or number accepted
	maxDepth       = 10000     // deepest nesting of skipped values
)

// Byte classes.
var (
	isSpace = byteClass(func(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' })
	// isDelim: what may follow a string's closing quote.
	isDelim = byteClass(func(c byte) bool { return c == ',' || c == ':' || c == '}' || c == ']' })
	// strPlain: string bytes that need no attention, printable ASCII but '"' and '\\'.
	strPlain = byteClass(func(c byte) bool { return c >= 0x20 && c < 0x80 && c != '"' && c != '\\' })
	// scalarByte: bytes of numbers and of true/false/null (and of bare words).
	scalarByte = byteClass(func(c byte) bool {
		return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '-' || c == '+' || c == '.' || c == '_'
	})
)

func byteClass(in func(byte) bool) (t [256]bool) {
	for c := range 256 {
		t[c] = in(byte(c))
	}
	return t
}

// more reads more input, keeping the unread bytes r.buf[r.pos:r.end] (moved
// to the front of the buffer). It reports whether new bytes arrived; it
// returns false at the end of the input, on a read error and when a single
// token outgrows maxTokenSize (the last two set r.err).
func (r *Reader) more() bool {
	if r.eof || r.err != nil {
		return false
	}
	if r.pos > 0 {
		n := copy(r.buf, r.buf[r.pos:r.end])
		r.base += int64(r.pos)
		r.pos, r.end = 0, n
	}
	if r.end == len(r.buf) {
		if len(r.buf) >= maxTokenSize {
			r.err = &SyntaxError{Offset: r.base, Msg: "a single value is longer than " +
				strconv.Itoa(maxTokenSize>>20) + " MiB: this does not look like an ONNX Runtime profile"}
			return false
		}
		nb := make([]byte, min(2*len(r.buf), maxTokenSize))
		copy(nb, r.buf[:r.end])
		r.buf = nb
	}
	for range 100 {
		p := r.buf[r.end:]
		n, err := r.src.Read(p)
		if n < 0 || n > len(p) {
			r.err = &readError{off: r.base + int64(r.end), err: errBadRead}
			return false
		}
		r.end += n
		if err != nil {
			if err == io.EOF {
				r.eof = true
			} else {
				r.err = &readError{off: r.base + int64(r.end), err: err}
			}
			return n > 0
		}
		if n > 0 {
			return true
		}
	}
	r.err = &readError{off: r.base + int64(r.end), err: io.ErrNoProgress}
	return false
}

// peek skips white space and returns the next byte without consuming it;
// ok is false at the end of the input. Its fast path is small enough to be
// inlined.
func (r *Reader) peek() (c byte, ok bool) {
	if r.pos < r.end {
		if c := r.buf[r.pos]; c > ' ' {
			return c, true
		}
	}
	return r.peekSlow()
}

func (r *Reader) peekSlow() (c byte, ok bool) {
	// Fast path: one space (as in `"cat" : "Session"`).
	if p := r.pos; p+1 < r.end && r.buf[p] == ' ' {
		if c := r.buf[p+1]; c > ' ' {
			r.pos = p + 1
			return c, true
		}
	}
	for {
		b := r.buf[r.pos:r.end]
		for i, c := range b {
			if !isSpace[c] {
				r.pos += i
				return c, true
			}
		}
		r.pos = r.end
		if !r.more() {
			return 0, false
		}
	}
}

// truncated returns the error for an input that ends (or fails to read)
// where more JSON must follow.
func (r *Reader) truncated() error {
	if r.err != nil {
		return r.err
	}
	return &SyntaxError{Offset: r.base + int64(r.end), Msg: r.truncMsg}
}

// syntaxErr returns a *SyntaxError at r.pos+i.
func (r *Reader) syntaxErr(i int, msg string) error {
	return &SyntaxError{Offset: r.base + int64(r.pos+i), Msg: msg}
}

// warn records a repair at r.pos+i.
func (r *Reader) warn(i int, msg string) {
	r.nwarn++
	if len(r.warnings) < MaxWarnings {
		r.warnings = append(r.warnings, Warning{Offset: r.base + int64(r.pos+i), Msg: msg})
	}
}

// quoteByte describes c for a message: 'x' for printable ASCII, else 0x1f.
func quoteByte(c byte) string {
	if c >= 0x20 && c < 0x7f {
		return strconv.QuoteRune(rune(c))
	}
	return "byte 0x" + strconv.FormatUint(uint64(c)|0x100, 16)[1:]
}

// readString reads the JSON string starting at r.buf[r.pos] == '"' and
// consumes it. Unless discard is set it returns the decoded content, which
// stays valid only until the next scanner call; with discard the content is
// not wanted (what it returns is meaningless) and the string's bytes may be
// dropped from the buffer while scanning, so that a skipped string of any
// length needs no memory.
//
// Repairs, each recorded as a warning: a '"' that is not followed (after
// white space) by ',' ':' '}' ']' or the end of the input is kept as part of
// the string; raw control characters are kept; invalid UTF-8 becomes U+FFFD;
// a backslash that starts no valid escape is kept literally.
func (r *Reader) readString(discard bool) ([]byte, error) {
	// Fast path: plain ASCII up to a quote that a delimiter follows, all in
	// the buffer.
	b := r.buf[r.pos:r.end]
	i := 1
	for i+8 <= len(b) && plain8(binary.LittleEndian.Uint64(b[i:])) {
		i += 8
	}
	for i < len(b) && strPlain[b[i]] {
		i++
	}
	if i+2 < len(b) && b[i] == '"' {
		c := b[i+1]
		if c == ' ' {
			c = b[i+2]
		}
		if isDelim[c] {
			r.pos += i + 1
			return b[1:i], nil
		}
	}
	return r.readStringSlow(discard, i)
}

// readStringSlow goes on with readString from r.pos+i, where the bytes
// before i are plain.
func (r *Reader) readStringSlow(discard bool, i int) ([]byte, error) {
	seg := 1     // start of the bytes not yet copied to r.scratch
	esc := false // content is being built in r.scratch
	r.scratch = r.scratch[:0]
	for {
		b := r.buf[r.pos:r.end]
		// Eight bytes at a time while none needs attention, then one by one.
		for i+8 <= len(b) && plain8(binary.LittleEndian.Uint64(b[i:])) {
			i += 8
		}
		for i < len(b) && strPlain[b[i]] {
			i++
		}
		if i >= len(b) {
			if discard && !esc {
				// Drop what was scanned; the string's content is not wanted.
				r.pos += i
				i, seg = 0, 0
			}
			if !r.more() {
				return nil, r.truncated()
			}
			continue
		}
		switch c := b[i]; {
		case c == '"':
			if r.quoteEnds(b, i) {
				var out []byte
				if !discard {
					if esc {
						out = append(r.scratch, r.buf[r.pos+seg:r.pos+i]...)
						r.scratch = out
					} else {
						out = r.buf[r.pos+1 : r.pos+i]
					}
				}
				r.pos += i + 1
				return out, nil
			}
			r.warn(i, "unescaped '\"' inside a string: kept as part of the string")
			i++
		case c == '\\':
			for r.pos+i+1 >= r.end {
				if !r.more() {
					return nil, r.truncated()
				}
			}
			e := r.buf[r.pos+i+1]
			var dec byte
			switch e {
			case '"', '\\', '/':
				dec = e
			case 'b':
				dec = '\b'
			case 'f':
				dec = '\f'
			case 'n':
				dec = '\n'
			case 'r':
				dec = '\r'
			case 't':
				dec = '\t'
			case 'u':
				n, err := r.unicodeEscape(i, discard, &seg, &esc)
				if err != nil {
					return nil, err
				}
				i += n
				continue
			default:
				// Not an escape: keep the backslash as a character and go on
				// with the byte after it as usual.
				r.warn(i, "backslash that starts no valid escape ("+quoteByte(e)+" follows): kept literally")
				i++
				continue
			}
			if !discard {
				r.scratch = append(r.scratch, r.buf[r.pos+seg:r.pos+i]...)
				r.scratch = append(r.scratch, dec)
				esc = true
			}
			i += 2
			seg = i
		case c < 0x20:
			r.warn(i, "raw control character ("+quoteByte(c)+") inside a string: kept as is")
			i++
		default: // c >= 0x80: UTF-8
			for r.pos+i+utf8.UTFMax > r.end && !utf8.FullRune(r.buf[r.pos+i:r.end]) {
				if !r.more() {
					break
				}
			}
			ru, size := utf8.DecodeRune(r.buf[r.pos+i : r.end])
			if ru == utf8.RuneError && size <= 1 {
				r.warn(i, "invalid UTF-8 ("+quoteByte(c)+") inside a string: replaced by U+FFFD")
				if !discard {
					r.scratch = append(r.scratch, r.buf[r.pos+seg:r.pos+i]...)
					r.scratch = utf8.AppendRune(r.scratch, utf8.RuneError)
					esc = true
				}
				i++
				seg = i
				continue
			}
			i += size
		}
	}
}

// unicodeEscape handles the \u escape at r.pos+i and returns how many bytes
// it consumed. A valid escape (or surrogate pair) is decoded into r.scratch;
// a lone surrogate becomes U+FFFD; "\u" without four hex digits is kept
// literally.
func (r *Reader) unicodeEscape(i int, discard bool, seg *int, esc *bool) (int, error) {
	// Want up to 12 bytes: \uD83D\uDE00.
	for r.pos+i+12 > r.end && r.more() {
	}
	rest := r.buf[r.pos+i : r.end]
	ru, ok := hex4(rest[2:])
	if !ok {
		if r.err != nil {
			return 0, r.err
		}
		if avail := rest[2:min(len(rest), 6)]; len(avail) < 4 && allHex(avail) {
			// The input ends inside the escape.
			return 0, r.truncated()
		}
		r.warn(i, `"\u" without four hex digits: kept literally`)
		return 1, nil // keep the backslash; 'u' and the rest follow as plain text
	}
	n := 6
	if utf16IsSurrogate(ru) {
		lo, ok2 := rune(0), false
		if len(rest) >= 12 && rest[6] == '\\' && rest[7] == 'u' {
			lo, ok2 = hex4(rest[8:])
		}
		if ok2 && ru < 0xdc00 && lo >= 0xdc00 && lo <= 0xdfff {
			ru = (ru-0xd800)<<10 | (lo - 0xdc00) + 0x10000
			n = 12
		} else {
			r.warn(i, "lone UTF-16 surrogate in a \\u escape: replaced by U+FFFD")
			ru = utf8.RuneError
		}
	}
	if !discard {
		r.scratch = append(r.scratch, r.buf[r.pos+*seg:r.pos+i]...)
		r.scratch = utf8.AppendRune(r.scratch, ru)
		*esc = true
	}
	*seg = i + n
	return n, nil
}

func allHex(b []byte) bool {
	for _, c := range b {
		if _, ok := hex4([]byte{c, '0', '0', '0'}); !ok {
			return false
		}
	}
	return true
}

func utf16IsSurrogate(r rune) bool { return r >= 0xd800 && r <= 0xdfff }

// hex4 decodes four hex digits at the start of b.
func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var v rune
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		v = v<<4 | rune(c)
	}
	return v, true
}

// plain8 reports whether none of the eight bytes in x (loaded little
// endian) is '"', '\\', a control character or a non-ASCII byte.
func plain8(x uint64) bool {
	const (
		ones  = 0x0101010101010101
		highs = 0x8080808080808080
	)
	q := x ^ (ones * '"')
	bs := x ^ (ones * '\\')
	// Each term sets a byte's high bit when that byte is below 0x20, is '"',
	// is '\\' (a zero after the xor), or is non-ASCII. Exact for "any byte".
	t := (x-ones*0x20)&^x | (q-ones)&^q | (bs-ones)&^bs | x
	return t&highs == 0
}

// quoteEnds reports whether the '"' at r.pos+i closes its string: it does
// when the next byte after white space is ',' ':' '}' ']' or the input ends.
// b is r.buf[r.pos:r.end].
func (r *Reader) quoteEnds(b []byte, i int) bool {
	// Fast path: the delimiter right after the quote or after one space.
	if i+2 < len(b) {
		c := b[i+1]
		if c == ' ' {
			c = b[i+2]
		}
		switch c {
		case ',', ':', '}', ']':
			return true
		}
	}
	j := i + 1
	for {
		for ; j < len(b); j++ {
			switch b[j] {
			case ',', ':', '}', ']':
				return true
			case ' ', '\t', '\r', '\n':
			default:
				return false
			}
		}
		if !r.more() {
			return true
		}
		b = r.buf[r.pos:r.end]
	}
}

// scalar scans the number or literal at r.pos (a scalarByte) without
// consuming it, and returns its bytes, valid until the next scanner call.
func (r *Reader) scalar() ([]byte, error) {
	i := 0
	for {
		b := r.buf[r.pos:r.end]
		for i < len(b) && scalarByte[b[i]] {
			i++
		}
		if i < len(b) {
			return b[:i], nil
		}
		if !r.more() {
			if r.err != nil {
				return nil, r.err
			}
			return r.buf[r.pos:r.end], nil
		}
	}
}

// Kinds of scalar tokens.
const (
	scalarBad = iota
	scalarNull
	scalarBool
	scalarInt
	scalarFloat
)

// classify tells what a scalar token is. Only JSON's literals and numbers
// pass; anything else (a bare word) is garbage.
func classify(b []byte) int {
	switch string(b) {
	case "null":
		return scalarNull
	case "true", "false":
		return scalarBool
	}
	if len(b) == 0 {
		return scalarBad
	}
	i := 0
	if b[0] == '-' {
		i = 1
	}
	if i == len(b) || b[i] < '0' || b[i] > '9' {
		return scalarBad
	}
	kind := scalarInt
	for ; i < len(b); i++ {
		switch c := b[i]; {
		case c >= '0' && c <= '9':
		case c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-':
			kind = scalarFloat
		default:
			return scalarBad
		}
	}
	return kind
}

// parseInt parses an optionally negative decimal integer of up to 18 digits.
func parseInt(b []byte) (int64, bool) {
	neg := false
	if len(b) > 0 && b[0] == '-' {
		neg, b = true, b[1:]
	}
	if len(b) == 0 || len(b) > 18 {
		return 0, false
	}
	var v int64
	for _, c := range b {
		d := c - '0'
		if d > 9 {
			return 0, false
		}
		v = v*10 + int64(d)
	}
	if neg {
		v = -v
	}
	return v, true
}

// parseNumber parses an integer or a decimal/exponent number (rounded to the
// nearest integer, clamped to the int64 range).
func parseNumber(b []byte) (int64, bool) {
	if v, ok := parseInt(b); ok {
		return v, true
	}
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil && f == 0 || f != f {
		return 0, false
	}
	switch {
	case f >= 9.223372036854775807e18:
		return 1<<63 - 1, true
	case f <= -9.223372036854775808e18:
		return -1 << 63, true
	case f < 0:
		return int64(f - 0.5), true
	default:
		return int64(f + 0.5), true
	}
}

// skipValue consumes one JSON value of any kind. Skipped values are checked
// only for what finding their end needs: strings, matching brackets, and
// scalars that are JSON literals or numbers.
func (r *Reader) skipValue() error {
	stack := r.stack[:0]
	defer func() { r.stack = stack[:0] }()
	afterComma := false
	for {
		c, ok := r.peek()
		if !ok {
			return r.truncated()
		}
		switch c {
		case '"':
			if _, err := r.readString(true); err != nil {
				return err
			}
		case '{', '[':
			if len(stack) >= maxDepth {
				return r.syntaxErr(0, "values nested more than "+strconv.Itoa(maxDepth)+" deep")
			}
			stack = append(stack, c)
			r.pos++
		case '}', ']':
			if len(stack) == 0 {
				return r.syntaxErr(0, "expected a value, found "+quoteByte(c))
			}
			if open := stack[len(stack)-1]; open == '{' && c != '}' || open == '[' && c != ']' {
				return r.syntaxErr(0, quoteByte(c)+" does not match the "+quoteByte(open)+" it closes")
			}
			if afterComma {
				r.warn(0, "trailing comma before "+quoteByte(c)+": ignored")
			}
			stack = stack[:len(stack)-1]
			r.pos++
		case ',', ':':
			if len(stack) == 0 {
				return r.syntaxErr(0, "expected a value, found "+quoteByte(c))
			}
			r.pos++
			afterComma = c == ','
			continue
		default:
			if !scalarByte[c] {
				return r.syntaxErr(0, "expected a value, found "+quoteByte(c))
			}
			tok, err := r.scalar()
			if err != nil {
				return err
			}
			if classify(tok) == scalarBad {
				return r.syntaxErr(0, "invalid value "+strconv.Quote(string(tok[:min(len(tok), 40)])))
			}
			r.pos += len(tok)
		}
		afterComma = false
		if len(stack) == 0 {
			return nil
		}
	}
}
