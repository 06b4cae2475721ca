package difftest

import (
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/ortel-dev/ortel/internal/telemetry"
)

var (
	rec   *recorder
	certs *pki
)

// TestMain starts the proxy and points HTTP_PROXY and HTTPS_PROXY at it
// before anything reads them: net/http reads them once per process.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "difftest")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := func() int {
		defer os.RemoveAll(dir)
		if certs, err = newPKI(dir); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		if rec, err = startRecorder(certs.server, certs.pool); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer rec.close()
		for _, k := range []string{"HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"} {
			_ = os.Setenv(k, rec.proxyURL())
		}
		for _, k := range []string{"NO_PROXY", "no_proxy"} {
			_ = os.Unsetenv(k)
		}
		return m.Run()
	}()
	os.Exit(code)
}

// diff is a field where ortel differs from the official exporters on
// purpose, and the value ortel puts on the wire.
type diff struct{ signal, field, ortel string }

// row is one environment of the table.
type row struct {
	name string
	env  map[string]string
	// differs lists the fields where ortel differs on purpose (the README
	// says why); every other field must be equal.
	differs []diff
}

const (
	grpcProto = "grpc"
	httpProto = "http/protobuf"
	jsonProto = "http/json"
)

// rows is the table: generated combinations of protocol, scheme, host,
// port and path for the generic endpoint, then hand-written rows for
// per-signal overrides, headers, compression, TLS settings and exporters.
func rows() []row {
	var out []row
	hosts := []string{hostName, hostIPv4, "[" + hostIPv6 + "]"}
	paths := []string{"", "/", "/otlp", "/otlp/"}
	i := 0
	for _, proto := range []string{grpcProto, httpProto, jsonProto} {
		for _, scheme := range []string{"http", "https"} {
			for _, host := range hosts {
				for _, port := range []string{"", ":4443"} {
					if proto == grpcProto && port == "" && strings.HasPrefix(host, "[") {
						// gRPC-Go does not take a bracketed IPv6 address
						// without a port through a proxy: not observable here.
						continue
					}
					p := paths[i%len(paths)]
					i++
					endpoint := scheme + "://" + host + port + p
					r := row{
						name: fmt.Sprintf("generated %s %s", proto, endpoint),
						env:  map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": proto, "OTEL_EXPORTER_OTLP_ENDPOINT": endpoint},
					}
					if proto == grpcProto && scheme == "http" && port == "" {
						// gRPC-Go's resolver gives a host without a port 443
						// whatever the scheme; ortel takes http://'s 80.
						r.differs = append(r.differs, diff{"traces", "port", "80"}, diff{"metrics", "port", "80"})
					}
					if proto == jsonProto {
						// The official metric exporter has no JSON encoding.
						r.differs = append(r.differs, diff{"metrics", "protocol", jsonProto})
					}
					out = append(out, r)
				}
			}
		}
	}
	env := func(kv ...string) map[string]string {
		m := map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	const (
		endpoint  = "OTEL_EXPORTER_OTLP_ENDPOINT"
		tEndpoint = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
		mEndpoint = "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT"
		protocol  = "OTEL_EXPORTER_OTLP_PROTOCOL"
		tProtocol = "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"
		mProtocol = "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL"
		headers   = "OTEL_EXPORTER_OTLP_HEADERS"
		tHeaders  = "OTEL_EXPORTER_OTLP_TRACES_HEADERS"
		mHeaders  = "OTEL_EXPORTER_OTLP_METRICS_HEADERS"
		compress  = "OTEL_EXPORTER_OTLP_COMPRESSION"
		tCompress = "OTEL_EXPORTER_OTLP_TRACES_COMPRESSION"
		mCompress = "OTEL_EXPORTER_OTLP_METRICS_COMPRESSION"
		insecure  = "OTEL_EXPORTER_OTLP_INSECURE"
		tInsecure = "OTEL_EXPORTER_OTLP_TRACES_INSECURE"
	)
	v6 := "[" + hostIPv6 + "]"
	out = append(out,
		// Per-signal endpoints: used as they are, path included.
		row{name: "traces URL without a port, with a path", env: env(protocol, httpProto, tEndpoint, "http://"+hostName+"/custom/path", mEndpoint, "http://"+hostName+"/custom/m")},
		row{name: "signal URLs without a path post to /", env: env(protocol, httpProto, tEndpoint, "https://"+hostName, mEndpoint, "https://"+hostIPv4+"/")},
		row{name: "signal URL with a trailing slash kept", env: env(protocol, httpProto, tEndpoint, "https://"+hostName+"/v1/traces/", mEndpoint, "https://"+hostName+"/v1/metrics/")},
		row{name: "signal URLs override the generic one", env: env(protocol, httpProto, endpoint, "http://"+hostIPv4+":4318", tEndpoint, "https://"+hostName+":8443/t", mEndpoint, "https://"+v6+"/m")},
		row{name: "only traces overridden, metrics from the generic", env: env(protocol, httpProto, endpoint, "https://"+hostName+"/base/", tEndpoint, "https://"+hostIPv4+":9000/tr")},
		row{name: "IPv6 signal URL with port and path", env: env(protocol, jsonProto, tEndpoint, "https://"+v6+":4318/x/y", mEndpoint, "https://"+v6+":4318/x/z"),
			differs: []diff{{"metrics", "protocol", jsonProto}}},
		row{name: "gRPC ignores a signal URL's path", env: env(protocol, grpcProto, tEndpoint, "https://"+hostName+"/ignored", mEndpoint, "https://"+hostIPv4+":4317/ignored")},
		row{name: "generic path with a double slash", env: env(protocol, httpProto, endpoint, "https://"+hostName+"/otlp//")},
		row{name: "upper-case scheme", env: env(protocol, httpProto, endpoint, "HTTPS://"+hostName)},

		// Protocol per signal.
		row{name: "traces grpc, metrics http/protobuf", env: env(endpoint, "https://"+hostName, tProtocol, grpcProto, mProtocol, httpProto)},
		row{name: "traces http/json, metrics grpc", env: env(endpoint, "https://"+hostName+":4443", tProtocol, jsonProto, mProtocol, grpcProto)},
		row{name: "upper-case GRPC", env: env(endpoint, "https://"+hostName+":4443", protocol, "GRPC"),
			// The official exporters take an unknown value as http/protobuf.
			differs: []diff{{"traces", "protocol", grpcProto}, {"traces", "path", "/opentelemetry.proto.collector.trace.v1.TraceService/Export"},
				{"metrics", "protocol", grpcProto}, {"metrics", "path", "/opentelemetry.proto.collector.metrics.v1.MetricsService/Export"}}},
		row{name: "signal protocol overrides the generic", env: env(endpoint, "https://"+hostName, protocol, grpcProto, mProtocol, httpProto)},
		row{name: "no protocol set: ortel's default is grpc", env: env(endpoint, "https://"+hostName+":4443"),
			differs: []diff{{"traces", "protocol", grpcProto}, {"traces", "path", "/opentelemetry.proto.collector.trace.v1.TraceService/Export"},
				{"metrics", "protocol", grpcProto}, {"metrics", "path", "/opentelemetry.proto.collector.metrics.v1.MetricsService/Export"}}},

		// Headers.
		row{name: "headers, percent-encoded", env: env(protocol, httpProto, endpoint, "https://"+hostName, headers, "authorization=Bearer%20abc,x-tenant=t1")},
		row{name: "headers over gRPC", env: env(protocol, grpcProto, endpoint, "https://"+hostName, headers, "authorization=Bearer%20abc,x-tenant=t1")},
		row{name: "signal headers replace the generic ones", env: env(protocol, httpProto, endpoint, "https://"+hostName, headers, "x-tenant=t1", tHeaders, "x-signal=tr")},
		row{name: "metrics headers over gRPC", env: env(protocol, grpcProto, endpoint, "https://"+hostName, headers, "x-tenant=t1", mHeaders, "x-signal=m,api-key=k")},
		row{name: "headers with spaces", env: env(protocol, httpProto, endpoint, "https://"+hostName, headers, " api-key = k1 , x-tenant=t2 ")},
		row{name: "headers over http/json", env: env(protocol, jsonProto, endpoint, "https://"+hostName, headers, "x-tenant=json"),
			differs: []diff{{"metrics", "protocol", jsonProto}}},

		// Compression.
		row{name: "gzip over gRPC", env: env(protocol, grpcProto, endpoint, "https://"+hostName, compress, "gzip")},
		row{name: "gzip over http/protobuf", env: env(protocol, httpProto, endpoint, "https://"+hostName, compress, "gzip")},
		row{name: "gzip over http/json", env: env(protocol, jsonProto, endpoint, "http://"+hostName+":4318", compress, "gzip"),
			differs: []diff{{"metrics", "protocol", jsonProto}}},
		row{name: "upper-case GZIP", env: env(protocol, httpProto, endpoint, "https://"+hostName, compress, "GZIP"),
			// The official exporters take "gzip" only; ortel reads values
			// in any case, as it does every enumerated variable.
			differs: []diff{{"traces", "compression", "gzip"}, {"metrics", "compression", "gzip"}}},
		row{name: "gzip for traces only", env: env(protocol, httpProto, endpoint, "https://"+hostName, tCompress, "gzip")},
		row{name: "gzip generic, none for metrics", env: env(protocol, grpcProto, endpoint, "https://"+hostName, compress, "gzip", mCompress, "none")},

		// Security.
		row{name: "no scheme is TLS over gRPC", env: env(protocol, grpcProto, endpoint, hostName+":4317", "OTEL_EXPORTER_OTLP_CERTIFICATE", certs.caFile)},
		row{name: "no scheme with INSECURE=true is plaintext", env: env(protocol, grpcProto, endpoint, hostName+":4317", insecure, "true")},
		row{name: "no scheme, INSECURE for traces only", env: env(protocol, grpcProto, endpoint, hostName+":4317", tInsecure, "true",
			"OTEL_EXPORTER_OTLP_METRICS_CERTIFICATE", certs.caFile)},
		row{name: "http:// with a CA file set stays plaintext", env: env(protocol, grpcProto, endpoint, "http://"+hostName+":4317", "OTEL_EXPORTER_OTLP_CERTIFICATE", certs.caFile),
			differs: []diff{{"traces", "tls", "false"}, {"metrics", "tls", "false"}}},
		row{name: "client certificate over gRPC", env: env(protocol, grpcProto, endpoint, "https://"+hostName,
			"OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE", certs.clientCertFile, "OTEL_EXPORTER_OTLP_CLIENT_KEY", certs.clientKeyFile)},
		row{name: "client certificate over HTTP", env: env(protocol, httpProto, endpoint, "https://"+hostName,
			"OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE", certs.clientCertFile, "OTEL_EXPORTER_OTLP_CLIENT_KEY", certs.clientKeyFile)},
		row{name: "client certificate for traces only", env: env(protocol, httpProto, endpoint, "https://"+hostName,
			"OTEL_EXPORTER_OTLP_TRACES_CLIENT_CERTIFICATE", certs.clientCertFile, "OTEL_EXPORTER_OTLP_TRACES_CLIENT_KEY", certs.clientKeyFile)},
		row{name: "per-signal CA files", env: env(protocol, grpcProto, endpoint, "https://"+hostName, "OTEL_EXPORTER_OTLP_CERTIFICATE", "",
			"OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE", certs.caFile, "OTEL_EXPORTER_OTLP_METRICS_CERTIFICATE", certs.caFile)},

		// Exporters.
		row{name: "traces exporter none", env: env(protocol, httpProto, endpoint, "https://"+hostName, "OTEL_TRACES_EXPORTER", "none")},
		row{name: "metrics exporter none", env: env(protocol, grpcProto, endpoint, "https://"+hostName, "OTEL_METRICS_EXPORTER", "none")},
	)
	return out
}

// TestWireMatchesOfficialExporters is the differential test: see the
// package documentation.
func TestWireMatchesOfficialExporters(t *testing.T) {
	table := rows()
	if len(table) < 60 {
		t.Fatalf("the table has %d rows, want at least 60", len(table))
	}
	for _, tt := range table {
		t.Run(tt.name, func(t *testing.T) {
			clearOTEL(t)
			// The CA only where TLS is asked for: with a CA file the
			// official gRPC exporter uses TLS even for http://, and the HTTP
			// one refuses to start (see the README).
			for _, v := range tt.env {
				if strings.HasPrefix(strings.ToLower(v), "https://") {
					t.Setenv("OTEL_EXPORTER_OTLP_CERTIFICATE", certs.caFile)
				}
			}
			t.Setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "10000")
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
			defer cancel()
			rec.take()
			if err := officialExport(ctx); err != nil {
				t.Fatalf("official exporters: %v", err)
			}
			sdk := byPerSignal(t, "official", rec.take())
			if err := ortelExport(ctx, t.TempDir()); err != nil {
				t.Fatalf("ortel: %v", err)
			}
			ours := byPerSignal(t, "ortel", rec.take())
			compare(t, sdk, ours, tt.differs)
		})
	}
}

