//go:build linux

package attach

import (
	"errors"
	"strings"
	"testing"
)

func TestEvaluate(t *testing.T) {
	all := func(string) bool { return true }
	noUprobes := func(p string) bool { return !strings.Contains(p, "uprobe") }
	ok := func() error { return nil }
	noRing := func() error { return errors.New("has no eBPF ring buffer") }
	const bpfPerfmon = 1<<capBPF | 1<<capPerfmon
	for _, tc := range []struct {
		name       string
		euid       int
		caps       uint64
		have       func(string) bool
		probe      func() error
		available  bool
		privileged bool
		reason     string
	}{
		{"root", 0, 0, all, ok, true, true, ""},
		{"capabilities", 1000, bpfPerfmon, all, ok, true, true, ""},
		{"sys_admin", 1000, 1 << capSysAdmin, all, ok, true, true, ""},
		{"CAP_BPF alone", 1000, 1 << capBPF, all, ok, false, false, "CAP_PERFMON"},
		{"user", 1000, 0, all, ok, false, false, "needs root"},
		{"no uprobes", 0, 0, noUprobes, ok, false, true, "no uprobes"},
		{"old kernel", 0, 0, all, noRing, false, true, "ring buffer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := evaluate("6.1", tc.euid, tc.caps, tc.have, tc.probe)
			if st.Available != tc.available || st.Privileged != tc.privileged || !strings.Contains(st.Reason, tc.reason) {
				t.Errorf("got %+v, want available %v, privileged %v, reason with %q", st, tc.available, tc.privileged, tc.reason)
			}
			if !st.Available && st.Reason == "" {
				t.Error("not available without a reason")
			}
		})
	}
}

func TestFindTargetFixtures(t *testing.T) {
	root := t.TempDir()
	write := func(pid, maps string) {
		t.Helper()
		dir := root + "/" + pid
		if err := mkdirWrite(dir+"/maps", maps); err != nil {
			t.Fatal(err)
		}
		if err := mkdirWrite(dir+"/comm", "python3\n"); err != nil {
			t.Fatal(err)
		}
	}
	write("100", "7f0000000000-7f0000100000 r-xp 00000000 08:01 1234 /usr/lib/python3/site-packages/onnxruntime/capi/onnxruntime_pybind11_state.cpython-311-x86_64-linux-gnu.so\n")
	write("101", "7f0000000000-7f0000100000 r-xp 00000000 08:01 1234 /usr/lib/libc.so.6\n00400000-00401000 r--p 00000000 00:00 0 [heap]\n")
	if _, err := findTarget(root, 100); !errors.Is(err, ErrPython) || !strings.Contains(err.Error(), "process 100 (python3)") {
		t.Errorf("python process: %v, want ErrPython naming the process", err)
	}
	if _, err := findTarget(root, 101); !errors.Is(err, ErrNoORT) {
		t.Errorf("process without ORT: %v, want ErrNoORT", err)
	}
	if _, err := findTarget(root, 102); err == nil || !strings.Contains(err.Error(), "no such process") {
		t.Errorf("missing process: %v", err)
	}
}
