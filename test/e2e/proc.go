//go:build unix

package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Process is a child process with its output in a log file. It runs in a
// process group of its own, so Stop ends whatever it started too.
type Process struct {
	Name    string
	LogPath string

	cmd  *exec.Cmd
	log  *os.File
	done chan struct{}
	err  error // the exit status, valid once done is closed
}

// StartProcess starts argv with env added to the current environment, its
// stdout and stderr going to logPath.
func StartProcess(name, logPath string, env []string, argv ...string) (*Process, error) {
	if len(argv) == 0 {
		return nil, fmt.Errorf("start %s: no command", name)
	}
	log, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		log.Close()
		return nil, fmt.Errorf("start %s (%s): %w", name, argv[0], err)
	}
	p := &Process{Name: name, LogPath: logPath, cmd: cmd, log: log, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		log.Close()
		close(p.done)
	}()
	return p, nil
}

// Pid returns the process id, which is also its process group id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Done is closed when the process has exited.
func (p *Process) Done() <-chan struct{} { return p.done }

// Wait waits for the process to exit and returns its exit error. When ctx
// ends first, the process group is killed and the context's error returned.
func (p *Process) Wait(ctx context.Context) error {
	select {
	case <-p.done:
		if p.err != nil {
			return fmt.Errorf("%s: %w", p.Name, p.err)
		}
		return nil
	case <-ctx.Done():
		_ = p.Stop(5 * time.Second)
		return fmt.Errorf("%s did not finish in time: %w", p.Name, ctx.Err())
	}
}

// Exited reports whether the process has exited, and how.
func (p *Process) Exited() (bool, error) {
	select {
	case <-p.done:
		return true, p.err
	default:
		return false, nil
	}
}

// Stop asks the process group to end (SIGTERM), kills it (SIGKILL) when it
// has not within grace, and waits until the process is gone. Every process
// left in the group is killed too. Stopping a process that has exited is a
// no-op apart from that sweep.
func (p *Process) Stop(grace time.Duration) error {
	pgid := p.cmd.Process.Pid
	select {
	case <-p.done:
	default:
		_ = syscall.Kill(-pgid, syscall.SIGTERM)
		t := time.NewTimer(grace)
		defer t.Stop()
		select {
		case <-p.done:
		case <-t.C:
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
			<-p.done
		}
	}
	// Children that outlived the leader.
	if err := syscall.Kill(-pgid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("stop %s: %w", p.Name, err)
	}
	// SIGKILL is delivered asynchronously: give the kernel a moment.
	deadline := time.Now().Add(2 * time.Second)
	for p.GroupAlive() {
		if time.Now().After(deadline) {
			return fmt.Errorf("stop %s: processes of group %d still run after SIGKILL", p.Name, pgid)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return nil
}

// GroupAlive reports whether any process of the group is still running.
// Zombies (dead, waiting to be reaped by a parent that may never do it)
// count as gone.
func (p *Process) GroupAlive() bool {
	pgid := p.cmd.Process.Pid
	if members, ok := groupMembers(pgid); ok {
		return len(members) > 0
	}
	err := syscall.Kill(-pgid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// groupMembers lists the live (not zombie) processes of a process group
// from /proc; ok is false where /proc cannot be read.
func groupMembers(pgid int) (pids []int, ok bool) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, false
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue // gone meanwhile
		}
		// pid (comm) state ppid pgrp ...; comm may hold spaces and parens.
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(b[i+1:]))
		if len(f) < 3 || f[0] == "Z" || f[0] == "X" {
			continue
		}
		if g, err := strconv.Atoi(f[2]); err == nil && g == pgid {
			pids = append(pids, pid)
		}
	}
	return pids, true
}
