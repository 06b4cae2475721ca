package testenv

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// Postgres is a PostgreSQL server a test started, in a temporary folder, on
// a free loopback port; it stops when the test ends.
type Postgres struct {
	// Port the server listens on, at 127.0.0.1.
	Port int
	bin  string // folder of initdb, pg_ctl, postgres and psql
	data string
	cred *syscall.Credential // run the server as this user (when root)
}

// StartPostgres starts a PostgreSQL server from Debian's postgresql package
// (scripts/install-postgres.sh installs it), or skips (locally) / fails (CI)
// when there is none. Run as root, the server runs as the postgres user,
// which the package creates: PostgreSQL refuses to run as root.
func StartPostgres(t testing.TB) *Postgres {
	t.Helper()
	bin := postgresBin()
	if bin == "" {
		Missing(t, "%s", PostgresMissing())
		return nil
	}
	p := &Postgres{bin: bin}
	// t.TempDir's folders are private to root; the server's user needs its own.
	dir, err := os.MkdirTemp("", "ortel-postgres-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			Missing(t, "PostgreSQL refuses to run as root, and there is no postgres user to run it as (%v): install the server with scripts/install-postgres.sh", err)
			return nil
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		p.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		if err := os.Chown(dir, uid, gid); err != nil {
			t.Fatal(err)
		}
	}
	p.data = filepath.Join(dir, "data")
	if out, err := p.run("initdb", "-D", p.data, "-U", "ortel", "--auth=trust", "-E", "UTF8", "--no-sync", "--no-instructions"); err != nil {
		t.Fatalf("initdb: %v\n%s", err, out)
	}
	// A free port, found by listening on it; another process could take
	// it before the server does, so a failed start tries another.
	var lastErr error
	for range 3 {
		p.Port = freePort(t)
		opts := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off", p.Port, dir)
		out, err := p.run("pg_ctl", "-D", p.data, "-l", filepath.Join(dir, "server.log"), "-o", opts, "-w", "-t", "120", "start")
		if err == nil {
			lastErr = nil
			break
		}
		log, _ := os.ReadFile(filepath.Join(dir, "server.log"))
		lastErr = fmt.Errorf("pg_ctl start: %v\n%s\nserver log:\n%s", err, out, log)
	}
	if lastErr != nil {
		t.Fatal(lastErr)
	}
	t.Cleanup(func() {
		if out, err := p.run("pg_ctl", "-D", p.data, "-m", "immediate", "-w", "stop"); err != nil {
			t.Errorf("pg_ctl stop: %v\n%s", err, out)
		}
	})
	return p
}

// Database creates a database called name and returns its URL.
func (p *Postgres) Database(t testing.TB, name string) string {
	t.Helper()
	out, err := p.run("psql", "-h", "127.0.0.1", "-p", strconv.Itoa(p.Port), "-U", "ortel", "-d", "postgres", "-v", "ON_ERROR_STOP=1",
		"-c", fmt.Sprintf(`CREATE DATABASE "%s"`, name))
	if err != nil {
		t.Fatalf("create database %s: %v\n%s", name, err, out)
	}
	return fmt.Sprintf("postgres://ortel@127.0.0.1:%d/%s?sslmode=disable", p.Port, name)
}

// run runs one of the server's programs (as the server's user), for at
// most two minutes, and returns what it printed.
func (p *Postgres) run(name string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := exec.CommandContext(ctx, filepath.Join(p.bin, name), args...)
	c.Dir = os.TempDir()
	c.Env = append(os.Environ(), "LC_ALL=C")
	if p.cred != nil {
		c.SysProcAttr = &syscall.SysProcAttr{Credential: p.cred}
	}
	return c.CombinedOutput()
}

// PostgresMissing says why StartPostgres would skip, or "" when PostgreSQL
// is installed.
func PostgresMissing() string {
	if postgresBin() != "" {
		return ""
	}
	return "needs PostgreSQL (initdb, pg_ctl): install it with scripts/install-postgres.sh"
}

// postgresBin finds the folder of initdb: on PATH, else Debian's
// /usr/lib/postgresql/VERSION/bin (newest version first).
func postgresBin() string {
	if p, err := exec.LookPath("initdb"); err == nil {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			p = r
		}
		return filepath.Dir(p)
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool {
		vi, _ := strconv.Atoi(filepath.Base(filepath.Dir(dirs[i])))
		vj, _ := strconv.Atoi(filepath.Base(filepath.Dir(dirs[j])))
		return vi > vj
	})
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d
		}
	}
	return ""
}

func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
