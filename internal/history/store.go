package history

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/ortel-dev/ortel/internal/analysis"
)

// Store is a history: a SQLite file (the default) or a PostgreSQL
// database (shared by a team), with the same schema in both. It is safe
// for concurrent use, and several processes may record into one store at
// once.
type Store struct {
	db      *sql.DB
	dialect dialect
	// where names the store in errors: the file, or the database URL
	// without its password.
	where string
	path  string // SQLite file; "" for PostgreSQL
}

// dialect is what differs between the databases.
type dialect struct {
	name     string // "sqlite" or "postgres"
	idColumn string // the auto-numbered primary key column
	lock     string // statement that serializes migrations, run in their transaction
	dollar   bool   // placeholders $1, $2 instead of ?
}

var (
	sqliteDialect   = dialect{name: "sqlite", idColumn: "INTEGER PRIMARY KEY AUTOINCREMENT"}
	postgresDialect = dialect{name: "postgres", idColumn: "BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY",
		lock: "SELECT pg_advisory_xact_lock(7072657473)", dollar: true}
)

// IsPostgres reports whether location names a PostgreSQL database
// (postgres:// or postgresql:// URL) rather than a SQLite file.
func IsPostgres(location string) bool {
	l := strings.ToLower(location)
	return strings.HasPrefix(l, "postgres://") || strings.HasPrefix(l, "postgresql://")
}

// Open opens the history at location, creating it (a SQLite file and its
// folder, or the tables in an existing PostgreSQL database) when needed,
// and brings its schema up to date.
func Open(ctx context.Context, location string) (*Store, error) {
	if strings.TrimSpace(location) == "" {
		return nil, errors.New("no history given: name a SQLite file or a postgres:// URL")
	}
	var s *Store
	var err error
	if IsPostgres(location) {
		s, err = openPostgres(location)
	} else {
		s, err = openSQLite(location)
	}
	if err != nil {
		return nil, err
	}
	if err := s.db.PingContext(ctx); err != nil {
		s.db.Close()
		return nil, fmt.Errorf("history %s: %w", s.where, err)
	}
	if err := s.checkNotNewer(ctx); err != nil {
		s.db.Close()
		return nil, err
	}
	if err := s.migrate(ctx); err != nil {
		s.db.Close()
		return nil, err
	}
	return s, nil
}

func openSQLite(path string) (*Store, error) {
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("history %s: create its folder: %w", path, err)
		}
	}
	db, err := sql.Open(sqliteDriver, sqliteDSN(path))
	if err != nil {
		return nil, fmt.Errorf("history %s: %w", path, err)
	}
	return &Store{db: db, dialect: sqliteDialect, where: path, path: path}, nil
}

func openPostgres(location string) (*Store, error) {
	where := location
	if u, err := url.Parse(location); err == nil {
		where = u.Redacted()
	}
	db, err := sql.Open("pgx", location)
	if err != nil {
		return nil, fmt.Errorf("history %s: %w", where, err)
	}
	db.SetMaxOpenConns(4)
	return &Store{db: db, dialect: postgresDialect, where: where}, nil
}

// checkNotNewer refuses a store written by a newer ortel, whose schema
// this one does not know.
func (s *Store) checkNotNewer(ctx context.Context) error {
	var v sql.NullInt64
	err := s.db.QueryRowContext(ctx, `SELECT MAX(version) FROM schema_migrations`).Scan(&v)
	if err != nil {
		return nil // no migration table yet: a new store
	}
	if int(v.Int64) > SchemaVersion() {
		return fmt.Errorf("history %s has schema version %d, newer than this ortel's %d: use a newer ortel", s.where, v.Int64, SchemaVersion())
	}
	return nil
}

// Close closes the store.
func (s *Store) Close() error { return s.db.Close() }

// Where names the store: its file, or its URL without the password.
func (s *Store) Where() string { return s.where }

// q rewrites ? placeholders as $1, $2, ... for PostgreSQL.
func (s *Store) q(query string) string {
	if !s.dialect.dollar {
		return query
	}
	var b strings.Builder
	n := 0
	for _, c := range query {
		if c == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(c)
	}
	return b.String()
}

// Record adds run to the history and returns its ID. A run already there
// (the same report recorded twice) is not added again: added is then false
// and id is the run recorded before.
func (s *Store) Record(ctx context.Context, run Run) (id int64, added bool, err error) {
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		var e error
		id, added, e = s.record(ctx, tx, run)
		return e
	})
	if err != nil {
		return 0, false, fmt.Errorf("history %s: record the run of %s at %s: %w", s.where, run.Model, run.Time.Format(time.RFC3339), err)
	}
	return id, added, nil
}

func (s *Store) inTx(ctx context.Context, f func(*sql.Tx) error) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := f(tx); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}

