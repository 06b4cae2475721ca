package telemetry

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"
)

// endpoint is a parsed OTLP/gRPC endpoint.
type endpoint struct {
	hostPort string
	scheme   string // "http", "https" or "" (none given)
	notes    []string
}

// parseEndpoint accepts "http://host:port", "https://host:port",
// "host:port" and "host" (port 4317). A URL path is ignored with a note,
// as are credentials in the URL.
func parseEndpoint(raw string) (endpoint, error) {
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
			ep.notes = append(ep.notes, fmt.Sprintf("URL path %q ignored: OTLP/gRPC has no path (is this an OTLP/HTTP endpoint?)", u.Path))
		}
		host, port = u.Hostname(), u.Port()
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
		port = "4317"
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return ep, fmt.Errorf("port %q is not a number between 1 and 65535", port)
	}
	ep.hostPort = net.JoinHostPort(host, port)
	return ep, nil
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
	var generic *endpoint
	if cfg.Endpoint != "" {
		ep, err := parseEndpoint(cfg.Endpoint)
		if err != nil {
			return err // checked by checkConfig already
		}
		generic = &ep
	} else {
		generic = e.endpoint(envPrefix + "ENDPOINT")
	}
	r.Timeout = DefaultExportTimeout
	if d, ok := e.millis(envPrefix + "TIMEOUT"); ok {
		r.Timeout = d
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
	e.protocol(envPrefix + "PROTOCOL")

	var eps [2]*endpoint
	for i, signal := range []string{"traces", "metrics"} {
		ep := generic
		if cfg.Endpoint == "" {
			if sep := e.endpoint(signalVar(signal, "ENDPOINT")); sep != nil {
				ep = sep
			}
		}
		eps[i] = ep
	}
	if eps[0] == nil && eps[1] == nil {
		r.Mode = ModeFile
		e.warnUnusedTLSFiles(r)
		return nil
	}
	r.Mode = ModeOTLP
	hinted := map[string]bool{} // loopback endpoints already warned about
	for i, signal := range []string{"traces", "metrics"} {
		x := Exporter{
			Timeout:         r.Timeout,
			Compression:     r.Compression,
			Headers:         r.Headers,
			CertificateFile: r.CertificateFile,
			ClientCertFile:  r.ClientCertFile,
			ClientKeyFile:   r.ClientKeyFile,
		}
		ep := eps[i]
		if ep == nil {
			def, _ := parseEndpoint(defaultOTLPEndpoint)
			ep = &def
			other := "OTEL_EXPORTER_OTLP_ENDPOINT"
			e.warnf("%s is not set and neither is %s: %s go to the OTLP default %s",
				signalVar(signal, "ENDPOINT"), other, signal, defaultOTLPEndpoint)
		}
		for _, n := range ep.notes {
			e.warnf("%s endpoint: %s", signal, n)
		}
		x.Endpoint = ep.hostPort
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
		e.protocol(signalVar(signal, "PROTOCOL"))
		e.tlsConfig(signal, &x)
		if i == 0 {
			r.Traces = x
		} else {
			r.Metrics = x
		}
	}
	r.TracesEndpoint, r.MetricsEndpoint = r.Traces.Endpoint, r.Metrics.Endpoint
	return nil
}

// endpoint reads and parses one endpoint variable; nil when unset or bad.
func (e *env) endpoint(name string) *endpoint {
	v := e.lookup(name)
	if v == "" {
		return nil
	}
	ep, err := parseEndpoint(v)
	if err != nil {
		e.warnf("%s=%s ignored: %v", name, safeQuote(v), err)
		return nil
	}
	return &ep
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

// protocol checks a protocol variable: only grpc is built in.
func (e *env) protocol(name string) {
	switch v := e.lookup(name); v {
	case "", "grpc":
	case "http/protobuf", "http/json":
		e.warnf("%s=%s: only OTLP over gRPC is built in, so gRPC is used (point the endpoint at the collector's gRPC port, usually 4317)", name, v)
	default:
		e.warnf("%s=%s ignored: want grpc (http/protobuf and http/json are not built in)", name, safeQuote(v))
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
