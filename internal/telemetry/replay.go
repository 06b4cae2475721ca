package telemetry

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"

	colmetricspb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"

	"github.com/ortel-dev/ortel/internal/otlpjson"
)

// ProgressSuffix names the file beside a replayed file that holds how many
// of its records were sent: "traces.jsonl" -> "traces.jsonl.replayed".
const ProgressSuffix = ".replayed"

// ReplayResult says what Replay did with one file.
type ReplayResult struct {
	File string
	// Signal is "traces" or "metrics".
	Signal string
	// Earlier counts the records an earlier replay sent (skipped now);
	// Sent those sent now. A record is one line: one export request.
	Earlier, Sent int
}

// Replay sends the records of an OTLP/JSON lines file (a spool file, the
// embedded default's traces.jsonl or metrics.jsonl, or the collector's file
// exporter output) to the collector r configures, one request per record,
// in order, each within the signal's export timeout (retries included).
// Progress is recorded after every record in path+ProgressSuffix, so a
// record is sent once across replays: a replay that fails part way can be
// run again, and one run after more records were appended sends only those.
// It stops at the first record that cannot be sent or decoded and returns
// what it sent with an error naming the line.
func Replay(ctx context.Context, r Resolved, path string) (ReplayResult, error) {
	res := ReplayResult{File: path}
	signal, err := fileSignal(path)
	if err != nil {
		return res, err
	}
	res.Signal = signal
	x := r.Traces
	if signal == "metrics" {
		x = r.Metrics
	}
	if x.Kind != KindOTLP {
		return res, fmt.Errorf("replay %s: %s are not sent to a collector (%s): set OTEL_EXPORTER_OTLP_ENDPOINT or --otlp-endpoint", path, signal, x.Where())
	}
	done, err := readProgress(path)
	if err != nil {
		return res, err
	}
	f, err := os.Open(path)
	if err != nil {
		return res, fmt.Errorf("replay: %w", err)
	}
	defer f.Close()

	send, closeSender, err := newSender(ctx, signal, x)
	if err != nil {
		return res, fmt.Errorf("replay %s: %w", path, err)
	}
	defer closeSender()

	record := 0
	handle := func(req proto.Message) error {
		record++
		if record <= done {
			res.Earlier++
			return nil
		}
		if err := send(ctx, req); err != nil {
			return fmt.Errorf("send to %s: %w", x.Where(), err)
		}
		res.Sent++
		return writeProgress(path, record)
	}
	if signal == "traces" {
		err = otlpjson.ReadTraces(f, func(req *coltracepb.ExportTraceServiceRequest) error { return handle(req) })
	} else {
		err = otlpjson.ReadMetrics(f, func(req *colmetricspb.ExportMetricsServiceRequest) error { return handle(req) })
	}
	if err != nil {
		return res, fmt.Errorf("replay %s: %w (%d records sent now, %d earlier)", path, err, res.Sent, res.Earlier)
	}
	if done > record {
		return res, fmt.Errorf("replay %s: %s says %d records were sent but the file holds %d: was the file replaced? Remove the progress file to send it again",
			path, path+ProgressSuffix, done, record)
	}
	return res, nil
}

// fileSignal tells a traces file from a metrics file by its first record.
func fileSignal(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("replay: %w", err)
	}
	defer f.Close()
	br := bufio.NewReader(f)
	for {
		line, err := br.ReadSlice('\n')
		if t := bytes.TrimSpace(line); len(t) > 0 {
			// The first key of an OTLP/JSON request names its signal.
			switch {
			case bytes.Contains(t[:min(len(t), 64)], []byte(`"resourceSpans"`)):
				return "traces", nil
			case bytes.Contains(t[:min(len(t), 64)], []byte(`"resourceMetrics"`)):
				return "metrics", nil
			}
			return "", fmt.Errorf("replay %s: line 1 is not an OTLP/JSON traces or metrics request (want {\"resourceSpans\": ...} or {\"resourceMetrics\": ...})", path)
		}
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			if errors.Is(err, io.EOF) {
				return "", fmt.Errorf("replay %s: the file holds no record", path)
			}
			return "", fmt.Errorf("replay %s: %w", path, err)
		}
	}
}

