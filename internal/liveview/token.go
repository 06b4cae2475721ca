package liveview

import (
	"fmt"
	"math"
	"unicode"
)

// MinTokenBits is the least randomness CheckToken accepts in a token, in
// bits, estimated from its characters (see CheckToken).
const MinTokenBits = 48

// CheckToken refuses a live view token that is easy to guess or to get
// wrong: shorter than MinTokenLength; holding spaces or control characters
// (a token travels in an HTTP header and a URL); made of fewer than 6
// different characters ("aaaaaaaaaaaaaaaa"); a run of repeated or
// consecutive characters for most of its length ("abcdefghijklmnop",
// "1212121212121212"); or with less than MinTokenBits of randomness by the
// frequency of its characters. A random token passes: openssl rand -hex 16.
func CheckToken(token string) error {
	const hint = "; use a random one, such as the output of: openssl rand -hex 16"
	rs := []rune(token)
	if len(rs) < MinTokenLength {
		return fmt.Errorf("the token is too short: %d characters or more%s", MinTokenLength, hint)
	}
	counts := map[rune]int{}
	near := 0 // neighbours that are equal or next to each other
	for i, r := range rs {
		if unicode.IsSpace(r) || unicode.IsControl(r) {
			return fmt.Errorf("the token holds spaces or control characters, which do not survive an HTTP header or a URL%s", hint)
		}
		counts[r]++
		if i > 0 && abs(r-rs[i-1]) <= 1 {
			near++
		}
	}
	if len(counts) < 6 {
		return fmt.Errorf("the token is too easy to guess: it uses %d different characters, want 6 or more%s", len(counts), hint)
	}
	if 2*near > len(rs)-1 {
		return fmt.Errorf("the token is too easy to guess: it is mostly a run of repeated or consecutive characters%s", hint)
	}
	bits := 0.0
	for _, n := range counts {
		p := float64(n) / float64(len(rs))
		bits -= float64(n) * math.Log2(p)
	}
	if bits < MinTokenBits {
		return fmt.Errorf("the token is too easy to guess: about %.0f bits of randomness by its characters, want %d or more (a longer or more varied token)%s", bits, MinTokenBits, hint)
	}
	return nil
}

func abs(r rune) rune {
	if r < 0 {
		return -r
	}
	return r
}
