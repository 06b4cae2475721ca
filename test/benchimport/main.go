// Command bench-import measures `ortel import` on a large synthetic profile
// made of real PaddleOCR det runs (ONNX Runtime 1.30.0, with mem_* args),
// against encoding/json and Python's json.load reading the same file in the
// same invocation: throughput, peak RSS (the child's getrusage), and spans
// written against the profile's operator events. It is `make bench-import`;
// the profiles it generates go under .cache/bench-import (never committed).
package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/ortel-dev/ortel/internal/profimport"
)

func main() {
	size := flag.Int64("size", 1<<30, "size of the large profile, bytes")
	small := flag.Int64("small", 3<<20, "size of the small profile, bytes")
	dir := flag.String("dir", ".cache/bench-import", "where the profiles and outputs go")
	ortel := flag.String("ortel", "bin/ortel", "the ortel binary")
	src := flag.String("src", "instrument/profile/testdata/det_ort1.30.0.json.gz", "real profile to repeat")
	python := flag.Bool("python", true, "also time python3 json.load")
	decode := flag.String("decode-json", "", "internal: decode this file with encoding/json and exit")
	flag.Parse()
	if *decode != "" {
		if err := decodeJSON(*decode); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return
	}
	if err := run(*dir, *ortel, *src, *size, *small, *python); err != nil {
		fmt.Fprintln(os.Stderr, "bench-import:", err)
		os.Exit(1)
	}
}

type result struct {
	wall   time.Duration
	cpu    time.Duration // user + system
	maxRSS int64         // bytes
	out    string
}

func (r result) mbps(size int64) float64 { return float64(size) / 1e6 / r.wall.Seconds() }

