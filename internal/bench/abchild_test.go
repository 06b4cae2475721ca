package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ortel-dev/ortel/internal/report"
	"github.com/ortel-dev/ortel/test/testenv"
)

// fakeChildEnv makes this test binary a fake A/B side child (see
// fakeChild): a real process on real pipes, whose runs are made up.
const fakeChildEnv = "ORTEL_TEST_AB_CHILD"

func TestMain(m *testing.M) {
	if mode := os.Getenv(fakeChildEnv); mode != "" {
		os.Exit(fakeChild(mode))
	}
	os.Exit(m.Run())
}

// fakeBlock is the made-up block k (0-based) of n runs: latencies that
// are no round numbers (an inexact round trip would show), every other
// block with failed runs.
func fakeBlock(k, n int) (abBlock, int) {
	blk := abBlock{wall: 0.123456789 * float64(k+1), cpu: 0.1 / 3 * float64(k+1)}
	for i := 0; i < n; i++ {
		blk.lat = append(blk.lat, (float64(k*1000+i)+1.0/3)/1e6)
	}
	blk.runs = len(blk.lat)
	return blk, k % 2
}

// fakeChild serves blocks of fakeBlock on stdin/stdout as ServeABSide
// does; mode makes it misbehave at the third block: "die" (exit 7),
// "garbage" (a line that is no message), "truncated" (half a message,
// then exit), "hang" (never answers), "fail" (the block fails); "protocol"
// says it is ready in another protocol; "ok" behaves.
func fakeChild(mode string) int {
	enc := json.NewEncoder(os.Stdout)
	proto := abProtocol
	if mode == "protocol" {
		proto = 99
	}
	ready := abReady{Protocol: proto, ORTVersion: "9.9.9", LibraryPath: "/fake/libonnxruntime.so.1", WarmMedianS: 0.001,
		PID: os.Getpid(), Report: &report.Report{SchemaVersion: report.SchemaVersion}}
	if err := enc.Encode(abReply{Ready: &ready}); err != nil {
		return 1
	}
	k := 0
	run := func(_ context.Context, n int) (abBlock, int, time.Time, error) {
		defer func() { k++ }()
		if k == 2 {
			switch mode {
			case "die":
				fmt.Fprintln(os.Stderr, "fake child: dying at block 3")
				os.Exit(7)
			case "garbage":
				fmt.Fprintln(os.Stdout, "this is not a message")
			case "truncated":
				fmt.Fprint(os.Stdout, `{"block":{"lat_s":[0.1,`)
				os.Exit(0)
			case "hang":
				select {}
			case "fail":
				return abBlock{}, n, time.Now(), errors.New("every run of a block failed")
			}
		}
		blk, errs := fakeBlock(k, n)
		return blk, errs, time.Now(), nil
	}
	if err := serveBlocks(context.Background(), run, os.Stdin, enc); err != nil {
		return 1
	}
	return 0
}

func startFake(t *testing.T, mode string, stderr io.Writer) (*abChild, *abReady, error) {
	t.Helper()
	return startABChild(context.Background(), "B", ABChild{
		Path: os.Args[0], Args: []string{"-test.run=^$"}, Env: append(os.Environ(), fakeChildEnv+"="+mode),
		Library: "/fake/libonnxruntime.so.1", Stderr: stderr, BlockTimeout: 2 * time.Second,
	})
}

// reaped says the child's process has been waited for: no zombie left.
func reaped(t *testing.T, c *abChild) {
	t.Helper()
	select {
	case <-c.done:
	case <-time.After(30 * time.Second):
		t.Fatal("the child process was not waited for")
	}
	if c.cmd.ProcessState == nil {
		t.Error("the child process has no exit state: not reaped")
	}
}

