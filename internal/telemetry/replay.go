package telemetry

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"syscall"

	colmetricspb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"

	"github.com/ortel-dev/ortel/internal/atomicfile"
	"github.com/ortel-dev/ortel/internal/telemetry/otlpjson"
)

// ProgressSuffix names the file beside a replayed file that records how
// far replays got in it: "traces.jsonl" -> "traces.jsonl.replayed".
const ProgressSuffix = ".replayed"

// ReplayResult says what Replay did with one file.
type ReplayResult struct {
	File string
	// Signal is "traces" or "metrics"; "" for a file that holds no record
	// yet (nothing to send, not an error).
	Signal string
	// Earlier counts the records earlier replays got through (skipped
	// now); Sent those sent now. A record is one line: one export
	// request.
	Earlier, Sent int
	// Damaged counts records skipped now because they are not a whole
	// OTLP/JSON request (cut by a crash, zero-filled by a power loss);
	// FirstDamaged says where the first was and why.
	Damaged      int
	FirstDamaged string
	// Incomplete is the length of a last line without its line end, not
	// sent: a record still being written, or one a crash cut short that
	// the writer removes when it next opens the file (0 for none).
	Incomplete int64
	// Notes say what Replay decided about the progress file, in plain
	// words (one that belonged to another file, a file moved since).
	Notes []string
}

// ErrReplayBusy is returned (wrapped) when another replay is sending the
// file: Replay refuses rather than waits, and the other one finishes it.
var ErrReplayBusy = errors.New("another ortel replay is sending this file now")

// Replay sends the records of an OTLP/JSON lines file (a spool file, the
// embedded default's traces.jsonl or metrics.jsonl, or the collector's file
// exporter output) to the collector r configures, one request per record,
// in order, each within the signal's export timeout (retries included).
//
// A record is sent once across replays:
//
//   - one replay at a time per file: Replay holds an exclusive lock
//     (flock) on the file while it sends it, and a second one returns
//     ErrReplayBusy at once;
//   - after each record the collector accepted, and before the next is
//     sent, the progress is committed to path+ProgressSuffix (written to
//     a temporary file, synced, renamed over the old one), so a replay
//     that stops (collector down again, Ctrl-C, a crash) is simply run
//     again, and one run after more records were appended sends only
//     those;
//   - the progress names the file it belongs to (its first record's
//     SHA-256, its device and inode): progress left by an earlier file of
//     the same name, since removed or replaced, is ignored, so a new file
//     is never skipped.
//
// A damaged record (a line that is not a whole OTLP/JSON request) is
// skipped and counted, never sent; a last line without its line end is
// not sent (see ReplayResult.Incomplete). Replay stops at the first
// record that cannot be sent and returns what it sent with an error naming
// the line.
func Replay(ctx context.Context, r Resolved, path string) (ReplayResult, error) {
	res := ReplayResult{File: path}
	signal, err := fileSignal(path)
	if errors.Is(err, errNoRecord) {
		return res, nil // nothing to send (yet): a spool or file just opened
	}
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
	f, err := openLocked(path)
	if err != nil {
		return res, err
	}
	defer f.Close() // and the lock with it
	id, err := identify(f)
	if err != nil {
		return res, fmt.Errorf("replay %s: %w", path, err)
	}
	var from progress
	if p, err := readProgress(path); err != nil {
		return res, err
	} else if p != nil {
		ok, note := p.matches(id)
		if note != "" {
			res.Notes = append(res.Notes, note)
		}
		if ok {
			from = *p
		}
	}
	res.Earlier = from.Records
	if id.first == "" {
		return res, nil // no whole record yet
	}

	send, closeSender, err := newSender(ctx, signal, x)
	if err != nil {
		return res, fmt.Errorf("replay %s: %w", path, err)
	}
	defer closeSender()

	if _, err := f.Seek(from.Offset, io.SeekStart); err != nil {
		return res, fmt.Errorf("replay %s: %w", path, err)
	}
	at := from
	at.Version, at.Dev, at.Ino, at.First = progressVersion, id.dev, id.ino, id.first
	dirty := false // records skipped since the last commit
	commit := func() error {
		if err := writeProgress(path, at); err != nil {
			return fmt.Errorf("replay %s: record %d (line %d) was sent, but its progress could not be recorded, so a replay run again would send it a second time: %w",
				path, at.Records, at.Line, err)
		}
		dirty = false
		return nil
	}
	sc := otlpjson.NewScanner(f)
	sc.SetPosition(from.Offset, from.Line+1)
	for sc.Scan() {
		if !sc.Terminated() {
			res.Incomplete = sc.End() - sc.Start()
			break
		}
		next := at
		next.Records, next.Line, next.Offset = at.Records+1, sc.LineNumber(), sc.End()
		req, derr := decodeRecord(signal, sc.Line())
		if derr != nil {
			res.Damaged++
			if res.FirstDamaged == "" {
				res.FirstDamaged = fmt.Sprintf("line %d (byte %d): %v", sc.LineNumber(), sc.Start(), derr)
			}
			at, dirty = next, true
			continue
		}
		if err := ctx.Err(); err != nil {
			return res, errors.Join(fmt.Errorf("replay %s: stopped before line %d: %w (%d records sent now, %d earlier)", path, sc.LineNumber(), context.Cause(ctx), res.Sent, res.Earlier), commitIf(dirty, commit))
		}
		if err := send(ctx, req); err != nil {
			return res, errors.Join(fmt.Errorf("replay %s: line %d: send to %s: %w (%d records sent now, %d earlier)", path, sc.LineNumber(), x.Where(), err, res.Sent, res.Earlier), commitIf(dirty, commit))
		}
		at = next
		res.Sent++
		if err := commit(); err != nil {
			return res, err
		}
	}
	if err := sc.Err(); err != nil {
		return res, errors.Join(fmt.Errorf("replay %s: %w (%d records sent now, %d earlier)", path, err, res.Sent, res.Earlier), commitIf(dirty, commit))
	}
	return res, commitIf(dirty, commit)
}

