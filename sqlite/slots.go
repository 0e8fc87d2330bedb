package sqlite

import (
	"context"
	"fmt"
	"time"

	"github.com/agentwarden/warden"
	"github.com/ncruces/go-sqlite3"
)

// schemaV4 adds rate-limit slots (the signing service's 10 an hour, 50 a
// day). A slot is taken in the transaction that records the decision taking
// it; a hold for a pending approval lapses at hold_until unless the approved
// re-check makes it spent (hold_until NULL). Rows are updated (hold to spent,
// release) but never deleted: the key of a slot is a request id that is
// accepted once for all time.
var schemaV4 = `
CREATE TABLE rate_slots (
	kind        TEXT    NOT NULL,
	trace_id    TEXT    NOT NULL,
	key         TEXT,                   -- the agent's request id, unique per kind
	created_at  INTEGER NOT NULL,       -- Unix milliseconds
	hold_until  INTEGER,                -- NULL: spent; else held until then
	released_at INTEGER,
	reason      TEXT,
	PRIMARY KEY (kind, trace_id)
) STRICT, WITHOUT ROWID;
CREATE UNIQUE INDEX rate_slots_key ON rate_slots (kind, key) WHERE key IS NOT NULL;
CREATE INDEX rate_slots_time ON rate_slots (kind, created_at);
CREATE TRIGGER rate_slots_no_delete BEFORE DELETE ON rate_slots
BEGIN SELECT RAISE(ABORT, 'rate_slots keeps every slot: DELETE is not allowed'); END;
`

const (
	sqlSlotsHeld = `SELECT COUNT(*) FROM rate_slots
WHERE kind = ? AND trace_id != ? AND created_at >= ? AND released_at IS NULL AND (hold_until IS NULL OR hold_until > ?)`
	sqlSlotByTrace   = `SELECT hold_until, released_at FROM rate_slots WHERE kind = ? AND trace_id = ?`
	sqlSlotKeyTrace  = `SELECT trace_id FROM rate_slots WHERE kind = ? AND key = ?`
	sqlInsertSlot    = `INSERT INTO rate_slots (kind, trace_id, key, created_at, hold_until) VALUES (?, ?, ?, ?, ?)`
	sqlRetakeSlot    = `UPDATE rate_slots SET hold_until = ?, released_at = NULL, reason = NULL WHERE kind = ? AND trace_id = ?`
	sqlReleaseSlots  = `UPDATE rate_slots SET released_at = ?, reason = ? WHERE trace_id = ? AND released_at IS NULL`
	sqlSlotExists    = `SELECT 1 FROM rate_slots WHERE trace_id = ? LIMIT 1`
	sqlSlotsReleased = `SELECT 1 FROM rate_slots WHERE trace_id = ? AND released_at IS NULL LIMIT 1`
	// Pending holds (hold_until in the future, not released), of all
	// requesters within a window, and of one requester: the requester is
	// the requested_by and session of the audit row that took the hold (a
	// hold is recorded with its row, in the same transaction, so the join
	// never misses one; no schema change is needed).
	sqlHoldsHeld = `SELECT COUNT(*) FROM rate_slots
WHERE kind = ? AND trace_id != ? AND created_at >= ? AND released_at IS NULL AND hold_until > ?`
	sqlHoldsOf = `SELECT COUNT(DISTINCT s.trace_id) FROM rate_slots s JOIN audit a ON a.trace_id = s.trace_id
WHERE s.kind = ? AND s.trace_id != ? AND s.released_at IS NULL AND s.hold_until > ? AND a.requested_by = ? AND a.session = ?`
)

// takeSlot takes s for the decision e (its trace, at its time), inside the
// write transaction, or returns *warden.RateExceededError,
// *warden.HoldsExceededError or *warden.ReplayError.
func takeSlot(w *conn, e *warden.AuditEntry, s *warden.RateSlot) error {
	traceID, at := e.TraceID, e.CreatedAt
	if s.Key != "" {
		other, err := slotKeyTrace(w, s.Kind, s.Key)
		if err != nil {
			return err
		}
		if other != "" && other != traceID {
			return &warden.ReplayError{Kind: s.Kind, Key: s.Key, TraceID: other}
		}
	}
	ms := at.UnixMilli()
	hold, released, found, err := slotOf(w, s.Kind, traceID)
	if err != nil {
		return err
	}
	// A slot the trace still holds is its own: taking it again only turns a
	// hold into a spent slot. One that lapsed or was released is judged
	// against the limits like a new one.
	live := found && !released && (hold == 0 || hold > ms)
	if !live {
		for _, l := range s.Limits {
			n, err := heldSlots(w, s.Kind, at.Add(-l.Window), at, traceID)
			if err != nil {
				return err
			}
			if n >= l.Max {
				return &warden.RateExceededError{Kind: s.Kind, Limit: l, Held: n}
			}
		}
		if !s.HoldUntil.IsZero() && s.MaxHolds > 0 {
			if err := checkHolds(w, e, s); err != nil {
				return err
			}
		}
	}
	var holdArg any // NULL: spent
	if !s.HoldUntil.IsZero() {
		holdArg = s.HoldUntil.UnixMilli()
	}
	if found {
		return execArgs(w, sqlRetakeSlot, holdArg, s.Kind, traceID)
	}
	var key any
	if s.Key != "" {
		key = s.Key
	}
	return execArgs(w, sqlInsertSlot, s.Kind, traceID, key, ms, holdArg)
}

