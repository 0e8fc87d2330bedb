package sqlite

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/agentwarden/warden"
	"github.com/ncruces/go-sqlite3"
)

// schemaVersion is the PRAGMA user_version of a current database. Open migrates
// older databases in one transaction and refuses newer ones.
const schemaVersion = 8

// migrations[v] takes a database from user_version v to v+1, inside the
// migration's write transaction. Append to it; never edit an entry that has
// shipped.
var migrations = []func(c *sqlite3.Conn) error{
	sqlStep(schemaV1), sqlStep(schemaV2), sqlStep(schemaV3), sqlStep(schemaV4), schemaV5, sqlStep(schemaV6),
	sqlStep(schemaV7), sqlStep(schemaV8),
}

// sqlStep is a migration that is only SQL.
func sqlStep(sql string) func(c *sqlite3.Conn) error {
	return func(c *sqlite3.Conn) error { return c.Exec(sql) }
}

// appendOnly makes table append-only: UPDATE and DELETE abort, and so does an
// INSERT that would collide with an existing row (key is the SQL condition
// matching it), because INSERT OR REPLACE deletes the old row without firing
// DELETE triggers and an upsert would update it.
func appendOnly(table, key string) string {
	return fmt.Sprintf(`
CREATE TRIGGER %[1]s_no_update BEFORE UPDATE ON %[1]s
BEGIN SELECT RAISE(ABORT, '%[1]s is append-only: UPDATE is not allowed'); END;
CREATE TRIGGER %[1]s_no_delete BEFORE DELETE ON %[1]s
BEGIN SELECT RAISE(ABORT, '%[1]s is append-only: DELETE is not allowed'); END;
CREATE TRIGGER %[1]s_no_replace BEFORE INSERT ON %[1]s
WHEN EXISTS (SELECT 1 FROM %[1]s WHERE %[2]s)
BEGIN SELECT RAISE(ABORT, '%[1]s is append-only: replacing a row is not allowed'); END;
`, table, key)
}

// schemaV1 creates the audit log, stage events, security events and the spend
// ledger. Times are Unix milliseconds; amounts are micro-dollars; JSON is TEXT.
var schemaV1 = `
CREATE TABLE audit (
	seq          INTEGER PRIMARY KEY,   -- 1, 2, 3… without gaps
	id           TEXT    NOT NULL UNIQUE,
	trace_id     TEXT    NOT NULL,
	created_at   INTEGER NOT NULL,      -- Unix milliseconds, UTC
	capability   TEXT    NOT NULL,
	action       TEXT    NOT NULL,
	resource     TEXT    NOT NULL,
	tool         TEXT    NOT NULL,
	tier         INTEGER NOT NULL,
	args         TEXT,                  -- JSON or NULL
	context      TEXT    NOT NULL,
	requested_by TEXT    NOT NULL,
	autonomous   INTEGER NOT NULL CHECK (autonomous IN (0, 1)),
	session      TEXT    NOT NULL,
	host         TEXT    NOT NULL,
	raw          TEXT,                  -- JSON or NULL
	verdict      TEXT    NOT NULL CHECK (verdict IN ('deny', 'allow', 'sandbox', 'ask')),
	blocked      INTEGER NOT NULL CHECK (blocked IN (0, 1)),
	block_reason TEXT    NOT NULL,
	reason       TEXT    NOT NULL,
	rule         TEXT    NOT NULL,
	result       TEXT,                  -- JSON or NULL
	output       TEXT    NOT NULL CHECK (length(CAST(output AS BLOB)) <= 1024),
	error        TEXT    NOT NULL,
	duration     INTEGER NOT NULL,      -- nanoseconds
	prev_hash    TEXT    NOT NULL,
	hash         TEXT    NOT NULL
) STRICT;
CREATE INDEX audit_created_at   ON audit (created_at);
CREATE INDEX audit_trace_id     ON audit (trace_id);
CREATE INDEX audit_capability   ON audit (capability);
CREATE INDEX audit_tool         ON audit (tool);
CREATE INDEX audit_verdict      ON audit (verdict);
CREATE INDEX audit_requested_by ON audit (requested_by);

CREATE TABLE stage_events (
	audit_seq INTEGER NOT NULL,         -- audit.seq of the decision
	trace_id  TEXT    NOT NULL,         -- the decision's trace_id
	position  INTEGER NOT NULL,         -- 0-based order in which the stage ran
	stage     TEXT    NOT NULL,
	verdict   TEXT    NOT NULL CHECK (verdict IN ('deny', 'allow', 'sandbox', 'ask')),
	reason    TEXT    NOT NULL,
	rule      TEXT    NOT NULL,
	error     TEXT    NOT NULL,
	duration  INTEGER NOT NULL,         -- nanoseconds
	PRIMARY KEY (audit_seq, position)
) STRICT, WITHOUT ROWID;
CREATE INDEX stage_events_stage ON stage_events (stage, verdict, rule);

CREATE TABLE security_events (
	seq        INTEGER PRIMARY KEY,
	id         TEXT    NOT NULL UNIQUE,
	trace_id   TEXT    NOT NULL,
	created_at INTEGER NOT NULL,        -- Unix milliseconds, UTC
	type       TEXT    NOT NULL,
	severity   TEXT    NOT NULL CHECK (severity IN ('info', 'warn', 'error', 'critical')),
	summary    TEXT    NOT NULL,
	metadata   TEXT,                    -- JSON or NULL
	prev_hash  TEXT    NOT NULL,
	hash       TEXT    NOT NULL
) STRICT;
CREATE INDEX security_events_created_at ON security_events (created_at);
CREATE INDEX security_events_type       ON security_events (type);
CREATE INDEX security_events_trace_id   ON security_events (trace_id);

CREATE TABLE spend_ledger (
	seq           INTEGER PRIMARY KEY,
	created_at    INTEGER NOT NULL,     -- Unix milliseconds: the audit entry's created_at
	trace_id      TEXT    NOT NULL,
	amount_micros INTEGER NOT NULL CHECK (amount_micros >= 0)
) STRICT;
-- Covers the spend-cap sum, which then reads only the index.
CREATE INDEX spend_ledger_created_at ON spend_ledger (created_at, amount_micros);
` + appendOnly("audit", "seq = NEW.seq OR id = NEW.id") +
	appendOnly("stage_events", "audit_seq = NEW.audit_seq AND position = NEW.position") +
	appendOnly("security_events", "seq = NEW.seq OR id = NEW.id") +
	appendOnly("spend_ledger", "seq = NEW.seq")

