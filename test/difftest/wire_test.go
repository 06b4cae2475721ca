package difftest

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	colmetricspb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/stats"
	"google.golang.org/protobuf/proto"

	"github.com/ortel-dev/ortel/internal/telemetry/otlpjson"
)

// hosts are the names and addresses the table uses: never loopback (a
// proxy is not asked for those), all in the test certificate.
var (
	hostName = "collector.test"
	hostIPv4 = "192.0.2.10"
	hostIPv6 = "2001:db8::1"
)

// wire is what one export request looked like on the wire.
type wire struct {
	Signal      string // traces or metrics
	Host, Port  string // what the exporter dialled
	TLS         bool
	ClientCert  bool   // a client certificate was presented
	Protocol    string // grpc, http/protobuf or http/json
	Path        string // the URL path over HTTP, the method over gRPC
	Compression string // gzip or none
	Headers     string // the table's header keys present, key=value, sorted
	Items       int    // spans or data points decoded from the body
}

func (w wire) String() string {
	tls := "plaintext"
	if w.TLS {
		tls = "TLS"
		if w.ClientCert {
			tls += "+client-cert"
		}
	}
	return fmt.Sprintf("%s %s %s %s %s compression=%s headers=[%s]",
		w.Signal, w.Protocol, net.JoinHostPort(w.Host, w.Port), w.Path, tls, w.Compression, w.Headers)
}

// headerKeys are the header names the table sets; only they are compared
// (each side also sends its own User-Agent and the like).
var headerKeys = []string{"authorization", "x-tenant", "x-signal", "api-key"}

func headerString(get func(string) string) string {
	var parts []string
	for _, k := range headerKeys {
		if v := get(k); v != "" {
			parts = append(parts, k+"="+v)
		}
	}
	return strings.Join(parts, ",")
}

// recorder is the in-process proxy and OTLP receiver.
type recorder struct {
	lis      net.Listener
	srv      *http.Server // the proxy, and OTLP/HTTP inside tunnels
	grpcSrv  *grpc.Server
	grpcConn *connListener // tunnels that carry gRPC
	httpConn *connListener // tunnels that carry OTLP/HTTP
	tlsCfg   *tls.Config

	mu    sync.Mutex
	wires []wire
}

// tunnel is what the proxy knows about a tunnelled connection.
type tunnel struct {
	host, port string
	tls        bool
	clientCert bool
}

// tunnelConn carries its tunnel to the servers behind the proxy.
type tunnelConn struct {
	net.Conn
	r  io.Reader
	tn tunnel
}

func (c *tunnelConn) Read(p []byte) (int, error) { return c.r.Read(p) }

// RemoteAddr gives gRPC's stats handler the tunnel.
func (c *tunnelConn) RemoteAddr() net.Addr { return tunnelAddr{c.tn} }

type tunnelAddr struct{ tn tunnel }

func (tunnelAddr) Network() string  { return "tunnel" }
func (a tunnelAddr) String() string { return net.JoinHostPort(a.tn.host, a.tn.port) }

type tunnelKey struct{}

// connListener hands accepted tunnels to a server.
type connListener struct {
	ch     chan net.Conn
	closed chan struct{}
	once   sync.Once
}

func newConnListener() *connListener {
	return &connListener{ch: make(chan net.Conn), closed: make(chan struct{})}
}

func (l *connListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.ch:
		return c, nil
	case <-l.closed:
		return nil, net.ErrClosed
	}
}

func (l *connListener) Close() error {
	l.once.Do(func() { close(l.closed) })
	return nil
}

func (l *connListener) Addr() net.Addr { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)} }

func (l *connListener) hand(c net.Conn) {
	select {
	case l.ch <- c:
	case <-l.closed:
		_ = c.Close()
	}
}