// checkHolds refuses a new hold for a pending approval past s.MaxHolds: the
// requester's own pending holds, then half of each limit for the holds of
// all requesters together.
func checkHolds(w *conn, e *warden.AuditEntry, s *warden.RateSlot) error {
	at := e.CreatedAt.UnixMilli()
	n, err := countArgs(w, sqlHoldsOf, s.Kind, e.TraceID, at, e.RequestedBy, e.Session)
	if err != nil {
		return err
	}
	if n >= s.MaxHolds {
		return &warden.HoldsExceededError{Kind: s.Kind, Requester: requester(e), Held: n, Max: s.MaxHolds}
	}
	for _, l := range s.Limits {
		most := max(l.Max/2, 1)
		n, err := countArgs(w, sqlHoldsHeld, s.Kind, e.TraceID, ceilMillis(e.CreatedAt.Add(-l.Window)), at)
		if err != nil {
			return err
		}
		if n >= most {
			return &warden.HoldsExceededError{Kind: s.Kind, Held: n, Max: most, Window: l.Window}
		}
	}
	return nil
}

// requester names who asked, as a denial says it.
func requester(e *warden.AuditEntry) string {
	who := e.RequestedBy
	if who == "" {
		who = "this requester"
	}
	if e.Session != "" {
		who += " in session " + e.Session
	}
	return who
}

// countArgs runs a COUNT query with args.
func countArgs(c *conn, query string, args ...any) (int, error) {
	st, err := c.prepare(query)
	if err != nil {
		return 0, err
	}
	defer st.Reset()
	if err := bindArgs(st, args...); err != nil {
		return 0, err
	}
	if !st.Step() {
		return 0, st.Err()
	}
	return int(st.ColumnInt64(0)), nil
}

// slotOf reads the slot traceID took of kind: hold is 0 for a spent slot.
func slotOf(c *conn, kind, traceID string) (hold int64, released, found bool, err error) {
	st, err := c.prepare(sqlSlotByTrace)
	if err != nil {
		return 0, false, false, err
	}
	defer st.Reset()
	if err := bindArgs(st, kind, traceID); err != nil {
		return 0, false, false, err
	}
	if !st.Step() {
		return 0, false, false, st.Err()
	}
	return st.ColumnInt64(0), st.ColumnType(1) != sqlite3.NULL, true, nil
}

func heldSlots(c *conn, kind string, since, at time.Time, exceptTrace string) (int, error) {
	st, err := c.prepare(sqlSlotsHeld)
	if err != nil {
		return 0, err
	}
	defer st.Reset()
	if err := bindArgs(st, kind, exceptTrace, ceilMillis(since), at.UnixMilli()); err != nil {
		return 0, err
	}
	if !st.Step() {
		return 0, st.Err()
	}
	return int(st.ColumnInt64(0)), nil
}

func slotKeyTrace(c *conn, kind, key string) (string, error) {
	st, err := c.prepare(sqlSlotKeyTrace)
	if err != nil {
		return "", err
	}
	defer st.Reset()
	if err := bindArgs(st, kind, key); err != nil {
		return "", err
	}
	if !st.Step() {
		return "", st.Err()
	}
	return st.ColumnText(0), nil
}

// releaseSlots releases every slot traceID holds; found reports whether the
// trace took any.
func releaseSlots(w *conn, traceID, reason string, at time.Time) (found bool, err error) {
	found, err = exists(w, sqlSlotExists, traceID)
	if err != nil || !found {
		return found, err
	}
	if held, err := exists(w, sqlSlotsReleased, traceID); err != nil || !held {
		return true, err
	}
	return true, execArgs(w, sqlReleaseSlots, at.UnixMilli(), reason, traceID)
}

// HeldSlots implements warden.SlotReader. It reads on the write connection,
// like SpentSince: a quick indexed count, often followed by a Record.
func (s *Store) HeldSlots(ctx context.Context, kind string, since, at time.Time, exceptTrace string) (int, error) {
	var n int
	err := s.onWriter(ctx, func(w *conn) (err error) {
		n, err = heldSlots(w, kind, since, at, exceptTrace)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("count %s rate slots: %w", kind, err)
	}
	return n, nil
}

// SlotKeyTrace implements warden.SlotReader.
func (s *Store) SlotKeyTrace(ctx context.Context, kind, key string) (string, error) {
	var trace string
	err := s.onWriter(ctx, func(w *conn) (err error) {
		trace, err = slotKeyTrace(w, kind, key)
		return err
	})
	if err != nil {
		return "", fmt.Errorf("look up %s request id: %w", kind, err)
	}
	return trace, nil
}

// onWriter runs a read on the write connection, outside a transaction.
func (s *Store) onWriter(ctx context.Context, fn func(w *conn) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.openLocked(ctx); err != nil {
		return err
	}
	defer s.w.withContext(ctx)()
	return fn(s.w)
}

// bindArgs binds args (string, int64, int, nil) to st's parameters in order.
func bindArgs(st *sqlite3.Stmt, args ...any) error {
	for i, a := range args {
		var err error
		switch v := a.(type) {
		case nil:
			err = st.BindNull(i + 1)
		case string:
			err = st.BindText(i+1, v)
		case int64:
			err = st.BindInt64(i+1, v)
		case int:
			err = st.BindInt64(i+1, int64(v))
		default:
			err = fmt.Errorf("cannot bind %T", a)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// execArgs runs a statement with args.
func execArgs(c *conn, query string, args ...any) error {
	st, err := c.prepare(query)
	if err != nil {
		return err
	}
	if err := bindArgs(st, args...); err != nil {
		st.Reset()
		return err
	}
	return st.Exec()
}
