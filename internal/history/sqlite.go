package history

import (
	"net/url"

	// SQLite through cgo (mattn/go-sqlite3): ortel already needs cgo and a
	// C compiler for ONNX Runtime, the race detector leaves its C alone, and
	// it adds about 1.5 MB to the binary (the pure-Go port adds about 7 MB
	// and compiles much slower, the more so under -race).
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
