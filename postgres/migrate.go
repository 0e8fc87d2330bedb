package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/agentwarden/warden"
)

// The migrations, embedded: migrations/NNNN_name.sql takes the schema from
// version NNNN-1 to NNNN. Append files; never edit one that has shipped.
//
//go:embed migrations/*.sql
var migrationFiles embed.FS

// lockMigrate serialises migrations of one database.
const lockMigrate int64 = 0x7761726465_6e_00

type migration struct {
	version int
	name    string
	sql     string
}

// loadMigrations reads the embedded migrations in order, refusing a gap.
func loadMigrations() ([]migration, error) {
	names, err := fs.Glob(migrationFiles, "migrations/*.sql")
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	var ms []migration
	for i, n := range names {
		base := strings.TrimPrefix(n, "migrations/")
		v, err := strconv.Atoi(strings.SplitN(base, "_", 2)[0])
		if err != nil || v != i+1 {
			return nil, fmt.Errorf("migration %s: want version %d", base, i+1)
		}
		b, err := migrationFiles.ReadFile(n)
		if err != nil {
			return nil, err
		}
		ms = append(ms, migration{version: v, name: base, sql: string(b)})
	}
	return ms, nil
}

// SchemaVersion is the schema version this warden knows: the number of its
// migrations.
func SchemaVersion() int {
	ms, err := loadMigrations()
	if err != nil {
		panic(err) // the embedded files are part of the binary
	}
	return len(ms)
}

const sqlSchemaTable = `CREATE TABLE IF NOT EXISTS warden_schema (
	version    integer PRIMARY KEY,
	name       text    NOT NULL,
	applied_at timestamptz NOT NULL DEFAULT now()
)`

// Migrate brings the database dsn names to SchemaVersion, each migration in
// its own transaction under an advisory lock (daemons migrating at once
// wait for each other). It returns the versions before and after. A database
// with a newer schema is refused. Run it as the role that owns warden's
// tables (see docs/fleet.md), not as the daemons' writer role. password,
// when set, is the role's password, kept out of the DSN.
func Migrate(ctx context.Context, dsn, password string) (from, to int, err error) {
	ms, err := loadMigrations()
	if err != nil {
		return 0, 0, err
	}
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return 0, 0, warden.Errorf(warden.EInvalid, "the PostgreSQL DSN cannot be read: %s", scrub(err, dsn))
	}
	if password != "" {
		cfg.Password = password
	}
	c, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return 0, 0, unavailable("connect to PostgreSQL", err)
	}
	defer c.Close(context.Background())
	from = -1
	for {
		tx, err := c.Begin(ctx)
		if err != nil {
			return from, 0, unavailable("begin a migration", err)
		}
		v, err := migrateOne(ctx, tx, ms)
		if err != nil {
			_ = tx.Rollback(ctx)
			return from, v, err
		}
		if from < 0 {
			from = v
		}
		if v == len(ms) {
			_ = tx.Rollback(ctx)
			return from, v, nil
		}
		m := ms[v]
		if _, err := tx.Exec(ctx, m.sql); err != nil {
			_ = tx.Rollback(ctx)
			return from, v, fmt.Errorf("migrate the fleet schema to version %d (%s): %w", m.version, m.name, err)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO warden_schema (version, name) VALUES ($1, $2)`, m.version, m.name); err != nil {
			_ = tx.Rollback(ctx)
			return from, v, fmt.Errorf("migrate the fleet schema to version %d: %w", m.version, err)
		}
		if err := tx.Commit(ctx); err != nil {
			return from, v, fmt.Errorf("migrate the fleet schema to version %d: commit: %w", m.version, err)
		}
	}
}

// migrateOne locks the migrations and returns the current version.
func migrateOne(ctx context.Context, tx pgx.Tx, ms []migration) (int, error) {
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, lockMigrate); err != nil {
		return 0, fmt.Errorf("lock the schema: %w", err)
	}
	if _, err := tx.Exec(ctx, sqlSchemaTable); err != nil {
		return 0, fmt.Errorf("create the schema version table: %w", err)
	}
	v, err := readVersion(ctx, tx)
	if err != nil {
		return 0, err
	}
	if v > len(ms) {
		return v, newerSchema(v, len(ms))
	}
	return v, nil
}

type querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

func readVersion(ctx context.Context, q querier) (int, error) {
	var v int
	if err := q.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM warden_schema`).Scan(&v); err != nil {
		return 0, fmt.Errorf("read the fleet schema version: %w", err)
	}
	return v, nil
}

func newerSchema(v, known int) error {
	return warden.Errorf(warden.EConflict, "the fleet database has schema version %d; this warden knows only up to %d", v, known).
		WithHint("upgrade warden on this host to the version the fleet runs")
}

// checkSchema refuses a database whose schema is not the one this warden
// knows.
func (s *Store) checkSchema(ctx context.Context) error {
	v, err := readVersion(ctx, s.pool)
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "42P01" { // undefined_table
		v, err = 0, nil
	}
	if err != nil {
		if refused := loginRefused(err); refused != nil {
			return refused
		}
		if Unreachable(err) {
			return unavailable("read the schema version", err)
		}
		return err
	}
	known := SchemaVersion()
	switch {
	case v > known:
		return newerSchema(v, known)
	case v < known:
		return warden.Errorf(warden.EConflict, "the fleet database has schema version %d; this warden needs %d", v, known).
			WithHint("run `warden migrate` (as the role that owns warden's tables) first")
	}
	return nil
}