// clearOTEL unsets every OTEL_* variable for the test (restored after).
func clearOTEL(t *testing.T) {
	for _, kv := range os.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "OTEL_") {
			t.Setenv(k, v)
			_ = os.Unsetenv(k)
		}
	}
}

// protocolOf is the protocol the official SDK picks for signal from the
// environment, as its autoexport does: the signal's variable, else the
// generic one, else http/protobuf.
func protocolOf(signal string) string {
	if v := os.Getenv("OTEL_EXPORTER_OTLP_" + signal + "_PROTOCOL"); v != "" {
		return v
	}
	if v := os.Getenv("OTEL_EXPORTER_OTLP_PROTOCOL"); v != "" {
		return v
	}
	return httpProto
}

// officialExport sends one span and one metric through the official
// exporters, configured from the environment alone.
func officialExport(ctx context.Context) error {
	if os.Getenv("OTEL_TRACES_EXPORTER") != "none" {
		var exp sdktrace.SpanExporter
		var err error
		if protocolOf("TRACES") == grpcProto {
			exp, err = otlptracegrpc.New(ctx)
		} else {
			exp, err = otlptracehttp.New(ctx)
		}
		if err != nil {
			return err
		}
		sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1}, SpanID: trace.SpanID{2}, TraceFlags: trace.FlagsSampled})
		span := tracetest.SpanStub{Name: "diff", SpanContext: sc, StartTime: time.Now(), EndTime: time.Now()}.Snapshot()
		err = exp.ExportSpans(ctx, []sdktrace.ReadOnlySpan{span})
		if err := errorsJoin(err, exp.Shutdown(ctx)); err != nil {
			return fmt.Errorf("traces: %w", err)
		}
	}
	if os.Getenv("OTEL_METRICS_EXPORTER") != "none" {
		var exp sdkmetric.Exporter
		var err error
		if protocolOf("METRICS") == grpcProto {
			exp, err = otlpmetricgrpc.New(ctx)
		} else {
			exp, err = otlpmetrichttp.New(ctx)
		}
		if err != nil {
			return err
		}
		rm := &metricdata.ResourceMetrics{Resource: resource.Empty(), ScopeMetrics: []metricdata.ScopeMetrics{{
			Scope: instrumentation.Scope{Name: "diff"},
			Metrics: []metricdata.Metrics{{Name: "diff.count", Data: metricdata.Sum[int64]{
				Temporality: metricdata.CumulativeTemporality, IsMonotonic: true,
				DataPoints: []metricdata.DataPoint[int64]{{StartTime: time.Now(), Time: time.Now(), Value: 1}},
			}}},
		}}}
		err = exp.Export(ctx, rm)
		if err := errorsJoin(err, exp.Shutdown(ctx)); err != nil {
			return fmt.Errorf("metrics: %w", err)
		}
	}
	return nil
}