func commitIf(dirty bool, commit func() error) error {
	if !dirty {
		return nil
	}
	return commit()
}

// decodeRecord decodes one line of signal.
func decodeRecord(signal string, line []byte) (proto.Message, error) {
	var m proto.Message = new(coltracepb.ExportTraceServiceRequest)
	if signal == "metrics" {
		m = new(colmetricspb.ExportMetricsServiceRequest)
	}
	if err := otlpjson.Unmarshal(line, m); err != nil {
		return nil, err
	}
	return m, nil
}

// openLocked opens path and takes its replay lock, refusing when another
// replay holds it. A file renamed (rotated) between the open and the lock
// is opened again under its name.
func openLocked(path string) (*os.File, error) {
	for range 3 {
		f, err := os.Open(path)
		if err != nil {
			return nil, fmt.Errorf("replay: %w", err)
		}
		locked, err := tryLockReplay(f)
		if err != nil || !locked {
			f.Close()
			if err == nil {
				err = fmt.Errorf("replay %s: %w (it holds the file's lock): run this one again once that one ends; each record is sent once either way", path, ErrReplayBusy)
			}
			return nil, err
		}
		if same, err := sameFile(f, path); err != nil || same {
			if err != nil {
				f.Close()
				return nil, fmt.Errorf("replay: %w", err)
			}
			return f, nil
		}
		f.Close() // rotated away just now: take the new file of that name
	}
	return nil, fmt.Errorf("replay %s: the file keeps being replaced (rotated) under its name; try again", path)
}

// sameFile reports whether path still names the open file f.
func sameFile(f *os.File, path string) (bool, error) {
	a, err := f.Stat()
	if err != nil {
		return false, err
	}
	b, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return os.SameFile(a, b), nil
}

// tryLockReplay takes f's replay lock (an exclusive flock) if it is free,
// without waiting. It is released by unlockReplay or by closing f.
func tryLockReplay(f *os.File) (bool, error) {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		switch {
		case err == nil:
			return true, nil
		case errors.Is(err, syscall.EWOULDBLOCK):
			return false, nil
		case errors.Is(err, syscall.EINTR):
			continue
		}
		return false, fmt.Errorf("lock %s: %w", f.Name(), err)
	}
}

func unlockReplay(f *os.File) { _ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }

// errNoRecord: the file holds no line yet; Replay has nothing to send.
var errNoRecord = errors.New("the file holds no record")

// fileSignal tells a traces file from a metrics file by its first record
// that says: the first key of an OTLP/JSON request names its signal.
// Damaged lines before it are passed over.
func fileSignal(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("replay: %w", err)
	}
	defer f.Close()
	sc := otlpjson.NewScanner(f)
	seen := false
	for sc.Scan() {
		seen = true
		head := sc.Line()[:min(len(sc.Line()), 64)]
		switch {
		case bytes.Contains(head, []byte(`"resourceSpans"`)):
			return "traces", nil
		case bytes.Contains(head, []byte(`"resourceMetrics"`)):
			return "metrics", nil
		}
	}
	if err := sc.Err(); err != nil {
		return "", fmt.Errorf("replay %s: %w", path, err)
	}
	if !seen {
		return "", errNoRecord
	}
	return "", fmt.Errorf("replay %s: no line is an OTLP/JSON traces or metrics request (want {\"resourceSpans\": ...} or {\"resourceMetrics\": ...})", path)
}