// migrate brings the database on c to schemaVersion. When it is already
// current, it costs one PRAGMA read and runs no DDL.
func migrate(c *sqlite3.Conn) error {
	v, err := userVersion(c)
	if err != nil {
		return err
	}
	if v == schemaVersion {
		return nil
	}
	if err := checkVersion(v); err != nil {
		return err
	}
	// journal_mode cannot change inside a transaction; it is a property of the
	// file, so this runs once, when the database is created.
	if err := setWAL(c); err != nil {
		return err
	}
	if err := c.Exec(`BEGIN IMMEDIATE`); err != nil {
		return fmt.Errorf("migrate schema: %w", err)
	}
	if err := migrateLocked(c); err != nil {
		_ = c.Exec(`ROLLBACK`)
		return err
	}
	if err := c.Exec(`COMMIT`); err != nil {
		_ = c.Exec(`ROLLBACK`)
		return fmt.Errorf("migrate schema: commit: %w", err)
	}
	// Copy the new schema from the WAL into the database file now, so that the
	// file holds it even while the WAL persists between processes. Best effort:
	// the schema is durable in the WAL either way.
	_, _, _ = c.WALCheckpoint("main", sqlite3.CHECKPOINT_PASSIVE)
	return nil
}

// migrateLocked runs the migrations inside the caller's write transaction,
// re-reading user_version because another process may have migrated first.
func migrateLocked(c *sqlite3.Conn) error {
	v, err := userVersion(c)
	if err != nil {
		return err
	}
	if err := checkVersion(v); err != nil {
		return err
	}
	for ; v < schemaVersion; v++ {
		if err := migrations[v](c); err != nil {
			return fmt.Errorf("migrate schema from version %d: %w", v, err)
		}
	}
	// PRAGMA takes no parameters; v is our own constant, not input.
	if err := c.Exec(fmt.Sprintf(`PRAGMA user_version = %d`, schemaVersion)); err != nil {
		return fmt.Errorf("migrate schema: set version: %w", err)
	}
	return nil
}

func checkVersion(v int) error {
	if v > schemaVersion || v < 0 {
		return warden.Errorf(warden.EConflict, "the audit database has schema version %d; this warden knows only up to %d", v, schemaVersion).
			WithHint("upgrade warden, or point it at another database")
	}
	return nil
}

func userVersion(c *sqlite3.Conn) (int, error) {
	st, _, err := c.Prepare(`PRAGMA user_version`)
	if err != nil {
		return 0, fmt.Errorf("read schema version: %w", err)
	}
	defer st.Close()
	if !st.Step() {
		return 0, fmt.Errorf("read schema version: %w", st.Err())
	}
	return st.ColumnInt(0), nil
}

// setWAL switches the database to WAL mode. The switch needs an exclusive lock
// that SQLite takes without its busy handler (to avoid deadlock), so when
// several processes create the database at once it retries here, up to
// BusyTimeout; the switch is then usually already done by another process.
func setWAL(c *sqlite3.Conn) error {
	deadline := time.Now().Add(BusyTimeout)
	for {
		err := trySetWAL(c)
		if err == nil || !errors.Is(err, sqlite3.BUSY) || time.Now().After(deadline) {
			return err
		}
		time.Sleep(time.Duration(1+rand.IntN(5)) * time.Millisecond)
	}
}

func trySetWAL(c *sqlite3.Conn) error {
	st, _, err := c.Prepare(`PRAGMA journal_mode = WAL`)
	if err != nil {
		return fmt.Errorf("set WAL mode: %w", err)
	}
	defer st.Close()
	if !st.Step() {
		return fmt.Errorf("set WAL mode: %w", st.Err())
	}
	if mode := st.ColumnText(0); mode != "wal" {
		return fmt.Errorf("set WAL mode: the database stayed in %q mode", mode)
	}
	return nil
}
