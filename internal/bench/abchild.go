package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/ortel-dev/ortel/internal/report"
)

// An A/B side in a child process. When the two sides of bench --ab load
// different ONNX Runtime libraries, each side runs in a child process of
// its own (one process holds one ONNX Runtime). The parent keeps the whole
// design (block sizes, the shuffled order, looks, bootstrap, interference,
// verdict); a child opens its side (session, warm-up), then measures
// blocks on request, timing each run itself, so the pipe adds nothing to
// the latencies.
//
// The protocol is one JSON object a line. The parent writes an abRequest
// per block on the child's standard input and closes it to end; the child
// answers on its standard output, first an abReply with Ready once its side
// is open, then one with Block per request, or one with Error, after which
// it exits. Its standard error is the parent's, each line prefixed by the
// side.

// abProtocol is the protocol's version: a child that speaks another (an
// ortel binary of another release) is refused.
const abProtocol = 1

// ABChild is how to start one side's child process: this program run as
// Path with Args (its hidden A/B side command, which calls ServeABSide),
// with Env (nil: this process's).
type ABChild struct {
	Path string
	Args []string
	Env  []string
	// Library is the ONNX Runtime library the side loads, for the
	// progress line and errors.
	Library string
	// Stderr receives the child's standard error, each line prefixed by
	// "A/B side X: " (nil: discarded).
	Stderr io.Writer
	// BlockTimeout is the longest a block may take before the child is
	// judged stuck and ended (default: a minute plus 20 times the block's
	// expected time).
	BlockTimeout time.Duration
}

// abRequest asks a child for one block of Runs runs.
type abRequest struct {
	Runs int `json:"runs"`
}

// abReply is one message of a child: Ready, Block or Error.
type abReply struct {
	Ready *abReady     `json:"ready,omitempty"`
	Block *abBlockWire `json:"block,omitempty"`
	Error string       `json:"error,omitempty"`
}

// abReady says the child's side is open and warm.
type abReady struct {
	Protocol    int            `json:"protocol"`
	ORTVersion  string         `json:"ort_version"`
	LibraryPath string         `json:"library_path"`
	WarmMedianS float64        `json:"warm_median_s"`
	PID         int            `json:"pid"`
	Report      *report.Report `json:"report"`
}

// abBlockWire is one measured block as abRunBlock returned it.
type abBlockWire struct {
	LatS   []float64 `json:"lat_s"` // successful runs, sorted
	Errors int       `json:"errors"`
	WallS  float64   `json:"wall_s"`
	CPUS   float64   `json:"cpu_s"` // the child's CPU time; < 0 unknown
	Err    string    `json:"err,omitempty"`
}

// ServeABSide is the child's end: it opens the side cfg describes (ONNX
// Runtime initialized with the side's library), says it is ready on out,
// then measures one block per request read from in until in ends.
func ServeABSide(ctx context.Context, cfg Config, in io.Reader, out io.Writer) error {
	enc := json.NewEncoder(out)
	fail := func(err error) error {
		_ = enc.Encode(abReply{Error: err.Error()})
		return err
	}
	cfg.Auto, cfg.Runs, cfg.Duration, cfg.ProfileRuns = nil, 1, 0, 0
	cfg.defaults()
	if err := cfg.Validate(); err != nil {
		return fail(err)
	}
	s := &abSide{label: "child"}
	defer s.close()
	if err := s.open(ctx, &cfg); err != nil {
		return fail(err)
	}
	ready := abReady{Protocol: abProtocol, ORTVersion: s.ortVersion, LibraryPath: s.library,
		WarmMedianS: s.warmMed, PID: os.Getpid(), Report: s.base}
	if err := enc.Encode(abReply{Ready: &ready}); err != nil {
		return err
	}
	return serveBlocks(ctx, s.run, in, enc)
}