// ortelExport sends one span and one metric through ortel's telemetry,
// configured from the environment alone, as every command is.
func ortelExport(ctx context.Context, dir string) error {
	tel, err := telemetry.Setup(ctx, telemetry.Config{OutputDir: dir})
	if err != nil {
		return err
	}
	_, span := tel.TracerProvider.Tracer("diff").Start(ctx, "diff")
	span.End()
	counter, err := tel.MeterProvider.Meter("diff").Int64Counter("diff.count")
	if err != nil {
		return err
	}
	counter.Add(ctx, 1)
	return tel.Shutdown(ctx)
}

func errorsJoin(a, b error) error {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	}
	return fmt.Errorf("%w; %w", a, b)
}

// byPerSignal checks that each signal's requests all looked alike and
// returns one per signal.
func byPerSignal(t *testing.T, side string, wires []wire) map[string]wire {
	t.Helper()
	out := map[string]wire{}
	for _, w := range wires {
		if w.Items == 0 {
			t.Errorf("%s: a request without data: %s", side, w)
		}
		w.Items = 0
		if prev, ok := out[w.Signal]; ok && prev != w {
			t.Errorf("%s: two %s requests differ:\n  %s\n  %s", side, w.Signal, prev, w)
		}
		out[w.Signal] = w
	}
	return out
}

