package telemetry

import (
	"net"
	"net/url"
	"strings"
	"testing"
)

func TestParseEndpoint(t *testing.T) {
	tests := []struct {
		in, hostPort, scheme string
		notes                int
		wantErr              string
	}{
		{in: "http://collector:4317", hostPort: "collector:4317", scheme: "http"},
		{in: "https://collector", hostPort: "collector:443", scheme: "https"},
		{in: "http://collector", hostPort: "collector:80", scheme: "http"},
		{in: "http://collector/", hostPort: "collector:80", scheme: "http"},
		{in: "https://collector:443/", hostPort: "collector:443", scheme: "https"},
		{in: "collector:4317", hostPort: "collector:4317"},
		{in: "collector", hostPort: "collector:4317"},
		{in: "[::1]:4317", hostPort: "[::1]:4317"},
		{in: "::1", hostPort: "[::1]:4317"},
		{in: "http://[::1]", hostPort: "[::1]:80", scheme: "http"},
		{in: "https://[2001:db8::1]", hostPort: "[2001:db8::1]:443", scheme: "https"},
		{in: "http://c:4318/v1/traces", hostPort: "c:4318", scheme: "http", notes: 1},
		{in: "https://u:p@c:4317/x", hostPort: "c:4317", scheme: "https", notes: 2},
		{in: "unix:///tmp/otel.sock", wantErr: `scheme "unix" is not supported`},
		{in: "grpc://c:4317", wantErr: `scheme "grpc" is not supported`},
		{in: "http://:4317", wantErr: "no host"},
		{in: ":4317", wantErr: "no host"},
		{in: "c:0", wantErr: `port "0"`},
		{in: "c:http", wantErr: `port "http"`},
		{in: "http://c:70000", wantErr: `port "70000"`},
		{in: "http://c d:1", wantErr: "not a valid URL"},
		{in: "c:4317/path", wantErr: "want http://host:port"},
		{in: "user@c:4317", wantErr: "want http://host:port"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			ep, err := parseEndpoint(tt.in, ProtocolGRPC)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if ep.hostPort != tt.hostPort || ep.scheme != tt.scheme || len(ep.notes) != tt.notes {
				t.Errorf("got %+v, want %s %q with %d notes", ep, tt.hostPort, tt.scheme, tt.notes)
			}
			for _, n := range ep.notes {
				if strings.Contains(n, ":p@") {
					t.Errorf("note shows credentials: %q", n)
				}
			}
		})
	}
}

func TestIsLoopback(t *testing.T) {
	for in, want := range map[string]bool{
		"localhost:4317": true, "127.0.0.1:4317": true, "127.1.2.3:1": true, "[::1]:4317": true,
		"collector:4317": false, "10.0.0.1:4317": false, "garbage": false,
	} {
		if got := isLoopback(in); got != want {
			t.Errorf("isLoopback(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestDurationText(t *testing.T) {
	for d, want := range map[string]string{"10s": "10s", "1m0s": "1m", "1h0m0s": "1h", "1m30s": "1m30s", "500ms": "500ms"} {
		dur, err := parseDurationForTest(d)
		if err != nil {
			t.Fatal(err)
		}
		if got := durationText(dur); got != want {
			t.Errorf("durationText(%s) = %q, want %q", d, got, want)
		}
	}
}

// FuzzParseEndpoint: any endpoint text parses or fails with an error,
// never panics; what parses is a valid host:port.
func FuzzParseEndpoint(f *testing.F) {
	for _, s := range []string{"http://c:4317", "https://otel.example.com/otlp/", "c", "[::1]:4318", "http://u:p@c/v1/traces", "ftp://x", "c:99999", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		for _, p := range []string{ProtocolGRPC, ProtocolHTTP, ProtocolHTTPJSON} {
			ep, err := parseEndpoint(raw, p)
			if err != nil {
				continue
			}
			_, port, err := net.SplitHostPort(ep.hostPort)
			if err != nil {
				t.Fatalf("parseEndpoint(%q, %s) = %q, not host:port: %v", raw, p, ep.hostPort, err)
			}
			// A URL without a port takes its scheme's, whatever the protocol.
			if u, err := url.Parse(raw); err == nil && strings.Contains(raw, "://") && u.Port() == "" && port != schemePort(ep.scheme) {
				t.Fatalf("parseEndpoint(%q, %s) port %s, want the %s scheme's %s", raw, p, port, ep.scheme, schemePort(ep.scheme))
			}
			if p == ProtocolGRPC && ep.path != "" {
				t.Fatalf("gRPC endpoint %q kept path %q", raw, ep.path)
			}
		}
	})
}
