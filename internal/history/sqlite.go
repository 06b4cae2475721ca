package history

import (
	"net/url"

	// SQLite through cgo (mattn/go-sqlite3): ortel already needs cgo and a
	// C compiler for ONNX Runtime (so cross-compiling needs one either way),
	// and a program opening SQLite is 7.1 MB with it against 10.0 MB with
	// the pure-Go port (modernc.org/sqlite); cold build times measured on
	// this loaded machine did not separate the two.
	_ "github.com/mattn/go-sqlite3"
	// PostgreSQL through pgx's database/sql driver.
	_ "github.com/jackc/pgx/v5/stdlib"
)

const sqliteDriver = "sqlite3"

// sqliteDSN opens path in write-ahead-log mode (readers never wait for a
// writer), waits up to 10s for another process's write lock instead of
// failing, and takes the write lock when a transaction starts, so two
// processes migrating or recording at once queue instead of deadlocking.
func sqliteDSN(path string) string {
	u := url.URL{Path: path}
	return "file:" + u.EscapedPath() + "?_busy_timeout=10000&_journal_mode=WAL&_txlock=immediate"
}
