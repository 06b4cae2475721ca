package history

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"
)

// migration is one step of the schema. Steps are numbered from 1, applied
// in order, each once, each in its own transaction with the row that
// records it in schema_migrations, so a failed step leaves the store as it
// was. The same steps run on SQLite and PostgreSQL: {{id}} is the dialect's
// auto-numbered key column.
type migration struct {
	version     int
	description string
	sql         []string
}

var migrations = []migration{
	{1, "runs, their metrics and their op types' self time", []string{
		`CREATE TABLE runs (
			id {{id}},
			fingerprint TEXT NOT NULL UNIQUE,
			model TEXT NOT NULL,
			model_sha256 TEXT NOT NULL,
			workload TEXT NOT NULL,
			machine TEXT NOT NULL,
			host TEXT NOT NULL,
			started_us BIGINT NOT NULL,
			recorded_us BIGINT NOT NULL,
			commit_id TEXT NOT NULL,
			tool TEXT NOT NULL,
			source TEXT NOT NULL,
			settings TEXT NOT NULL
		)`,
		`CREATE TABLE metrics (
			run_id BIGINT NOT NULL REFERENCES runs(id),
			name TEXT NOT NULL,
			value DOUBLE PRECISION NOT NULL,
			lower_bound DOUBLE PRECISION,
			upper_bound DOUBLE PRECISION,
			PRIMARY KEY (run_id, name)
		)`,
		`CREATE TABLE op_times (
			run_id BIGINT NOT NULL REFERENCES runs(id),
			op_type TEXT NOT NULL,
			provider TEXT NOT NULL,
			self_s DOUBLE PRECISION NOT NULL,
			calls BIGINT NOT NULL,
			PRIMARY KEY (run_id, op_type, provider)
		)`,
	}},
	{2, "index of runs by series and time", []string{
		`CREATE INDEX runs_series_time ON runs (model, workload, machine, started_us)`,
	}},
}

// SchemaVersion is the newest schema version this ortel writes.
func SchemaVersion() int { return migrations[len(migrations)-1].version }

// migrate brings the store's schema up to date. It is safe to run again,
// and from several processes at once: on PostgreSQL an advisory lock
// orders them, on SQLite the write lock taken at the transaction's start.
func (s *Store) migrate(ctx context.Context) error {
	for _, m := range migrations {
		if err := s.apply(ctx, m); err != nil {
			return fmt.Errorf("history %s: schema version %d (%s): %w", s.where, m.version, m.description, err)
		}
	}
	return nil
}

func (s *Store) apply(ctx context.Context, m migration) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if s.dialect.lock != "" {
		if _, err := tx.ExecContext(ctx, s.dialect.lock); err != nil {
			return err
		}
	}
	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version INTEGER PRIMARY KEY,
		description TEXT NOT NULL,
		applied_us BIGINT NOT NULL
	)`); err != nil {
		return err
	}
	var n int
	if err := tx.QueryRowContext(ctx, s.q(`SELECT COUNT(*) FROM schema_migrations WHERE version = ?`), m.version).Scan(&n); err != nil {
		return err
	}
	if n > 0 {
		return nil
	}
	for _, stmt := range m.sql {
		if _, err := tx.ExecContext(ctx, strings.ReplaceAll(stmt, "{{id}}", s.dialect.idColumn)); err != nil {
			return err
		}
	}
	if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO schema_migrations (version, description, applied_us) VALUES (?, ?, ?)`),
		m.version, m.description, time.Now().UnixMicro()); err != nil {
		return err
	}
	return tx.Commit()
}

// Version returns the store's schema version: the newest migration applied.
func (s *Store) Version(ctx context.Context) (int, error) {
	var v sql.NullInt64
	if err := s.db.QueryRowContext(ctx, `SELECT MAX(version) FROM schema_migrations`).Scan(&v); err != nil {
		return 0, fmt.Errorf("history %s: read the schema version: %w", s.where, err)
	}
	return int(v.Int64), nil
}