func (s *Store) record(ctx context.Context, tx *sql.Tx, run Run) (int64, bool, error) {
	var id int64
	err := tx.QueryRowContext(ctx, s.q(`SELECT id FROM runs WHERE fingerprint = ?`), run.Fingerprint).Scan(&id)
	if err == nil {
		return id, false, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return 0, false, err
	}
	settings, err := json.Marshal(run.Settings)
	if err != nil {
		return 0, false, err
	}
	err = tx.QueryRowContext(ctx, s.q(`INSERT INTO runs (fingerprint, model, model_sha256, workload, machine, host,
		started_us, recorded_us, commit_id, tool, source, settings) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`),
		run.Fingerprint, run.Model, run.ModelSHA256, run.Workload, run.Machine, run.Host,
		run.Time.UnixMicro(), time.Now().UnixMicro(), run.Commit, run.Tool, run.Source, string(settings)).Scan(&id)
	if err != nil {
		return 0, false, err
	}
	for name, v := range run.Metrics {
		if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO metrics (run_id, name, value, lower_bound, upper_bound) VALUES (?, ?, ?, ?, ?)`),
			id, name, v.V, v.Lower, v.Upper); err != nil {
			return 0, false, err
		}
	}
	for _, o := range run.OpTypes {
		if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO op_times (run_id, op_type, provider, self_s, calls) VALUES (?, ?, ?, ?, ?)`),
			id, o.OpType, o.Provider, o.SelfS, o.Calls); err != nil {
			return 0, false, err
		}
	}
	return id, true, nil
}

// Filter selects runs. Empty fields select everything.
type Filter struct {
	// Model, Workload and Machine select a series, or part of one.
	Model, Workload, Machine string
	// Since and Until bound the runs' start times.
	Since, Until time.Time
}

// Runs returns the runs f selects, oldest first, with their metrics and op
// types.
func (s *Store) Runs(ctx context.Context, f Filter) ([]Run, error) {
	where, args := f.where()
	rows, err := s.db.QueryContext(ctx, s.q(`SELECT id, fingerprint, model, model_sha256, workload, machine, host,
		started_us, commit_id, tool, source, settings FROM runs`+where+` ORDER BY started_us, id`), args...)
	if err != nil {
		return nil, fmt.Errorf("history %s: read runs: %w", s.where, err)
	}
	var runs []Run
	byID := map[int64]int{}
	for rows.Next() {
		var r Run
		var us int64
		var settings string
		if err := rows.Scan(&r.ID, &r.Fingerprint, &r.Model, &r.ModelSHA256, &r.Workload, &r.Machine, &r.Host,
			&us, &r.Commit, &r.Tool, &r.Source, &settings); err != nil {
			rows.Close()
			return nil, fmt.Errorf("history %s: read runs: %w", s.where, err)
		}
		r.Time = time.UnixMicro(us).UTC()
		if err := json.Unmarshal([]byte(settings), &r.Settings); err != nil {
			r.Settings = []analysis.Setting{{Name: "settings", Value: "unreadable: " + err.Error()}}
		}
		r.Metrics = map[string]Value{}
		byID[r.ID] = len(runs)
		runs = append(runs, r)
	}
	if err := rows.Close(); err != nil {
		return nil, fmt.Errorf("history %s: read runs: %w", s.where, err)
	}
	if len(runs) == 0 {
		return nil, nil
	}
	if err := s.readMetrics(ctx, where, args, runs, byID); err != nil {
		return nil, err
	}
	if err := s.readOpTimes(ctx, where, args, runs, byID); err != nil {
		return nil, err
	}
	return runs, nil
}

func (f Filter) where() (string, []any) {
	var conds []string
	var args []any
	add := func(cond string, v any) {
		conds = append(conds, cond)
		args = append(args, v)
	}
	if f.Model != "" {
		add("model = ?", f.Model)
	}
	if f.Workload != "" {
		add("workload = ?", f.Workload)
	}
	if f.Machine != "" {
		add("machine = ?", f.Machine)
	}
	if !f.Since.IsZero() {
		add("started_us >= ?", f.Since.UnixMicro())
	}
	if !f.Until.IsZero() {
		add("started_us <= ?", f.Until.UnixMicro())
	}
	if len(conds) == 0 {
		return "", nil
	}
	return " WHERE " + strings.Join(conds, " AND "), args
}