// serveBlocks answers each request read from in with a block of run.
func serveBlocks(ctx context.Context, run abRunner, in io.Reader, enc *json.Encoder) error {
	dec := json.NewDecoder(in)
	for {
		var req abRequest
		if err := dec.Decode(&req); errors.Is(err, io.EOF) {
			return nil // the parent is done
		} else if err != nil {
			err = fmt.Errorf("read the parent's request: %w", err)
			_ = enc.Encode(abReply{Error: err.Error()})
			return err
		}
		if req.Runs < 1 || req.Runs > MaxABBlockRuns {
			err := fmt.Errorf("a block of %d runs was asked for (1 to %d)", req.Runs, MaxABBlockRuns)
			_ = enc.Encode(abReply{Error: err.Error()})
			return err
		}
		blk, errs, _, err := run(ctx, req.Runs)
		w := abBlockWire{LatS: blk.lat, Errors: errs, WallS: blk.wall, CPUS: blk.cpu}
		if w.LatS == nil {
			w.LatS = []float64{}
		}
		if err != nil {
			w.Err = err.Error()
		}
		if err := enc.Encode(abReply{Block: &w}); err != nil {
			return err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
}

// abChild is the parent's end of a side's child process.
type abChild struct {
	label, lib string
	cmd        *exec.Cmd
	stdin      *os.File
	enc        *json.Encoder
	replies    chan abMessage
	done       chan struct{} // closed when the process has exited
	waitErr    error
	stderr     *tailWriter
	timeout    time.Duration
	closeOnce  sync.Once
	procID     int
}

// abMessage is a reply read from the child, or why none could be.
type abMessage struct {
	reply abReply
	err   error
}

// startABChild starts the side's child process and waits until its side
// is open and warm (or the child fails, or ctx ends).
func startABChild(ctx context.Context, label string, spec ABChild) (*abChild, *abReady, error) {
	c := &abChild{label: label, lib: spec.Library, replies: make(chan abMessage, 1), done: make(chan struct{}),
		stderr: &tailWriter{next: spec.Stderr, prefix: "A/B side " + label + ": "}, timeout: spec.BlockTimeout}
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, nil, c.errorf("cannot create its pipes: %w", err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, nil, c.errorf("cannot create its pipes: %w", err)
	}
	c.cmd = exec.Command(spec.Path, spec.Args...)
	c.cmd.Env, c.cmd.Stdin, c.cmd.Stdout, c.cmd.Stderr = spec.Env, inR, outW, c.stderr
	err = c.cmd.Start()
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return nil, nil, c.errorf("its child process did not start (%s): %w", spec.Path, err)
	}
	c.procID, c.stdin, c.enc = c.cmd.Process.Pid, inW, json.NewEncoder(inW)
	go func() {
		c.waitErr = c.cmd.Wait()
		close(c.done)
	}()
	go readReplies(outR, c.replies)
	m, err := c.receive(ctx, 0)
	if err != nil {
		return nil, nil, err
	}
	if m.Ready == nil || m.Ready.Report == nil {
		return nil, nil, c.fail(fmt.Errorf("its child process sent something else than a ready side first"))
	}
	if m.Ready.Protocol != abProtocol {
		return nil, nil, c.fail(fmt.Errorf("its child process speaks A/B protocol %d, this one %d: run the same ortel binary", m.Ready.Protocol, abProtocol))
	}
	return c, m.Ready, nil
}

// readReplies decodes the child's messages into out until its output
// ends or holds something that is not a message; then out is closed.
func readReplies(r io.ReadCloser, out chan<- abMessage) {
	defer close(out)
	defer r.Close()
	dec := json.NewDecoder(bufio.NewReader(r))
	for {
		var m abReply
		err := dec.Decode(&m)
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = io.EOF
			} else {
				err = fmt.Errorf("its child process sent something that is not an A/B message: %w", err)
			}
			out <- abMessage{err: err}
			return
		}
		out <- abMessage{reply: m}
	}
}

// pid is the child's process id.
func (c *abChild) pid() int { return c.procID }

// runBlock is the side's runner: one block measured by the child.
func (c *abChild) runBlock(ctx context.Context, n int) (abBlock, int, time.Time, error) {
	start := time.Now()
	if err := c.enc.Encode(abRequest{Runs: n}); err != nil {
		c.waitExit(5 * time.Second) // a closed pipe: it has ended, or is ending
		return abBlock{}, 0, start, c.fail(fmt.Errorf("its child process ended (a block could not be sent to it: %w)", err))
	}
	m, err := c.receive(ctx, n)
	if err != nil {
		return abBlock{}, 0, start, err
	}
	w := m.Block
	if w == nil {
		return abBlock{}, 0, start, c.fail(errors.New("its child process answered a block with something else"))
	}
	blk := abBlock{lat: w.LatS, wall: w.WallS, cpu: w.CPUS, runs: len(w.LatS)}
	if w.Err != "" {
		return blk, w.Errors, start, errors.New(w.Err)
	}
	return blk, w.Errors, start, nil
}

