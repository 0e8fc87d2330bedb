// Package sqlite stores warden's audit log, security events and daily spend
// ledger in one SQLite database file, implementing warden.AuditStore and
// warden.Ledger. It uses github.com/ncruces/go-sqlite3 (pure Go) through its
// direct API, not database/sql.
//
// Durability: the database runs in WAL mode with synchronous=FULL, so a Record,
// RecordBatch or AppendEvent that returned nil survives kill -9 and power loss.
// Every write is one BEGIN IMMEDIATE transaction on the Store's single write
// connection; the immediate lock serialises writers across processes, which is
// what keeps the hash chains linear and the spend-cap check atomic. A busy
// database is waited on for up to BusyTimeout.
//
// Append-only is enforced by the database: triggers abort every UPDATE and
// DELETE on audit, stage_events, security_events and spend_ledger. Anyone who can
// write the file can still drop the triggers; the hash chains (package audit)
// make such tampering evident to Verify.
//
// Cost: warden runs as a short process per agent action, so Open does as little
// as it can: when the schema is current it runs no DDL and prepares nothing;
// statements are prepared on first use and cached; reads other than
// SpentSince use a second connection opened only when first needed. A
// connection that closes last normally checkpoints the WAL, which costs several
// fsyncs; Store disables that and lets only a Close that finds the WAL above
// 256 KiB checkpoint it, so the WAL (and the work of reopening it) stays bounded.
// See checkpoint.go for the measurements behind this. Because the WAL persists,
// recent rows may live only in warden.db-wal: back up with the sqlite3 shell's
// .backup (or VACUUM INTO), or copy warden.db together with its -wal file.
//
// Anchoring: a home's store (OpenWith with Options.Anchor and Options.Key)
// keeps a chain anchor outside the database and a keyed checkpoint of both
// chains every CheckpointEvery rows (see anchor.go and anchorfile.go). It
// refuses, with ErrLost, a database that is missing, holds fewer rows than
// the anchor recorded or differs from it, a file deleted or replaced under
// it, and a spool that lost its tail; it never creates a database unless
// the home is new (Options.Create) or Recover starts a new chain. Open and
// OpenDeferred are bare stores without an anchor, for tests and embedding.
//
// Timestamps are stored as INTEGER Unix milliseconds (audit.TimePrecision), USD
// amounts as INTEGER micro-dollars, JSON as TEXT. See schema.go for the tables
// and docs/audit-queries.md for investigation queries.
package sqlite
