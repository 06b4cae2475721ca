package liveview

import (
	"net"
	"testing"
)

// FuzzResolveAddr: any --ui value either fails with an error or resolves to
// an address that parses, and a non-loopback result always came with
// allowRemote and a token CheckToken accepts.
func FuzzResolveAddr(f *testing.F) {
	for _, s := range []string{"8080", ":0", "127.0.0.1:1", "0.0.0.0:9", "[::]:9", "localhost:80", "a:b", "", "[::1]:99999"} {
		f.Add(s, false, "")
		f.Add(s, true, "0123456789abcdef")
		f.Add(s, true, "9f3c1a7e5b2d8046c1e7")
	}
	f.Fuzz(func(t *testing.T, addr string, remote bool, token string) {
		got, err := ResolveAddr(addr, remote, token)
		if err != nil {
			return
		}
		host, _, err := net.SplitHostPort(got)
		if err != nil {
			t.Fatalf("ResolveAddr(%q) = %q, which does not parse: %v", addr, got, err)
		}
		if !isLoopback(host) && (!remote || CheckToken(token) != nil) {
			t.Fatalf("ResolveAddr(%q, %v, %d-char token) = %q: not loopback without the remote flag and a token", addr, remote, len(token), got)
		}
	})
}
