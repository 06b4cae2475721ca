package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/ortel-dev/ortel/internal/attach/discover"
	"github.com/ortel-dev/ortel/receivers/process"
)

// discovery keeps the process receiver's set equal to the processes that
// map ONNX Runtime (ortel agent --discover), saying each change once on
// stderr. Processes given with --pid are left alone: they stay watched
// until they exit, which the receiver reports itself.
type discovery struct {
	w        io.Writer // nil: quiet
	proc     *process.Receiver
	explicit map[int]bool
	every    time.Duration
	first    bool
	lastErr  string
	att      *attaching // --attach; nil without
}

// startDiscovery scans now and then every interval until ctx ends, in the
// background; the returned function waits for it to end.
func startDiscovery(ctx context.Context, w io.Writer, proc *process.Receiver, every time.Duration, explicit []int, att *attaching) (wait func()) {
	d := &discovery{w: w, proc: proc, explicit: map[int]bool{}, every: every, first: true, att: att}
	for _, pid := range explicit {
		d.explicit[pid] = true
	}
	// The agent maps ONNX Runtime itself once --attach has resolved a
	// library (it loads it to read its function table): it is not one of
	// the processes to watch or attach, unless given with --pid.
	d.explicit[os.Getpid()] = true
	tr := discover.NewTracker(proc.Root())
	var wg sync.WaitGroup
	wg.Go(func() { tr.Run(ctx, every, d.apply) })
	return wg.Wait
}

func (d *discovery) say(format string, args ...any) {
	if d.w != nil {
		fmt.Fprintf(d.w, "ortel agent: "+format+"\n", args...)
	}
}

// apply brings one scan's change to the process receiver.
func (d *discovery) apply(c discover.Change, err error) {
	if err != nil {
		if msg := err.Error(); msg != d.lastErr { // once, not every scan
			d.lastErr = msg
			d.say("%v; rescanning every %s", err, d.every)
		}
		return
	}
	d.lastErr = ""
	if d.first {
		d.first = false
		d.say("discovering processes that load ONNX Runtime every %s: %d found", d.every, len(c.Started))
		if c.Unreadable > 0 {
			d.say("%s could not be read and %s not watched (reading another user's memory map needs root or CAP_SYS_PTRACE)",
				plural(c.Unreadable, "process", "processes"), plural1(c.Unreadable, "is", "are"))
		}
	}
	for _, p := range c.Exited {
		if d.explicit[p.PID] {
			continue
		}
		_ = d.proc.Unwatch(p.PID) // closing a gone process's files fails harmlessly
		d.say("process %s exited%s", p, d.detach(p.PID))
	}
	for _, p := range c.Unloaded {
		if d.explicit[p.PID] {
			continue
		}
		_ = d.proc.Unwatch(p.PID)
		d.say("process %s no longer maps ONNX Runtime (or can no longer be read); not watched any more%s", p, d.detach(p.PID))
	}
	for _, p := range c.Started {
		if d.explicit[p.PID] {
			continue
		}
		if err := d.proc.Watch(p.PID); err != nil {
			d.say("cannot watch process %s: %v", p, err)
			continue
		}
		what := "ONNX Runtime " + p.Library
		if p.Python {
			what = "ONNX Runtime's Python binding"
		}
		d.say("watching process %s, which loaded %s%s", p, what, d.attach(p.PID))
	}
}

// attach attaches a started process with --attach, and says how it went.
func (d *discovery) attach(pid int) string {
	if d.att == nil {
		return ""
	}
	return d.att.add(pid)
}

// detach detaches a gone process with --attach, and says so.
func (d *discovery) detach(pid int) string {
	if d.att == nil {
		return ""
	}
	return d.att.remove(pid)
}

// plural is "1 process" or "3 processes".
func plural(n int, one, many string) string {
	return fmt.Sprintf("%d %s", n, plural1(n, one, many))
}

func plural1(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
