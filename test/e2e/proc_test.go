//go:build unix

package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestProcessWaitAndLog(t *testing.T) {
	tests := []struct {
		name    string
		script  string
		wantErr bool
		wantLog string
	}{
		{"success", "echo hello; echo oops >&2", false, "hello\noops"},
		{"failure", "echo bye; exit 3", true, "bye"},
		{"environment", `echo "$E2E_X"`, false, "42"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			log := filepath.Join(t.TempDir(), "p.log")
			p, err := StartProcess(tt.name, log, []string{"E2E_X=42"}, "bash", "-c", tt.script)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			err = p.Wait(ctx)
			if (err != nil) != tt.wantErr {
				t.Fatalf("Wait() = %v, wantErr %v", err, tt.wantErr)
			}
			if err != nil && !strings.Contains(err.Error(), tt.name) {
				t.Errorf("error %q does not name the process", err)
			}
			b, _ := os.ReadFile(log)
			if got := strings.TrimSpace(string(b)); got != tt.wantLog {
				t.Errorf("log = %q, want %q", got, tt.wantLog)
			}
			if exited, _ := p.Exited(); !exited {
				t.Error("Exited() = false after Wait")
			}
		})
	}
}

// Stop ends the whole process group, children included, even one that
// ignores SIGTERM.
func TestProcessStopKillsGroup(t *testing.T) {
	tests := []struct{ name, script string }{
		{"polite", "sleep 300 & wait"},
		{"ignores TERM", "trap '' TERM; sleep 300 & wait; sleep 300"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			log := filepath.Join(t.TempDir(), "p.log")
			p, err := StartProcess(tt.name, log, nil, "bash", "-c", tt.script)
			if err != nil {
				t.Fatal(err)
			}
			if exited, _ := p.Exited(); exited {
				t.Fatal("exited at once")
			}
			if err := p.Stop(200 * time.Millisecond); err != nil {
				t.Fatal(err)
			}
			<-p.Done()
			if p.GroupAlive() {
				t.Error("processes of the group are still alive after Stop")
			}
			if err := p.Stop(time.Second); err != nil {
				t.Errorf("second Stop: %v", err)
			}
		})
	}
}

func TestProcessWaitTimeout(t *testing.T) {
	p, err := StartProcess("sleeper", filepath.Join(t.TempDir(), "p.log"), nil, "sleep", "300")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := p.Wait(ctx); err == nil || !strings.Contains(err.Error(), "did not finish") {
		t.Errorf("Wait() = %v; want a timeout error", err)
	}
	if p.GroupAlive() {
		t.Error("the process outlived its Wait timeout")
	}
}

func TestStartProcessErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := StartProcess("none", filepath.Join(dir, "a.log"), nil); err == nil {
		t.Error("an empty command must be an error")
	}
	if _, err := StartProcess("missing", filepath.Join(dir, "b.log"), nil, filepath.Join(dir, "no-such-binary")); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("error = %v; want one naming the process", err)
	}
	if _, err := StartProcess("bad log", filepath.Join(dir, "no", "such", "dir", "c.log"), nil, "true"); err == nil {
		t.Error("an unwritable log must be an error")
	}
}