// startRecorder listens on loopback; cert is the server's key pair.
func startRecorder(cert tls.Certificate, clientCAs *x509.CertPool) (*recorder, error) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	r := &recorder{lis: lis, grpcConn: newConnListener(), httpConn: newConnListener()}
	base := &tls.Config{
		Certificates: []tls.Certificate{cert},
		ClientAuth:   tls.VerifyClientCertIfGiven,
		ClientCAs:    clientCAs,
		MinVersion:   tls.VersionTLS12,
	}
	// gRPC offers h2 alone; net/http offers h2 and http/1.1: the HTTP
	// exporters get HTTP/1.1, so one http.Server serves every HTTP tunnel
	// and the negotiated protocol tells the two apart.
	r.tlsCfg = &tls.Config{MinVersion: tls.VersionTLS12, GetConfigForClient: func(hi *tls.ClientHelloInfo) (*tls.Config, error) {
		c := base.Clone()
		if slices.Contains(hi.SupportedProtos, "http/1.1") {
			c.NextProtos = []string{"http/1.1"}
		} else {
			c.NextProtos = []string{"h2"}
		}
		return c, nil
	}}
	r.grpcSrv = grpc.NewServer(grpc.StatsHandler(&grpcStats{r: r}))
	coltracepb.RegisterTraceServiceServer(r.grpcSrv, traceService{r: r})
	colmetricspb.RegisterMetricsServiceServer(r.grpcSrv, metricsService{r: r})
	r.srv = &http.Server{
		Handler:           http.HandlerFunc(r.serveHTTP),
		ReadHeaderTimeout: 10 * time.Second,
		ConnContext: func(ctx context.Context, c net.Conn) context.Context {
			if tc, ok := c.(*tunnelConn); ok {
				return context.WithValue(ctx, tunnelKey{}, tc.tn)
			}
			return ctx
		},
	}
	go func() { _ = r.grpcSrv.Serve(r.grpcConn) }()
	go func() { _ = r.srv.Serve(r.httpConn) }()
	go func() {
		_ = (&http.Server{Handler: http.HandlerFunc(r.serveProxy), ReadHeaderTimeout: 10 * time.Second}).Serve(lis)
	}()
	return r, nil
}

func (r *recorder) proxyURL() string { return "http://" + r.lis.Addr().String() }

func (r *recorder) close() {
	_ = r.lis.Close()
	_ = r.srv.Close()
	r.grpcSrv.Stop()
	_ = r.grpcConn.Close()
	_ = r.httpConn.Close()
}

func (r *recorder) add(w wire) {
	r.mu.Lock()
	r.wires = append(r.wires, w)
	r.mu.Unlock()
}

// take returns and forgets what was recorded.
func (r *recorder) take() []wire {
	r.mu.Lock()
	defer r.mu.Unlock()
	w := r.wires
	r.wires = nil
	return w
}

// serveProxy is the proxy: CONNECT tunnels, and plain HTTP requests in
// absolute form, which it answers itself as the OTLP/HTTP receiver.
func (r *recorder) serveProxy(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodConnect {
		host, port := req.URL.Hostname(), req.URL.Port()
		if port == "" {
			port = "80" // what net/http dials for http:// without a port
		}
		r.serveOTLP(w, req, tunnel{host: host, port: port})
		return
	}
	host, port, err := net.SplitHostPort(req.Host)
	if err != nil {
		http.Error(w, "CONNECT wants host:port", http.StatusBadRequest)
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		http.Error(w, "no hijack", http.StatusInternalServerError)
		return
	}
	conn, buf, err := hj.Hijack()
	if err != nil {
		return
	}
	if _, err := conn.Write([]byte("HTTP/1.1 200 Connection established\r\n\r\n")); err != nil {
		_ = conn.Close()
		return
	}
	go r.serveTunnel(conn, buf.Reader, tunnel{host: host, port: port})
}