// TestABChildRoundTrip: blocks measured in a child come back exactly as
// the child measured them (latencies to the last bit, failed runs, wall
// and CPU time), in order; closing the child ends it with status 0.
func TestABChildRoundTrip(t *testing.T) {
	var stderr testenv.SyncBuffer
	c, ready, err := startFake(t, "ok", &stderr)
	if err != nil {
		t.Fatal(err)
	}
	if ready.ORTVersion != "9.9.9" || ready.PID != c.pid() || ready.Report == nil {
		t.Errorf("ready %+v (pid %d)", ready, c.pid())
	}
	for k, n := range []int{5, 17, 200} {
		got, errs, _, err := c.runBlock(context.Background(), n)
		if err != nil {
			t.Fatalf("block %d: %v", k+1, err)
		}
		want, wantErrs := fakeBlock(k, n)
		if errs != wantErrs || got.runs != want.runs || got.wall != want.wall || got.cpu != want.cpu || !equalFloats(got.lat, want.lat) {
			t.Errorf("block %d: got %d errors, %d runs, wall %v, cpu %v; want %d, %d, %v, %v (latencies equal: %v)",
				k+1, errs, got.runs, got.wall, got.cpu, wantErrs, want.runs, want.wall, want.cpu, equalFloats(got.lat, want.lat))
		}
	}
	if err := c.close(); err != nil {
		t.Fatal(err)
	}
	reaped(t, c)
	if !c.cmd.ProcessState.Success() {
		t.Errorf("the child ended with %s, want status 0 once its input closed", c.cmd.ProcessState)
	}
}

func equalFloats(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestABChildFailures: a child that dies, sends garbage or half a
// message, hangs, or speaks another protocol gives one error naming the
// side and its library (and how the process ended), not a panic or a
// hang; the process is reaped every time. A block whose every run failed
// is the side's error, the child being fine.
func TestABChildFailures(t *testing.T) {
	for _, c := range []struct {
		mode string
		want []string
	}{
		{"die", []string{"its child process ended", "exit status 7", "fake child: dying at block 3"}},
		{"garbage", []string{"not an A/B message", "invalid character"}},
		{"truncated", []string{"not an A/B message", "unexpected EOF"}},
		{"hang", []string{"measured nothing for 2s", "it was ended"}},
		{"protocol", []string{"speaks A/B protocol 99"}},
		{"fail", []string{"every run of a block failed"}},
	} {
		t.Run(c.mode, func(t *testing.T) {
			var stderr testenv.SyncBuffer
			child, _, err := startFake(t, c.mode, &stderr)
			if err == nil {
				defer child.close()
				for k := 0; k < 3 && err == nil; k++ {
					_, _, _, err = child.runBlock(context.Background(), 5)
				}
			}
			if err == nil {
				t.Fatal("no error")
			}
			want := append([]string{"A/B side B (ONNX Runtime library /fake/libonnxruntime.so.1)"}, c.want...)
			if c.mode == "fail" {
				want = c.want // the block's own error: RunAB names the side and block
			}
			for _, w := range want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
			if child != nil && c.mode != "fail" {
				reaped(t, child)
			}
		})
	}
}

// TestABChildDoesNotStart: a child program that cannot start is the
// side's error.
func TestABChildDoesNotStart(t *testing.T) {
	_, _, err := startABChild(context.Background(), "A", ABChild{Path: "/nonexistent/ortel", Library: "/lib/x.so"})
	if err == nil || !strings.Contains(err.Error(), "A/B side A (ONNX Runtime library /lib/x.so): its child process did not start") {
		t.Fatalf("error %v", err)
	}
}

// TestABChildCancel: cancelling the comparison ends a child that is
// measuring, and reaps it.
func TestABChildCancel(t *testing.T) {
	c, _, err := startFake(t, "hang", io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	for k := 0; k < 2; k++ {
		if _, _, _, err := c.runBlock(context.Background(), 5); err != nil {
			t.Fatal(err)
		}
	}
	c.timeout = time.Hour
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(100 * time.Millisecond); cancel() }()
	if _, _, _, err := c.runBlock(ctx, 5); !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
	reaped(t, c)
}

// FuzzABReplies: whatever a child writes, reading it ends with an error
// (end of output or not a message) and never panics.
func FuzzABReplies(f *testing.F) {
	f.Add([]byte(`{"ready":{"protocol":1,"ort_version":"1.30.0","report":{}}}` + "\n" + `{"block":{"lat_s":[0.001,0.002],"errors":0,"wall_s":0.01,"cpu_s":0.01}}` + "\n"))
	f.Add([]byte(`{"block":{"lat_s":[0.1,`))
	f.Add([]byte("garbage\n"))
	f.Add([]byte(`{"error":"x"}`))
	f.Add([]byte(`{"block":{"lat_s":"no"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		ch := make(chan abMessage, 1)
		go readReplies(io.NopCloser(bytes.NewReader(data)), ch)
		var last abMessage
		n := 0
		for m := range ch {
			last = m
			n++
		}
		if n == 0 || last.err == nil {
			t.Fatalf("%d messages, last error %v: reading must end with an error", n, last.err)
		}
	})
}
