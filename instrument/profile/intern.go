package profile

// Limits of the intern table, so that its memory stays bounded whatever the
// input: a profile repeats a few hundred distinct strings (categories, node
// names, op names, providers) millions of times.
const (
	internMaxEntries = 1 << 16
	internMaxBytes   = 4 << 20 // total bytes of the interned strings
	internMaxLen     = 1 << 10 // longer strings are never interned
)

// interner returns one shared string per distinct byte sequence, so that
// steady-state reading allocates nothing for repeated strings.
type interner struct {
	m     map[string]string
	bytes int
	// recent is a small direct-mapped cache in front of m: comparing with
	// one candidate is cheaper than hashing, and most strings of a profile
	// ("Node", "X", "float", the provider) repeat event after event.
	recent [256]string
}

// get returns the string of b: the interned copy when there is one, else a
// new string that is interned while the table has room.
func (in *interner) get(b []byte) string {
	n := len(b)
	if n == 0 {
		return ""
	}
	slot := (uint(n)*131 + uint(b[0])*31 + uint(b[n/2])*7 + uint(b[n-1])) & 255
	if s := in.recent[slot]; s == string(b) { // no allocation
		return s
	}
	if s, ok := in.m[string(b)]; ok { // no allocation: the compiler knows this idiom
		in.recent[slot] = s
		return s
	}
	s := string(b)
	if n > internMaxLen || len(in.m) >= internMaxEntries || in.bytes+n > internMaxBytes {
		return s
	}
	in.recent[slot] = s
	if in.m == nil {
		in.m = make(map[string]string, 256)
	}
	in.m[s] = s
	in.bytes += len(s)
	return s
}
