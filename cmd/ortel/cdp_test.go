package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/ortel-dev/ortel/test/testenv"
)

func findChromium(t *testing.T) string { return testenv.Chromium(t) }

// cdp drives headless Chromium over the DevTools protocol on a pipe
// (--remote-debugging-pipe: JSON messages ended by a NUL byte, fd 3 in,
// fd 4 out), so no WebSocket library is needed.
type cdp struct {
	t       *testing.T
	w       *os.File
	mu      sync.Mutex
	next    int
	waiting map[int]chan cdpReply
	errs    []string // console errors, exceptions, error log entries
}

type cdpReply struct {
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Message string `json:"message"`
	} `json:"error"`
}

func startCDP(t *testing.T, browser string) *cdp {
	t.Helper()
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage",
		"--disable-background-timer-throttling", "--disable-renderer-backgrounding",
		"--user-data-dir="+t.TempDir(), "--window-size=1280,900", "--remote-debugging-pipe", "about:blank")
	cmd.ExtraFiles = []*os.File{inR, outW}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	inR.Close()
	outW.Close()
	c := &cdp{t: t, w: inW, waiting: map[int]chan cdpReply{}}
	readerDone := make(chan struct{})
	go func() {
		defer close(readerDone)
		br := bufio.NewReader(outR)
		for {
			msg, err := br.ReadBytes(0)
			if err != nil {
				return
			}
			c.dispatch(msg[:len(msg)-1])
		}
	}()
	t.Cleanup(func() {
		inW.Close()
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		outR.Close()
		<-readerDone
	})
	return c
}

func (c *cdp) dispatch(msg []byte) {
	var m struct {
		ID     int             `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
		cdpReply
	}
	if json.Unmarshal(msg, &m) != nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if m.ID != 0 {
		if ch := c.waiting[m.ID]; ch != nil {
			ch <- m.cdpReply
			delete(c.waiting, m.ID)
		}
		return
	}
	switch m.Method {
	case "Runtime.exceptionThrown":
		c.errs = append(c.errs, "exception: "+string(m.Params))
	case "Runtime.consoleAPICalled":
		var p struct {
			Type string `json:"type"`
		}
		_ = json.Unmarshal(m.Params, &p)
		if p.Type == "error" || p.Type == "assert" {
			c.errs = append(c.errs, "console: "+string(m.Params))
		}
	case "Log.entryAdded":
		var p struct {
			Entry struct {
				Level string `json:"level"`
			} `json:"entry"`
		}
		_ = json.Unmarshal(m.Params, &p)
		if p.Entry.Level == "error" {
			c.errs = append(c.errs, "log: "+string(m.Params))
		}
	}
}

// call sends one command (on session, when not empty) and decodes its
// result into out.
func (c *cdp) call(session, method string, params, out any) {
	c.t.Helper()
	c.mu.Lock()
	c.next++
	id := c.next
	ch := make(chan cdpReply, 1)
	c.waiting[id] = ch
	c.mu.Unlock()
	msg := map[string]any{"id": id, "method": method, "params": params}
	if session != "" {
		msg["sessionId"] = session
	}
	b, _ := json.Marshal(msg)
	if _, err := c.w.Write(append(b, 0)); err != nil {
		c.t.Fatalf("cdp %s: %v", method, err)
	}
	select {
	case r := <-ch:
		if r.Error != nil {
			c.t.Fatalf("cdp %s: %s", method, r.Error.Message)
		}
		if out != nil {
			if err := json.Unmarshal(r.Result, out); err != nil {
				c.t.Fatalf("cdp %s: %v", method, err)
			}
		}
	case <-time.After(60 * time.Second):
		c.t.Fatalf("cdp %s: no answer in 60s", method)
	}
}

// open makes a page, attaches to it and turns its error events on.
func (c *cdp) open() string {
	var tgt struct {
		TargetID string `json:"targetId"`
	}
	c.call("", "Target.createTarget", map[string]any{"url": "about:blank"}, &tgt)
	var att struct {
		SessionID string `json:"sessionId"`
	}
	c.call("", "Target.attachToTarget", map[string]any{"targetId": tgt.TargetID, "flatten": true}, &att)
	for _, m := range []string{"Runtime.enable", "Log.enable", "Page.enable"} {
		c.call(att.SessionID, m, map[string]any{}, nil)
	}
	return att.SessionID
}

// eval evaluates a JavaScript expression and decodes its value into out.
func (c *cdp) eval(session, expr string, out any) {
	c.t.Helper()
	var r struct {
		Result struct {
			Value json.RawMessage `json:"value"`
		} `json:"result"`
		ExceptionDetails json.RawMessage `json:"exceptionDetails"`
	}
	c.call(session, "Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true}, &r)
	if r.ExceptionDetails != nil {
		c.t.Fatalf("evaluate %s: %s", expr, r.ExceptionDetails)
	}
	if err := json.Unmarshal(r.Result.Value, out); err != nil {
		c.t.Fatalf("evaluate %s: %v (value %s)", expr, err, r.Result.Value)
	}
}

func (c *cdp) screenshot(session string) []byte {
	c.t.Helper()
	var r struct {
		Data string `json:"data"`
	}
	c.call(session, "Page.captureScreenshot", map[string]any{"format": "png"}, &r)
	b, err := base64.StdEncoding.DecodeString(r.Data)
	if err != nil {
		c.t.Fatal(err)
	}
	return b
}

func (c *cdp) errors() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.errs...)
}

// waitFor evaluates expr (a boolean) until it is true, up to d; an
// expression that throws (the page is still loading) counts as false.
func (c *cdp) waitFor(ctx context.Context, session, expr string, d time.Duration) {
	c.t.Helper()
	deadline := time.Now().Add(d)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		var ok bool
		c.eval(session, "(() => { try { return !!("+expr+"); } catch (e) { return false; } })()", &ok)
		if ok {
			return
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("after %s still not true: %s", d, expr)
		}
		select {
		case <-ctx.Done():
			c.t.Fatal(ctx.Err())
		case <-tick.C:
		}
	}
}
