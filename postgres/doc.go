// Package postgres is warden's fleet store: the audit log, security events,
// spend ledger, rate slots, approvals, grants and the emergency stop in one
// PostgreSQL database that many daemons on many hosts share, implementing
// warden.AuditStore, warden.Ledger, warden.SlotReader and
// warden.ApprovalStore with pgx and a connection pool. It passes the same
// conformance suites as package sqlite (audit/audittest).
//
// # Schema and roles
//
// Migrations are embedded (migrations/NNNN_*.sql) and versioned in the
// warden_schema table. Migrate applies them, as the role that owns warden's
// tables; Open only checks the version and refuses a database this warden
// does not know (older: run `warden migrate`; newer: upgrade warden).
// Migration 1 creates the NOLOGIN role warden_writer; the daemons log in
// with a role that is a member of it. warden_writer may SELECT and INSERT;
// it may UPDATE only an approval's answer columns, a grant's used_at and a
// rate slot's hold and release; it may never DELETE or TRUNCATE, nor touch
// the triggers. Triggers refuse every UPDATE, DELETE and TRUNCATE of a
// logged row to everyone, the owner included (an approval ends once, a
// once grant is used once). See docs/fleet.md.
//
// # One ordered chain
//
// Every append to either chain takes one transaction-scoped advisory lock
// (pg_advisory_xact_lock) before it reads the chain's head, so the fleet
// writes one chain per table, with Seq 1, 2, 3… and no gaps, exactly as the
// SQLite store does; audit verify and audit.Verifier are unchanged. The
// alternative, a chain per writer merged by verify, was rejected: it makes
// the order of decisions across hosts unrecoverable from the log, doubles
// the verification rules, and leaves each writer's tail unprotected by the
// others' later rows. The cost is that appends are serialised fleet-wide
// for the length of a commit; RecordBatch carries many entries per commit.
//
// The spend-cap check, the rate slots and the signing counters are decided
// under the same lock, inside the transaction that records the decision,
// so check and debit are atomic across every process on every host. The
// cap check reads per-minute running totals (spend_minutes, kept by
// triggers the writer role cannot bypass) for the whole minutes of the
// window and the ledger's rows only for the window's first minute, so it
// reads at most 1,440 totals however many debits the day held.
//
// # Rows
//
// An audit row and a security event keep their canonical encoding (enc,
// audit.AppendEntry / AppendEvent: the exact bytes the hash covers) beside
// query columns for SQL. PostgreSQL text holds only UTF-8 without NUL, so a
// query column holds its value with other bytes as U+FFFD; reads decode enc,
// so entries come back byte for byte, and Verify checks that every query
// column says what enc says.
//
// # Keyed checkpoints
//
// With Options.Key (the fleet's checkpoint key, the same file on every
// host), a checkpoint of both chains (audit.Checkpoint with its HMAC) is
// stored whenever a chain crosses a multiple of CheckpointEvery rows, and
// when a long-lived store closes. Verify checks each MAC and that the chains
// pass through it, so a chain rewritten and rehashed with warden's own code
// is caught. Rows cut from the end after the last checkpoint cannot be told
// from the database alone: with Options.Anchor, each host keeps what it saw
// committed (anchor.go), and Verify names the rows that are gone.
//
// # Failures
//
// A server that cannot be reached, or goes away, is a *warden.Error with
// code EUnavailable (see Unreachable). A commit whose answer was lost with
// the connection is settled by looking the row up again, so Record's
// contract (after an error nothing was stored) holds whenever the server
// can be asked.
package postgres