func (s *Store) readMetrics(ctx context.Context, where string, args []any, runs []Run, byID map[int64]int) error {
	rows, err := s.db.QueryContext(ctx, s.q(`SELECT run_id, name, value, lower_bound, upper_bound FROM metrics
		WHERE run_id IN (SELECT id FROM runs`+where+`)`), args...)
	if err != nil {
		return fmt.Errorf("history %s: read metrics: %w", s.where, err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var name string
		var v Value
		var lo, hi sql.NullFloat64
		if err := rows.Scan(&id, &name, &v.V, &lo, &hi); err != nil {
			return fmt.Errorf("history %s: read metrics: %w", s.where, err)
		}
		if lo.Valid {
			v.Lower = &lo.Float64
		}
		if hi.Valid {
			v.Upper = &hi.Float64
		}
		if i, ok := byID[id]; ok {
			runs[i].Metrics[name] = v
		}
	}
	return rows.Err()
}

func (s *Store) readOpTimes(ctx context.Context, where string, args []any, runs []Run, byID map[int64]int) error {
	rows, err := s.db.QueryContext(ctx, s.q(`SELECT run_id, op_type, provider, self_s, calls FROM op_times
		WHERE run_id IN (SELECT id FROM runs`+where+`) ORDER BY run_id, op_type, provider`), args...)
	if err != nil {
		return fmt.Errorf("history %s: read op types: %w", s.where, err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var o OpTime
		if err := rows.Scan(&id, &o.OpType, &o.Provider, &o.SelfS, &o.Calls); err != nil {
			return fmt.Errorf("history %s: read op types: %w", s.where, err)
		}
		if i, ok := byID[id]; ok {
			runs[i].OpTypes = append(runs[i].OpTypes, o)
		}
	}
	return rows.Err()
}

// SeriesKey names a series: the runs of one model, workload and machine.
type SeriesKey struct {
	Model    string `json:"model"`
	Workload string `json:"workload"`
	Machine  string `json:"machine"`
}

func (k SeriesKey) String() string { return k.Model + " · " + k.Workload + " · " + k.Machine }

// SeriesInfo summarizes one series for a listing.
type SeriesInfo struct {
	SeriesKey
	Runs        int       `json:"runs"`
	First, Last time.Time `json:"-"`
}

// Series lists the store's series, by model, workload and machine.
func (s *Store) Series(ctx context.Context) ([]SeriesInfo, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT model, workload, machine, COUNT(*), MIN(started_us), MAX(started_us)
		FROM runs GROUP BY model, workload, machine ORDER BY model, workload, machine`)
	if err != nil {
		return nil, fmt.Errorf("history %s: list series: %w", s.where, err)
	}
	defer rows.Close()
	var out []SeriesInfo
	for rows.Next() {
		var si SeriesInfo
		var first, last int64
		if err := rows.Scan(&si.Model, &si.Workload, &si.Machine, &si.Runs, &first, &last); err != nil {
			return nil, fmt.Errorf("history %s: list series: %w", s.where, err)
		}
		si.First, si.Last = time.UnixMicro(first).UTC(), time.UnixMicro(last).UTC()
		out = append(out, si)
	}
	return out, rows.Err()
}

// Prune deletes the runs that started before cutoff, or, with keep > 0,
// all but the newest keep runs of each series (both when both are given),
// and returns how many it deleted.
func (s *Store) Prune(ctx context.Context, cutoff time.Time, keep int) (int, error) {
	var ids []int64
	if !cutoff.IsZero() {
		got, err := s.ids(ctx, s.q(`SELECT id FROM runs WHERE started_us < ?`), cutoff.UnixMicro())
		if err != nil {
			return 0, err
		}
		ids = append(ids, got...)
	}
	if keep > 0 {
		got, err := s.ids(ctx, s.q(`SELECT id FROM (SELECT id, ROW_NUMBER() OVER (PARTITION BY model, workload, machine
			ORDER BY started_us DESC, id DESC) AS n FROM runs) ranked WHERE n > ?`), keep)
		if err != nil {
			return 0, err
		}
		ids = append(ids, got...)
	}
	seen := map[int64]bool{}
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		for _, id := range ids {
			if seen[id] {
				continue
			}
			seen[id] = true
			for _, stmt := range []string{`DELETE FROM metrics WHERE run_id = ?`, `DELETE FROM op_times WHERE run_id = ?`, `DELETE FROM runs WHERE id = ?`} {
				if _, err := tx.ExecContext(ctx, s.q(stmt), id); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("history %s: prune: %w", s.where, err)
	}
	return len(seen), nil
}

func (s *Store) ids(ctx context.Context, query string, args ...any) ([]int64, error) {
	rows, err := s.db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("history %s: %w", s.where, err)
	}
	defer rows.Close()
	var out []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		out = append(out, id)
	}
	return out, rows.Err()
}

// Size returns the store's size on disk in bytes: the SQLite file (and its
// write-ahead log), or the PostgreSQL tables with their indexes.
func (s *Store) Size(ctx context.Context) (int64, error) {
	if s.path != "" {
		var n int64
		for _, p := range []string{s.path, s.path + "-wal"} {
			if fi, err := os.Stat(p); err == nil {
				n += fi.Size()
			}
		}
		return n, nil
	}
	var n int64
	err := s.db.QueryRowContext(ctx, `SELECT COALESCE(SUM(pg_total_relation_size(c)), 0) FROM
		unnest(ARRAY['runs', 'metrics', 'op_times', 'schema_migrations']::regclass[]) AS c`).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("history %s: size: %w", s.where, err)
	}
	return n, nil
}
