//go:build !unix

package e2e

import (
	"context"
	"errors"
	"time"
)

// ErrUnsupported reports that the harness runs on Unix-like systems only.
var ErrUnsupported = errors.New("the e2e harness runs on Unix-like systems only")

// Process is a child process; see proc.go.
type Process struct {
	Name    string
	LogPath string
}

// StartProcess is not supported on this platform.
func StartProcess(name, logPath string, env []string, argv ...string) (*Process, error) {
	return nil, ErrUnsupported
}

func (p *Process) Pid() int                       { return 0 }
func (p *Process) Done() <-chan struct{}          { return nil }
func (p *Process) Wait(ctx context.Context) error { return ErrUnsupported }
func (p *Process) Exited() (bool, error)          { return true, ErrUnsupported }
func (p *Process) Stop(grace time.Duration) error { return nil }
func (p *Process) GroupAlive() bool               { return false }
