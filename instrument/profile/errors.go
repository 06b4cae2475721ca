package profile

import (
	"errors"
	"strconv"
)

// ErrEmpty is returned by Next when the input holds no JSON at all: zero
// bytes or only white space.
var ErrEmpty = errors.New("profile is empty: the file holds no JSON at all " +
	"(ONNX Runtime writes the profile only when the session is destroyed; " +
	"an empty file usually means the process ended before that)")

// SyntaxError reports input that cannot be read as an ONNX Runtime profile
// without guessing. The events Next returned before it were read whole.
type SyntaxError struct {
	Offset int64  // byte offset in the input where the problem was found
	Msg    string // what is wrong, in plain words
}

func (e *SyntaxError) Error() string {
	return "profile JSON at byte " + strconv.FormatInt(e.Offset, 10) + ": " + e.Msg
}

// Warning records one repair the Reader made to read invalid JSON that ONNX
// Runtime is known to write (a trailing comma, an unescaped character in a
// name, invalid UTF-8, ...).
type Warning struct {
	Offset int64  // byte offset in the input
	Msg    string // what was repaired and how
}

func (w Warning) String() string {
	return "byte " + strconv.FormatInt(w.Offset, 10) + ": " + w.Msg
}

// MaxWarnings is how many warnings a Reader keeps; WarningCount counts all.
const MaxWarnings = 100

// Messages of the truncation errors. ORT writes the whole file only when the
// session is destroyed, so a cut file is the usual cause.
const (
	truncatedHint    = " (ONNX Runtime writes the file only when the session is destroyed)"
	msgTruncEvent    = "unexpected end of file inside an event: the profile looks truncated" + truncatedHint
	msgTruncArray    = "unexpected end of file: the event array is not closed with ']': the profile looks truncated" + truncatedHint
	msgTruncTopLevel = "unexpected end of file inside the top-level object: the profile looks truncated" + truncatedHint
)

// readError is a failure of the underlying io.Reader.
type readError struct {
	off int64
	err error
}

func (e *readError) Error() string {
	return "read profile at byte " + strconv.FormatInt(e.off, 10) + ": " + e.err.Error()
}

func (e *readError) Unwrap() error { return e.err }

var errBadRead = errors.New("the source reader returned an impossible byte count")