// progressVersion is the progress file's format: a JSON object naming the
// file. (Version 1 was a bare record count, not tied to a file.)
const progressVersion = 2

// progress is what FILE.replayed holds: how far replays got in FILE, and
// which file that was.
type progress struct {
	Version int `json:"version"`
	// First is the SHA-256 of the file's first line, hex: what ties the
	// progress to the file's content. Dev and Ino are its device and
	// inode when it was written.
	First string `json:"first_record_sha256"`
	Dev   uint64 `json:"dev"`
	Ino   uint64 `json:"ino"`
	// Records and Line count the records (sent or skipped as damaged)
	// and lines replays got through; Offset is the byte just past them.
	Records int   `json:"records"`
	Line    int   `json:"line"`
	Offset  int64 `json:"offset"`
}

// fileID is what identifies a file: device, inode, the SHA-256 of its
// first line ("" while it holds no whole line) and its size.
type fileID struct {
	dev, ino uint64
	first    string
	size     int64
	f        *os.File
}

func identify(f *os.File) (fileID, error) {
	st, err := f.Stat()
	if err != nil {
		return fileID{}, err
	}
	id := fileID{size: st.Size(), f: f}
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		id.dev, id.ino = uint64(sys.Dev), sys.Ino
	}
	sc := otlpjson.NewScanner(io.NewSectionReader(f, 0, id.size))
	if sc.Scan() && sc.Terminated() {
		sum := sha256.Sum256(sc.Line())
		id.first = hex.EncodeToString(sum[:])
	}
	return id, sc.Err()
}

// matches reports whether p is the progress of the file id, with a note
// when it says something the user should know.
func (p *progress) matches(id fileID) (bool, string) {
	name := id.f.Name()
	if p.First != id.first || p.Offset > id.size || !endsLine(id.f, p.Offset) {
		return false, fmt.Sprintf("%s belongs to an earlier %s (since removed or replaced: its first record differs), so this one is sent from its first record",
			name+ProgressSuffix, name)
	}
	if p.Dev != id.dev || p.Ino != id.ino {
		return true, fmt.Sprintf("%s was moved or copied since the last replay (its first record is the same): resuming after record %d", name, p.Records)
	}
	return true, ""
}

// endsLine reports whether offset is the start of a line of f.
func endsLine(f *os.File, offset int64) bool {
	if offset == 0 {
		return true
	}
	b := make([]byte, 1)
	_, err := f.ReadAt(b, offset-1)
	return err == nil && b[0] == '\n'
}

// readProgress reads path's progress file: nil when there is none.
func readProgress(path string) (*progress, error) {
	b, err := os.ReadFile(path + ProgressSuffix)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("replay: read progress: %w", err)
	}
	text := strings.TrimSpace(string(b))
	if _, err := strconv.Atoi(text); err == nil {
		return nil, fmt.Errorf("replay %s: %s holds a bare record count (%s) from an older ortel, which does not say which file it counted: if %s is that file, its first %s records were sent; remove %s to send the whole file again, or keep those records out of the file",
			path, path+ProgressSuffix, text, path, text, path+ProgressSuffix)
	}
	var p progress
	if err := json.Unmarshal(b, &p); err != nil || p.Version != progressVersion || p.Records < 0 || p.Offset < 0 {
		return nil, fmt.Errorf("replay: progress file %s holds %q, not the progress of a replay: remove it to send %s from its first record", path+ProgressSuffix, safeQuoteBytes(b), path)
	}
	return &p, nil
}

// safeQuoteBytes quotes at most 80 bytes of b for a message.
func safeQuoteBytes(b []byte) string {
	if len(b) > 80 {
		return string(b[:80]) + "..."
	}
	return string(b)
}

// replayedWhole reports whether the progress file of path says replays
// sent every record of the open file f, whose whole records end at size.
func replayedWhole(f *os.File, path string, size int64) bool {
	p, err := readProgress(path)
	if err != nil || p == nil || p.Offset != size {
		return false
	}
	id, err := identify(f)
	if err != nil {
		return false
	}
	ok, _ := p.matches(id)
	return ok
}

// writeProgress replaces the progress file atomically and durably: a crash
// or power loss leaves the old progress or the new, never a torn one.
func writeProgress(path string, p progress) error {
	b, err := json.Marshal(p)
	if err != nil {
		return err
	}
	if err := atomicfile.Write(path+ProgressSuffix, append(b, '\n'), 0o644); err != nil {
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