// child runs a command and returns its wall time and peak RSS.
func child(name string, args ...string) (result, error) {
	cmd := exec.Command(name, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	t0 := time.Now()
	err := cmd.Run()
	r := result{wall: time.Since(t0), out: out.String()}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		r.maxRSS = ru.Maxrss * 1024
		r.cpu = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	if err != nil {
		return r, fmt.Errorf("%s %s: %w\n%s", name, strings.Join(args, " "), err, r.out)
	}
	return r, nil
}

func genProfile(path, src string, size int64) (profimport.SynthCounts, error) {
	f, err := os.Open(src)
	if err != nil {
		return profimport.SynthCounts{}, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return profimport.SynthCounts{}, err
	}
	out, err := os.Create(path)
	if err != nil {
		return profimport.SynthCounts{}, err
	}
	c, err := profimport.Synthesize(out, zr, profimport.SynthOptions{Bytes: size})
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return c, err
}

var counts = regexp.MustCompile(`(\d+) runs, (\d+) of (\d+) operator spans, (\d+) other spans written`)

func importOnce(ortel, dir, prof string) (result, []int64, error) {
	r, err := child(ortel, "import", "--overwrite", "--model", "det", "--start", "2026-11-22T01:05:14Z",
		"--out", filepath.Join(dir, "out"), prof)
	if err != nil {
		return r, nil, err
	}
	m := counts.FindStringSubmatch(r.out)
	if m == nil {
		return r, nil, fmt.Errorf("no counts in the output of ortel import:\n%s", r.out)
	}
	var n []int64
	for _, s := range m[1:] {
		v, _ := strconv.ParseInt(s, 10, 64)
		n = append(n, v)
	}
	return r, n, nil
}

func run(dir, ortel, src string, size, small int64, python bool) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	smallPath, bigPath := filepath.Join(dir, "small.json"), filepath.Join(dir, "large.json")
	if _, err := genProfile(smallPath, src, small); err != nil {
		return err
	}
	t0 := time.Now()
	c, err := genProfile(bigPath, src, size)
	if err != nil {
		return err
	}
	fmt.Printf("generated %s: %.1f MB, %d runs, %d operator events (%.1f s)\n",
		bigPath, float64(c.Bytes)/1e6, c.Runs, c.NodeEvents, time.Since(t0).Seconds())
	load := func() string {
		b, _ := os.ReadFile("/proc/loadavg")
		return strings.Join(strings.Fields(string(b))[:3], " ")
	}
	fmt.Printf("load average before: %s\n", load())

	rs, _, err := importOnce(ortel, dir, smallPath)
	if err != nil {
		return err
	}
	rb, n, err := importOnce(ortel, dir, bigPath)
	if err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	rj, err := child(self, "-decode-json", bigPath)
	if err != nil {
		return err
	}
	var rp result
	if python {
		if rp, err = child("python3", "-c", "import json,sys; json.load(open(sys.argv[1]))", bigPath); err != nil {
			return err
		}
	}
	outInfo, _ := os.Stat(filepath.Join(dir, "out", "traces.jsonl"))
	fmt.Printf("load average after: %s\n\n", load())
	row := func(name string, r result) {
		fmt.Printf("%-28s %10.2f %10.1f %10.2f %14.1f %12.1f\n", name, r.wall.Seconds(), r.mbps(c.Bytes),
			r.cpu.Seconds(), float64(c.Bytes)/1e6/r.cpu.Seconds(), float64(r.maxRSS)/1e6)
	}
	fmt.Printf("%-28s %10s %10s %10s %14s %12s\n", "reader of the same file", "wall s", "MB/s", "CPU s", "MB per CPU s", "peak RSS MB")
	row("ortel import -> file", rb)
	row("encoding/json (Decoder)", rj)
	if python {
		row("python3 json.load", rp)
	}
	fmt.Printf("\nortel import: %.1fx encoding/json", rj.wall.Seconds()/rb.wall.Seconds())
	if python {
		fmt.Printf(", %.1fx python json.load", rp.wall.Seconds()/rb.wall.Seconds())
	}
	fmt.Println()
	fmt.Printf("peak RSS: small profile (%.1f MB) %.1f MB, large profile %.1f MB: growth %.1f MB (budget 32 MB)\n",
		float64(small)/1e6, float64(rs.maxRSS)/1e6, float64(rb.maxRSS)/1e6, float64(rb.maxRSS-rs.maxRSS)/1e6)
	fmt.Printf("spans written: %d runs (profile: %d), %d operator spans of %d operator events read (profile: %d), %d other; traces file %.1f MB\n",
		n[0], c.Runs, n[1], n[2], c.NodeEvents, n[3], float64(outInfo.Size())/1e6)
	var fail []string
	if n[0] != c.Runs || n[1] != c.NodeEvents || n[2] != c.NodeEvents {
		fail = append(fail, "spans lost")
	}
	if rb.maxRSS-rs.maxRSS > 32<<20 {
		fail = append(fail, "RSS growth over 32 MB")
	}
	if rb.mbps(c.Bytes) < 100 {
		fail = append(fail, fmt.Sprintf("under 100 MB/s (load average %s)", load()))
	}
	if len(fail) > 0 {
		fmt.Printf("NOT MET: %s\n", strings.Join(fail, "; "))
	} else {
		fmt.Println("met: 0 spans lost, RSS growth within 32 MB, at least 100 MB/s")
	}
	return nil
}

// event mirrors one ORT trace event for encoding/json.
type event struct {
	Cat  string         `json:"cat"`
	Name string         `json:"name"`
	Ph   string         `json:"ph"`
	PID  int64          `json:"pid"`
	TID  int64          `json:"tid"`
	TS   int64          `json:"ts"`
	Dur  int64          `json:"dur"`
	Args map[string]any `json:"args"`
}

// decodeJSON streams the events of a profile through encoding/json, one at
// a time (the fair comparison: constant memory, like ortel).
func decodeJSON(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	dec := json.NewDecoder(f)
	if _, err := dec.Token(); err != nil {
		return err
	}
	n := 0
	for dec.More() {
		var e event
		if err := dec.Decode(&e); err != nil {
			return err
		}
		n++
	}
	_, err = dec.Token()
	if err == io.EOF {
		err = nil
	}
	return err
}