// serveTunnel terminates TLS if the client starts it, then hands the
// connection to the gRPC or the HTTP server by its first bytes.
func (r *recorder) serveTunnel(conn net.Conn, br *bufio.Reader, tn tunnel) {
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	first, err := br.Peek(1)
	if err != nil {
		_ = conn.Close()
		return
	}
	if first[0] == 0x16 { // a TLS handshake record
		tn.tls = true
		tc := tls.Server(&tunnelConn{Conn: conn, r: br, tn: tn}, r.tlsCfg)
		if err := tc.Handshake(); err != nil {
			_ = conn.Close()
			return
		}
		tn.clientCert = len(tc.ConnectionState().PeerCertificates) > 0
		wrapped := &tunnelConn{Conn: tc, r: tc, tn: tn}
		if tc.ConnectionState().NegotiatedProtocol == "h2" {
			r.grpcConn.hand(wrapped)
		} else {
			r.httpConn.hand(wrapped)
		}
		return
	}
	c := &tunnelConn{Conn: conn, r: br, tn: tn}
	if p, err := br.Peek(4); err == nil && string(p) == "PRI " {
		r.grpcConn.hand(c)
		return
	}
	r.httpConn.hand(c)
}

func (r *recorder) serveHTTP(w http.ResponseWriter, req *http.Request) {
	tn, _ := req.Context().Value(tunnelKey{}).(tunnel)
	r.serveOTLP(w, req, tn)
}

// serveOTLP records one OTLP/HTTP request and answers it.
func (r *recorder) serveOTLP(w http.ResponseWriter, req *http.Request, tn tunnel) {
	got := wire{Host: tn.host, Port: tn.port, TLS: tn.tls, ClientCert: tn.clientCert, Path: req.URL.Path, Compression: "none",
		Headers: headerString(req.Header.Get)}
	body, err := io.ReadAll(io.LimitReader(req.Body, 16<<20))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if req.Header.Get("Content-Encoding") == "gzip" {
		got.Compression = "gzip"
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err == nil {
			body, err = io.ReadAll(zr)
		}
		if err != nil {
			http.Error(w, "bad gzip: "+err.Error(), http.StatusBadRequest)
			return
		}
	}
	ct := req.Header.Get("Content-Type")
	decode := proto.Unmarshal
	switch ct {
	case "application/x-protobuf":
		got.Protocol = "http/protobuf"
	case "application/json":
		got.Protocol = "http/json"
		decode = otlpjson.Unmarshal // hex ids, as the OTLP/JSON encoding has them
	default:
		http.Error(w, "unsupported content type "+ct, http.StatusUnsupportedMediaType)
		return
	}
	// The body says which signal it is, whatever the path. A metrics body
	// also decodes as traces (the fields line up), but not with span ids.
	var tr coltracepb.ExportTraceServiceRequest
	var mr colmetricspb.ExportMetricsServiceRequest
	switch {
	case decode(body, &tr) == nil && isTraces(&tr):
		got.Signal, got.Items = "traces", countSpans(&tr)
	case decode(body, &mr) == nil:
		got.Signal, got.Items = "metrics", countPoints(&mr)
	default:
		http.Error(w, "body is neither traces nor metrics", http.StatusBadRequest)
		return
	}
	r.add(got)
	w.Header().Set("Content-Type", ct)
	w.WriteHeader(http.StatusOK)
}

// isTraces reports whether req holds a span with a trace and span id.
func isTraces(req *coltracepb.ExportTraceServiceRequest) bool {
	for _, rs := range req.GetResourceSpans() {
		for _, ss := range rs.GetScopeSpans() {
			for _, sp := range ss.GetSpans() {
				if len(sp.GetTraceId()) == 16 && len(sp.GetSpanId()) == 8 {
					return true
				}
			}
		}
	}
	return false
}

func countSpans(req *coltracepb.ExportTraceServiceRequest) int {
	n := 0
	for _, rs := range req.GetResourceSpans() {
		for _, ss := range rs.GetScopeSpans() {
			n += len(ss.GetSpans())
		}
	}
	return n
}

func countPoints(req *colmetricspb.ExportMetricsServiceRequest) int {
	n := 0
	for _, rm := range req.GetResourceMetrics() {
		for _, sm := range rm.GetScopeMetrics() {
			n += len(sm.GetMetrics())
		}
	}
	return n
}