func readProgress(path string) (int, error) {
	b, err := os.ReadFile(path + ProgressSuffix)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("replay: read progress: %w", err)
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || n < 0 {
		return 0, fmt.Errorf("replay: progress file %s holds %q, not a number of records", path+ProgressSuffix, strings.TrimSpace(string(b)))
	}
	return n, nil
}

// writeProgress replaces the progress file atomically (write, rename).
func writeProgress(path string, n int) error {
	tmp := path + ProgressSuffix + ".tmp"
	if err := os.WriteFile(tmp, []byte(strconv.Itoa(n)+"\n"), 0o644); err != nil {
		return fmt.Errorf("record progress: %w", err)
	}
	if err := os.Rename(tmp, path+ProgressSuffix); err != nil {
		return fmt.Errorf("record progress: %w", err)
	}
	return nil
}

// newSender returns a function that sends one request of signal to x.
func newSender(ctx context.Context, signal string, x Exporter) (func(context.Context, proto.Message) error, func(), error) {
	if signal == "traces" {
		client := traceClient(x)
		if err := client.Start(ctx); err != nil {
			return nil, nil, err
		}
		send := func(ctx context.Context, m proto.Message) error {
			return client.UploadTraces(ctx, m.(*coltracepb.ExportTraceServiceRequest).GetResourceSpans())
		}
		return send, func() { _ = client.Stop(context.WithoutCancel(ctx)) }, nil
	}
	if isHTTP(x.Protocol) {
		return httpMetricSender(x), func() {}, nil
	}
	conn, err := grpc.NewClient(x.Endpoint, grpc.WithTransportCredentials(x.credentials()))
	if err != nil {
		return nil, nil, err
	}
	client := colmetricspb.NewMetricsServiceClient(conn)
	send := func(ctx context.Context, m proto.Message) error {
		ctx, cancel := context.WithTimeout(ctx, x.Timeout)
		defer cancel()
		ctx = metadata.NewOutgoingContext(ctx, metadata.New(copyHeaders(x.Headers)))
		var opts []grpc.CallOption
		if x.Compression == compressionGzip {
			opts = append(opts, grpc.UseCompressor(compressionGzip))
		}
		resp, err := client.Export(ctx, m.(*colmetricspb.ExportMetricsServiceRequest), opts...)
		if err != nil {
			return err
		}
		return partialMetrics(resp.GetPartialSuccess())
	}
	return send, func() { _ = conn.Close() }, nil
}

func partialMetrics(p *colmetricspb.ExportMetricsPartialSuccess) error {
	if p.GetRejectedDataPoints() > 0 {
		return fmt.Errorf("the collector rejected %d data points: %s", p.GetRejectedDataPoints(), p.GetErrorMessage())
	}
	return nil
}

func httpMetricSender(x Exporter) func(context.Context, proto.Message) error {
	client := metricHTTPClient(x) // proxy, TLS and http/json as the exporter's
	url := x.url()
	return func(ctx context.Context, m proto.Message) error {
		ctx, cancel := context.WithTimeout(ctx, x.Timeout)
		defer cancel()
		body, err := proto.Marshal(m)
		if err != nil {
			return err
		}
		if x.Compression == compressionGzip {
			var b bytes.Buffer
			zw := gzip.NewWriter(&b)
			if _, err := zw.Write(body); err != nil {
				return err
			}
			if err := zw.Close(); err != nil {
				return err
			}
			body = b.Bytes()
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/x-protobuf")
		if x.Compression == compressionGzip {
			req.Header.Set("Content-Encoding", "gzip")
		}
		for k, v := range x.Headers {
			req.Header.Set(k, v)
		}
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
		if resp.StatusCode/100 != 2 {
			return fmt.Errorf("%s answered %s: %s", url, resp.Status, strings.TrimSpace(string(msg)))
		}
		out := &colmetricspb.ExportMetricsServiceResponse{}
		if proto.Unmarshal(msg, out) == nil {
			return partialMetrics(out.GetPartialSuccess())
		}
		return nil
	}
}
