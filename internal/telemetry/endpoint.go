package telemetry

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path"
	"strconv"
	"strings"
	"time"
)

// endpoint is a parsed OTLP endpoint.
type endpoint struct {
	hostPort string
	scheme   string // "http", "https" or "" (none given)
	path     string // the URL path, "" when none was given
	notes    []string
}

// parseEndpoint accepts "http://host:port/path", "https://host:port/path",
// "host:port" and "host". A URL without a port uses its scheme's (80 for
// http://, 443 for https://), as every official exporter does and as hosted
// backends publish their endpoints; a bare "host" gets the protocol's
// collector port (4317 for grpc, 4318 over HTTP). Over gRPC a URL path is
// ignored with a note; credentials in the URL always are.
func parseEndpoint(raw, protocol string) (endpoint, error) {
	var ep endpoint
	host, port := "", ""
	if strings.Contains(raw, "://") {
		u, err := url.Parse(raw)
		if err != nil {
			return ep, errors.New("not a valid URL")
		}
		switch u.Scheme {
		case "http", "https":
			ep.scheme = u.Scheme
		default:
			return ep, fmt.Errorf("scheme %q is not supported: want http:// (plaintext) or https:// (TLS)", u.Scheme)
		}
		if u.User != nil {
			ep.notes = append(ep.notes, "credentials in the endpoint URL are ignored: put them in OTEL_EXPORTER_OTLP_HEADERS")
		}
		if u.Path != "" && u.Path != "/" {
			if !isHTTP(protocol) {
				ep.notes = append(ep.notes, fmt.Sprintf("URL path %q ignored: OTLP/gRPC has no path (is this an OTLP/HTTP endpoint? then set OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf)", u.Path))
			} else {
				ep.path = u.Path
			}
		}
		host, port = u.Hostname(), u.Port()
		if port == "" {
			port = schemePort(u.Scheme)
		}
	} else {
		if strings.ContainsAny(raw, "/?#@ ") {
			return ep, errors.New("want http://host:port, https://host:port or host:port")
		}
		h, p, err := net.SplitHostPort(raw)
		if err != nil {
			h, p = strings.Trim(raw, "[]"), ""
		}
		host, port = h, p
	}
	if host == "" {
		return ep, errors.New("no host")
	}
	if port == "" {
		port = defaultPort(protocol)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return ep, fmt.Errorf("port %q is not a number between 1 and 65535", port)
	}
	ep.hostPort = net.JoinHostPort(host, port)
	if _, _, err := net.SplitHostPort(ep.hostPort); err != nil || strings.ContainsAny(host, "[]") {
		return ep, fmt.Errorf("host %q is not a valid host name or address", host)
	}
	return ep, nil
}

// defaultPort is the collector's usual port for protocol.
func defaultPort(protocol string) string {
	if isHTTP(protocol) {
		return "4318"
	}
	return "4317"
}

// schemePort is the port a URL of scheme means when it names none.
func schemePort(scheme string) string {
	if scheme == "https" {
		return "443"
	}
	return "80"
}

// isHTTP reports whether protocol is one of the OTLP/HTTP encodings.
func isHTTP(protocol string) bool {
	return protocol == ProtocolHTTP || protocol == ProtocolHTTPJSON
}

