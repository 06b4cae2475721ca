package profile

import (
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

func TestInternerShares(t *testing.T) {
	var in interner
	a := in.get([]byte("CPUExecutionProvider"))
	b := in.get([]byte("CPUExecutionProvider"))
	if a != "CPUExecutionProvider" || unsafe.StringData(a) != unsafe.StringData(b) {
		t.Errorf("repeated string not shared")
	}
	// Through the map too, once the recent cache slot holds another string.
	in.recent = [256]string{}
	c := in.get([]byte("CPUExecutionProvider"))
	if unsafe.StringData(c) != unsafe.StringData(a) {
		t.Errorf("map lookup returned a new string")
	}
	if got := in.get(nil); got != "" {
		t.Errorf("get(nil) = %q", got)
	}
	buf := []byte("Conv")
	s := in.get(buf)
	buf[0] = 'X'
	if s != "Conv" {
		t.Errorf("interned string changed with its source bytes: %q", s)
	}
}

func TestInternerBounded(t *testing.T) {
	t.Run("entries", func(t *testing.T) {
		var in interner
		for i := range internMaxEntries + 100 {
			in.get([]byte("node_" + strconv.Itoa(i)))
		}
		if len(in.m) != internMaxEntries {
			t.Errorf("%d entries, want the cap %d", len(in.m), internMaxEntries)
		}
		if got := in.get([]byte("node_" + strconv.Itoa(internMaxEntries+50))); got != "node_"+strconv.Itoa(internMaxEntries+50) {
			t.Errorf("string past the cap = %q", got)
		}
	})
	t.Run("bytes", func(t *testing.T) {
		var in interner
		long := strings.Repeat("x", internMaxLen-10)
		for i := range 2 * internMaxBytes / internMaxLen {
			in.get([]byte(long + strconv.Itoa(i)))
		}
		if in.bytes > internMaxBytes {
			t.Errorf("%d bytes interned, over the cap %d", in.bytes, internMaxBytes)
		}
	})
	t.Run("length", func(t *testing.T) {
		var in interner
		in.get([]byte(strings.Repeat("y", internMaxLen+1)))
		if len(in.m) != 0 {
			t.Errorf("a string over %d bytes was interned", internMaxLen)
		}
	})
}
