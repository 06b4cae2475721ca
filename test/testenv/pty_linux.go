package testenv

import (
	"fmt"
	"os"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// PTY opens a pseudo-terminal pair: what is written to the terminal
// end (tty) is read from the other (ptmx); both close when the test ends.
func PTY(t testing.TB) (ptmx, tty *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		Missing(t, "no pseudo-terminals here: %v", err)
	}
	t.Cleanup(func() { m.Close() })
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatalf("unlock the pseudo-terminal: %v", err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatalf("pseudo-terminal number: %v", err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("open the terminal end: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return m, s
}

// RecordPTY opens a pseudo-terminal (PTY) and records what its terminal
// end receives. output closes the terminal end, waits until everything
// written to it has been read, and returns it; call it once the writers
// are done.
func RecordPTY(t testing.TB) (tty *os.File, output func() string) {
	t.Helper()
	ptmx, tty := PTY(t)
	var got SyncBuffer
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 4096)
		for {
			n, err := ptmx.Read(buf)
			got.Write(buf[:n])
			if err != nil {
				return
			}
		}
	}()
	return tty, func() string {
		tty.Close()
		<-done
		return got.String()
	}
}