// isLoopback reports whether hostPort names this machine.
func isLoopback(hostPort string) bool {
	host, _, err := net.SplitHostPort(hostPort)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// signalVar returns the name of a signal-specific variable, such as
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT.
func signalVar(signal, suffix string) string {
	return envPrefix + strings.ToUpper(signal) + "_" + suffix
}

// exporters resolves both signals' exporter settings and the mode.
func (e *env) exporters(cfg Config, r *Resolved) error {
	// The generic settings.
	r.Protocol = e.protocol(envPrefix+"PROTOCOL", DefaultProtocol)
	genericRaw, genericVar := cfg.Endpoint, "the endpoint flag"
	if genericRaw == "" {
		genericRaw, genericVar = e.lookup(envPrefix+"ENDPOINT"), envPrefix+"ENDPOINT"
	}
	// The generic endpoint, read as the generic protocol's, for the
	// generic fields of Resolved and to say whether one is configured.
	var generic *endpoint
	if genericRaw != "" {
		ep, err := parseEndpoint(genericRaw, r.Protocol)
		switch {
		case err != nil && cfg.Endpoint != "":
			return err // checked by checkConfig already
		case err != nil:
			e.warnf("%s=%s ignored: %v", genericVar, safeQuote(genericRaw), err)
			genericRaw = ""
		default:
			generic = &ep
		}
	}
	r.Timeout = DefaultExportTimeout
	if d, ok := e.millis(envPrefix + "TIMEOUT"); ok {
		r.Timeout = d
	}
	if cfg.ExportTimeout > 0 {
		r.Timeout = cfg.ExportTimeout
	}
	r.Compression = e.compression(envPrefix+"COMPRESSION", compressionNone)
	if h, ok := e.headers(envPrefix + "HEADERS"); ok {
		r.Headers = h
	}
	genericInsecure, genericInsecureSet := e.boolean(envPrefix + "INSECURE")
	r.Insecure = genericInsecure
	if generic != nil && generic.scheme != "" {
		r.Insecure = generic.scheme == "http"
	}
	r.CertificateFile = e.lookup(envPrefix + "CERTIFICATE")
	r.ClientCertFile = e.lookup(envPrefix + "CLIENT_CERTIFICATE")
	r.ClientKeyFile = e.lookup(envPrefix + "CLIENT_KEY")

	// Each signal's exporter kind, protocol and endpoint.
	signals := [2]string{"traces", "metrics"}
	var kinds, protocols, raws, protocolVars, endpointVars [2]string
	var specific [2]bool
	anyEndpoint := false
	for i, signal := range signals {
		kinds[i] = e.exporterKind(signal)
		protocols[i] = e.protocol(signalVar(signal, "PROTOCOL"), r.Protocol)
		protocolVars[i] = ""
		if e.lookup(signalVar(signal, "PROTOCOL")) != "" {
			protocolVars[i] = signalVar(signal, "PROTOCOL")
		} else if e.lookup(envPrefix+"PROTOCOL") != "" {
			protocolVars[i] = envPrefix + "PROTOCOL"
		}
		raws[i], endpointVars[i] = genericRaw, genericVar
		if cfg.Endpoint == "" {
			name := signalVar(signal, "ENDPOINT")
			if v := e.lookup(name); v != "" {
				if _, err := parseEndpoint(v, protocols[i]); err != nil {
					e.warnf("%s=%s ignored: %v", name, safeQuote(v), err)
				} else {
					raws[i], specific[i], endpointVars[i] = v, true, name
				}
			}
		}
		if kinds[i] == KindOTLP && raws[i] != "" {
			anyEndpoint = true
		}
	}

	hinted := map[string]bool{} // loopback endpoints already warned about
	for i, signal := range signals {
		x := Exporter{Kind: kinds[i]}
		switch {
		case x.Kind != KindOTLP:
		case !anyEndpoint:
			// The embedded default: no collector configured.
			x.Kind = KindFile
		default:
			x.Protocol, x.protocolVar, x.endpointVar = protocols[i], protocolVars[i], endpointVars[i]
			x.Timeout = r.Timeout
			x.Compression = r.Compression
			x.Headers = r.Headers
			x.CertificateFile, x.ClientCertFile, x.ClientKeyFile = r.CertificateFile, r.ClientCertFile, r.ClientKeyFile
			e.otlpExporter(signal, raws[i], specific[i], genericInsecure, genericInsecureSet, hinted, &x)
			if cfg.ExportTimeout > 0 {
				x.Timeout = cfg.ExportTimeout
			}
		}
		if i == 0 {
			r.Traces = x
		} else {
			r.Metrics = x
		}
	}
	r.TracesEndpoint, r.MetricsEndpoint = r.Traces.Endpoint, r.Metrics.Endpoint
	switch {
	case r.Traces.Kind == KindOTLP || r.Metrics.Kind == KindOTLP:
		r.Mode = ModeOTLP
	case r.Traces.Kind == KindFile || r.Metrics.Kind == KindFile:
		r.Mode = ModeFile
		e.warnUnusedTLSFiles(r)
	case r.Traces.Kind == KindConsole || r.Metrics.Kind == KindConsole:
		r.Mode = ModeConsole
	default:
		r.Mode = ModeNone
	}
	return nil
}

// otlpExporter fills in x, an OTLP exporter of signal whose endpoint is raw
// ("" when only the other signal has one), specific when it came from the
// signal's own variable.
func (e *env) otlpExporter(signal, raw string, specific, genericInsecure, genericInsecureSet bool, hinted map[string]bool, x *Exporter) {
	if raw == "" {
		raw = "http://localhost:" + defaultPort(x.Protocol)
		e.warnf("%s is not set and neither is OTEL_EXPORTER_OTLP_ENDPOINT: %s go to the OTLP default %s",
			signalVar(signal, "ENDPOINT"), signal, raw)
	}
	ep, _ := parseEndpoint(raw, x.Protocol) // checked by exporters
	for _, n := range ep.notes {
		e.warnf("%s endpoint: %s", signal, n)
	}
	x.Endpoint = ep.hostPort
	if isHTTP(x.Protocol) {
		// The specification: a signal's own endpoint is used as it is; the
		// generic one gets the signal's path appended.
		switch {
		case specific && ep.path == "":
			x.URLPath = "/"
			e.warnf("%s has no URL path, so %s are posted to / as the OTLP specification says; a collector listens on /v1/%s",
				signalVar(signal, "ENDPOINT"), signal, signal)
		case specific:
			x.URLPath = ep.path
		default:
			x.URLPath = path.Join("/", ep.path, "v1", signal)
		}
	}
	insecure, insecureSet := genericInsecure, genericInsecureSet
	if b, ok := e.boolean(signalVar(signal, "INSECURE")); ok {
		insecure, insecureSet = b, true
	}
	switch ep.scheme {
	case "http":
		x.Insecure = true
	case "https":
		x.Insecure = false
	default:
		x.Insecure = insecure
		if !insecure && !insecureSet && isLoopback(ep.hostPort) && !hinted[ep.hostPort] {
			hinted[ep.hostPort] = true
			e.warnf("endpoint %s has no scheme, so it uses TLS; a local collector usually listens in plaintext: write http://%s or set OTEL_EXPORTER_OTLP_INSECURE=true",
				ep.hostPort, ep.hostPort)
		}
	}
	if d, ok := e.millis(signalVar(signal, "TIMEOUT")); ok {
		x.Timeout = d
	}
	x.Compression = e.compression(signalVar(signal, "COMPRESSION"), x.Compression)
	if h, ok := e.headers(signalVar(signal, "HEADERS")); ok {
		x.Headers = h
	}
	if v := e.lookup(signalVar(signal, "CERTIFICATE")); v != "" {
		x.CertificateFile = v
	}
	if v := e.lookup(signalVar(signal, "CLIENT_CERTIFICATE")); v != "" {
		x.ClientCertFile = v
	}
	if v := e.lookup(signalVar(signal, "CLIENT_KEY")); v != "" {
		x.ClientKeyFile = v
	}
	e.tlsConfig(signal, x)
}

// exporterKind reads OTEL_TRACES_EXPORTER or OTEL_METRICS_EXPORTER: otlp
// (the default), console or none. One exporter per signal is built in.
func (e *env) exporterKind(signal string) string {
	name := "OTEL_" + strings.ToUpper(signal) + "_EXPORTER"
	v := strings.ToLower(e.lookup(name))
	if v == "" {
		return KindOTLP
	}
	first, rest, many := strings.Cut(v, ",")
	first = strings.TrimSpace(first)
	switch first {
	case KindOTLP, KindConsole, KindNone:
	default:
		e.warnf("%s=%s ignored: want otlp, console or none", name, safeQuote(v))
		return KindOTLP
	}
	if many && strings.TrimSpace(rest) != "" {
		e.warnf("%s=%s: one exporter per signal is built in, so only %s is used", name, safeQuote(v), first)
	}
	return first
}

func (e *env) compression(name, def string) string {
	switch v := strings.ToLower(e.lookup(name)); v {
	case "":
		return def
	case compressionGzip, compressionNone:
		return v
	default:
		e.warnf("%s=%s ignored: want gzip or none", name, safeQuote(v))
		return def
	}
}

// protocol reads a protocol variable: grpc, http/protobuf or http/json
// (both signals are sent as JSON, see jsonTransport).
func (e *env) protocol(name, def string) string {
	switch v := strings.ToLower(e.lookup(name)); v {
	case "":
		return def
	case ProtocolGRPC, ProtocolHTTP, ProtocolHTTPJSON:
		return v
	default:
		e.warnf("%s=%s ignored: want grpc, http/protobuf or http/json", name, safeQuote(v))
		return def
	}
}

// warnUnusedTLSFiles notes certificate settings that have no effect in
// file mode.
func (e *env) warnUnusedTLSFiles(r *Resolved) {
	if r.CertificateFile != "" || r.ClientCertFile != "" || r.ClientKeyFile != "" {
		e.warnf("OTEL_EXPORTER_OTLP_CERTIFICATE/CLIENT_* are set but no endpoint is: they are not used")
	}
}

// tlsConfig checks the certificate files of a TLS exporter and builds its
// tls.Config; unusable files are dropped with a warning. A plaintext
// exporter drops them too.
func (e *env) tlsConfig(signal string, x *Exporter) {
	if x.Insecure {
		if x.CertificateFile != "" || x.ClientCertFile != "" || x.ClientKeyFile != "" {
			e.warnf("%s endpoint %s is plaintext: the certificate files are not used", signal, x.Endpoint)
		}
		x.CertificateFile, x.ClientCertFile, x.ClientKeyFile = "", "", ""
		return
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if x.CertificateFile != "" {
		pool, err := loadCAs(x.CertificateFile)
		if err != nil {
			e.warnf("%s CA certificate ignored, the system's are used: %v", signal, err)
			x.CertificateFile = ""
		} else {
			cfg.RootCAs = pool
		}
	}
	switch {
	case x.ClientCertFile == "" && x.ClientKeyFile == "":
	case x.ClientCertFile == "" || x.ClientKeyFile == "":
		e.warnf("%s client certificate ignored: OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE and OTEL_EXPORTER_OTLP_CLIENT_KEY must both be set", signal)
		x.ClientCertFile, x.ClientKeyFile = "", ""
	default:
		pair, err := tls.LoadX509KeyPair(x.ClientCertFile, x.ClientKeyFile)
		if err != nil {
			e.warnf("%s client certificate ignored: load %q and %q: %v", signal, x.ClientCertFile, x.ClientKeyFile, err)
			x.ClientCertFile, x.ClientKeyFile = "", ""
		} else {
			cfg.Certificates = []tls.Certificate{pair}
		}
	}
	x.tls = cfg
}

func loadCAs(path string) (*x509.CertPool, error) {
	pem, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read %q: %w", path, err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("%q holds no PEM certificate", path)
	}
	return pool, nil
}

// durationText prints a duration without trailing zero units (10s, 1m30s).
func durationText(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
