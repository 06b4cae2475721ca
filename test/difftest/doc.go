// Package difftest holds the differential test of ortel's OTLP exporter
// configuration against the official OpenTelemetry Go exporters: for each
// row of a table of OTEL_* environments, both are configured from the
// environment alone, each sends one span and one metric, and what reaches
// the wire (host, port, path, protocol, TLS, headers, compression) must be
// the same, except in the rows where ortel differs on purpose (listed in
// the README's "OTLP exporter configuration" section, with the reason).
//
// How the wire is observed: the test sets HTTP_PROXY and HTTPS_PROXY, which
// both sides honour as the official exporters do (net/http's and gRPC's
// proxy support), to an in-process proxy. A proxy is told the host and
// port a client would dial (CONNECT host:port, or an absolute URL for
// plain HTTP), so a URL without a port shows the port the exporter chose
// (80, 443, ...) without binding privileged ports or resolving names. The
// proxy terminates the tunnels itself: TLS with a certificate for every
// host of the table (trusted through OTEL_EXPORTER_OTLP_CERTIFICATE), then
// OTLP/gRPC or OTLP/HTTP, recording each request. Hosts are documentation
// names and addresses (collector.test, 192.0.2.10, 2001:db8::1): loopback
// addresses are never proxied.
//
// The package has no code besides its tests.
package difftest