// receive waits for the child's next message: at most the block timeout
// for a block of n runs (n 0: the ready message, which waits on ctx only).
// A child that ends, sends garbage or an error, or runs out of time is
// ended and said to have failed.
func (c *abChild) receive(ctx context.Context, n int) (abReply, error) {
	var timer <-chan time.Time
	if n > 0 {
		t := time.NewTimer(c.blockTimeout())
		defer t.Stop()
		timer = t.C
	}
	select {
	case m, ok := <-c.replies:
		switch {
		case !ok || errors.Is(m.err, io.EOF):
			c.waitExit(5 * time.Second) // its exit status and last words
			return abReply{}, c.fail(errors.New("its child process ended"))
		case m.err != nil:
			return abReply{}, c.fail(m.err)
		case m.reply.Error != "":
			c.waitExit(5 * time.Second)
			return abReply{}, c.fail(errors.New(m.reply.Error))
		}
		return m.reply, nil
	case <-ctx.Done():
		return abReply{}, c.fail(ctx.Err())
	case <-timer:
		return abReply{}, c.fail(fmt.Errorf("its child process measured nothing for %s: it was ended", c.blockTimeout()))
	}
}

func (c *abChild) blockTimeout() time.Duration {
	if c.timeout > 0 {
		return c.timeout
	}
	return time.Minute + 20*DefaultABBlockTime
}

// fail ends the child (it has failed or is no longer wanted) and returns
// cause as the side's error, with how the process ended and its last
// words on standard error.
func (c *abChild) fail(cause error) error {
	c.kill()
	err := c.errorf("%w", cause)
	if st := c.exitStatus(); st != "" {
		err = fmt.Errorf("%w (its process %s)", err, st)
	}
	if last := c.stderr.last(); last != "" && !strings.Contains(cause.Error(), last) {
		err = fmt.Errorf("%w; its last words: %s", err, last)
	}
	return err
}

// errorf is an error of the side, naming it and its library.
func (c *abChild) errorf(format string, args ...any) error {
	return fmt.Errorf("A/B side %s (ONNX Runtime library %s): %w", c.label, c.lib, fmt.Errorf(format, args...))
}

// exitStatus says how the process ended ("" when it was ended by the
// parent, or has not ended).
func (c *abChild) exitStatus() string {
	select {
	case <-c.done:
	default:
		return ""
	}
	var ee *exec.ExitError
	switch {
	case c.waitErr == nil:
		return "exited with status 0"
	case errors.As(c.waitErr, &ee):
		return ee.ProcessState.String()
	}
	return c.waitErr.Error()
}

// waitExit waits at most d for the process to exit by itself.
func (c *abChild) waitExit(d time.Duration) {
	select {
	case <-c.done:
	case <-time.After(d):
	}
}

// kill ends the process and waits for it (no zombie is left).
func (c *abChild) kill() {
	c.closeOnce.Do(func() { c.stdin.Close() })
	select {
	case <-c.done:
		return
	default:
	}
	_ = c.cmd.Process.Kill()
	<-c.done
}

// close ends the child the polite way: its input closed, it closes its
// side and exits; it is killed when it has not within ten seconds.
func (c *abChild) close() error {
	c.closeOnce.Do(func() { c.stdin.Close() })
	select {
	case <-c.done:
	case <-time.After(10 * time.Second):
		c.kill()
	}
	return nil
}

// tailWriter passes the child's standard error on, line by line with a
// prefix, and keeps its last line for errors.
type tailWriter struct {
	mu     sync.Mutex
	next   io.Writer
	prefix string
	buf    []byte
	tail   string
}

func (w *tailWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			break
		}
		line := string(w.buf[:i])
		w.buf = w.buf[i+1:]
		if strings.TrimSpace(line) != "" {
			w.tail = strings.TrimSpace(line)
		}
		if w.next != nil {
			fmt.Fprintf(w.next, "%s%s\n", w.prefix, line)
		}
	}
	return len(p), nil
}

// last is the child's last line on standard error.
func (w *tailWriter) last() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	if t := strings.TrimSpace(string(w.buf)); t != "" {
		return t
	}
	return w.tail
}