// fields names a wire's compared fields.
func fields(w wire) map[string]string {
	return map[string]string{
		"host": w.Host, "port": w.Port, "tls": strconv.FormatBool(w.TLS), "client-cert": strconv.FormatBool(w.ClientCert),
		"protocol": w.Protocol, "path": w.Path, "compression": w.Compression, "headers": w.Headers,
	}
}

func compare(t *testing.T, sdk, ours map[string]wire, differs []diff) {
	t.Helper()
	signals := map[string]bool{}
	for s := range maps.Keys(sdk) {
		signals[s] = true
	}
	for s := range maps.Keys(ours) {
		signals[s] = true
	}
	names := slices.Sorted(maps.Keys(signals))
	for _, s := range names {
		a, okA := sdk[s]
		b, okB := ours[s]
		switch {
		case !okA:
			t.Errorf("%s: only ortel sent: %s", s, b)
			continue
		case !okB:
			t.Errorf("%s: only the official exporter sent: %s", s, a)
			continue
		}
		fa, fb := fields(a), fields(b)
		expected := map[string]string{}
		for _, d := range differs {
			if d.signal == s {
				expected[d.field] = d.ortel
			}
		}
		for _, f := range []string{"host", "port", "tls", "client-cert", "protocol", "path", "compression", "headers"} {
			want, planned := expected[f]
			switch {
			case planned && fb[f] != want:
				t.Errorf("%s %s: ortel sent %q, want %q (a difference listed in the README)", s, f, fb[f], want)
			case planned && fa[f] == want:
				t.Errorf("%s %s: the official exporter now also sends %q: drop this row's difference, and its README line", s, f, want)
			case !planned && fa[f] != fb[f]:
				t.Errorf("%s %s differs: official %q, ortel %q", s, f, fa[f], fb[f])
			}
		}
		if t.Failed() {
			t.Logf("official: %s\nortel:    %s", a, b)
		}
	}
	if len(names) == 0 {
		t.Error(errNoWire)
	}
}