// grpcStats records each gRPC request's headers with its tunnel.
type grpcStats struct{ r *recorder }

func (grpcStats) TagRPC(ctx context.Context, _ *stats.RPCTagInfo) context.Context   { return ctx }
func (grpcStats) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context { return ctx }
func (grpcStats) HandleConn(context.Context, stats.ConnStats)                       {}

func (s *grpcStats) HandleRPC(_ context.Context, st stats.RPCStats) {
	in, ok := st.(*stats.InHeader)
	if !ok || in.Client {
		return
	}
	ta, _ := in.RemoteAddr.(tunnelAddr)
	signal := "traces"
	if strings.Contains(in.FullMethod, "Metrics") {
		signal = "metrics"
	}
	comp := in.Compression
	if comp == "" || comp == "identity" {
		comp = "none"
	}
	s.r.add(wire{Signal: signal, Host: ta.tn.host, Port: ta.tn.port, TLS: ta.tn.tls, ClientCert: ta.tn.clientCert,
		Protocol: "grpc", Path: in.FullMethod, Compression: comp, Items: -1,
		Headers: headerString(func(k string) string { return strings.Join(in.Header.Get(k), ",") })})
}

type traceService struct {
	coltracepb.UnimplementedTraceServiceServer
	r *recorder
}

func (traceService) Export(context.Context, *coltracepb.ExportTraceServiceRequest) (*coltracepb.ExportTraceServiceResponse, error) {
	return &coltracepb.ExportTraceServiceResponse{}, nil
}

type metricsService struct {
	colmetricspb.UnimplementedMetricsServiceServer
	r *recorder
}

func (metricsService) Export(context.Context, *colmetricspb.ExportMetricsServiceRequest) (*colmetricspb.ExportMetricsServiceResponse, error) {
	return &colmetricspb.ExportMetricsServiceResponse{}, nil
}

// pki is the test's certificate authority, server and client certificates,
// written as PEM files for the OTEL_EXPORTER_OTLP_*CERTIFICATE variables.
type pki struct {
	caFile, clientCertFile, clientKeyFile string
	server                                tls.Certificate
	pool                                  *x509.CertPool
}

func newPKI(dir string) (*pki, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "difftest CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	ca, _ := x509.ParseCertificate(caDER)
	leaf := func(serial int64, usage x509.ExtKeyUsage, server bool) ([]byte, *ecdsa.PrivateKey, error) {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return nil, nil, err
		}
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: "difftest"},
			NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage},
		}
		if server {
			tmpl.DNSNames = []string{hostName}
			tmpl.IPAddresses = []net.IP{net.ParseIP(hostIPv4), net.ParseIP(hostIPv6)}
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
		return der, key, err
	}
	p := &pki{pool: x509.NewCertPool()}
	p.pool.AddCert(ca)
	write := func(name, typ string, b []byte) (string, error) {
		path := filepath.Join(dir, name)
		return path, os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: b}), 0o600)
	}
	if p.caFile, err = write("ca.pem", "CERTIFICATE", caDER); err != nil {
		return nil, err
	}
	srvDER, srvKey, err := leaf(2, x509.ExtKeyUsageServerAuth, true)
	if err != nil {
		return nil, err
	}
	p.server = tls.Certificate{Certificate: [][]byte{srvDER}, PrivateKey: srvKey}
	cliDER, cliKey, err := leaf(3, x509.ExtKeyUsageClientAuth, false)
	if err != nil {
		return nil, err
	}
	if p.clientCertFile, err = write("client.pem", "CERTIFICATE", cliDER); err != nil {
		return nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(cliKey)
	if err != nil {
		return nil, err
	}
	if p.clientKeyFile, err = write("client-key.pem", "EC PRIVATE KEY", keyDER); err != nil {
		return nil, err
	}
	return p, nil
}

var errNoWire = errors.New("nothing reached the wire")
