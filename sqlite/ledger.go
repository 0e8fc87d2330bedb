package sqlite

import (
	"context"
	"fmt"
	"time"

	"github.com/agentwarden/warden"
)

// schemaV3 adds released reservations (and the trade capability's tables,
// declared beside their code). A release names the ledger row it gives back;
// it is append-only and unique per trace, so a reservation is released at
// most once and a release never adds budget that was not debited.
var schemaV3 = `
CREATE TABLE spend_releases (
	trace_id    TEXT    PRIMARY KEY,    -- the spend_ledger row's trace_id
	created_at  INTEGER NOT NULL,       -- Unix milliseconds
	reason      TEXT    NOT NULL
) STRICT, WITHOUT ROWID;
` + appendOnly("spend_releases", "trace_id = NEW.trace_id") + paperSchema + stoplossSchema

const (
	sqlInsertDebit   = `INSERT INTO spend_ledger (created_at, trace_id, amount_micros) VALUES (?, ?, ?)`
	sqlDebitExists   = `SELECT 1 FROM spend_ledger WHERE trace_id = ? LIMIT 1`
	sqlReleaseExists = `SELECT 1 FROM spend_releases WHERE trace_id = ?`
	sqlInsertRelease = `INSERT INTO spend_releases (trace_id, created_at, reason) VALUES (?, ?, ?)`
)

// Release gives back the reservations of traceID: its ledger row stops
// counting toward the cap and its rate slots stop counting toward their
// limits. Releasing twice does nothing; a trace with neither is ENotFound.
func (s *Store) Release(ctx context.Context, traceID, reason string, at time.Time) error {
	err := s.write(ctx, func(w *conn) error {
		slots, err := releaseSlots(w, traceID, reason, at)
		if err != nil {
			return err
		}
		found, err := exists(w, sqlDebitExists, traceID)
		if err != nil {
			return err
		}
		if !found {
			if slots {
				return nil
			}
			return warden.Errorf(warden.ENotFound, "no reservation in the spend ledger or rate slots for trace %s", traceID)
		}
		if done, err := exists(w, sqlReleaseExists, traceID); err != nil || done {
			return err
		}
		if err := releaseTotals(w, traceID); err != nil {
			return err
		}
		st, err := w.prepare(sqlInsertRelease)
		if err != nil {
			return err
		}
		b := binder{st: st}
		b.text(traceID)
		b.int(at.UnixMilli())
		b.text(reason)
		return b.exec()
	})
	if err != nil {
		return fmt.Errorf("release reservation %s: %w", traceID, err)
	}
	return nil
}

func exists(c *conn, query, arg string) (bool, error) {
	st, err := c.prepare(query)
	if err != nil {
		return false, err
	}
	defer st.Reset()
	if err := st.BindText(1, arg); err != nil {
		return false, err
	}
	if st.Step() {
		return true, nil
	}
	return false, st.Err()
}

// SpentSince returns the sum of the ledger's debits dated at or after t, less
// the released ones. It reads on the write connection: it is a few bounded
// index ranges (see spend_totals), often followed by a Record, and a short
// process should not open a second connection for it.
func (s *Store) SpentSince(ctx context.Context, t time.Time) (warden.USD, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.openLocked(ctx); err != nil {
		return 0, err
	}
	defer s.w.withContext(ctx)()
	u, err := spentSince(s.w, t)
	if err != nil {
		return 0, fmt.Errorf("read spend ledger: %w", err)
	}
	return u, nil
}

func spentSince(c *conn, t time.Time) (warden.USD, error) {
	st, err := c.prepare(sqlSpentSince)
	if err != nil {
		return 0, err
	}
	defer st.Reset()
	from := ceilMillis(t)
	b := binder{st: st}
	b.int(from)
	b.int(ceilTo(from, minuteMillis))
	b.int(ceilTo(from, hourMillis))
	if b.err != nil {
		return 0, b.err
	}
	if !st.Step() {
		return 0, st.Err()
	}
	return warden.USD(st.ColumnInt64(0)), nil
}

// checkCap returns *warden.CapExceededError unless the debit fits under its
// cap given what the ledger holds since debit.Since. It runs inside the write
// transaction, whose immediate lock keeps other writers out until commit.
func checkCap(w *conn, d *warden.Debit) error {
	spent, err := spentSince(w, d.Since)
	if err != nil {
		return fmt.Errorf("read spend ledger: %w", err)
	}
	if d.Amount > d.Cap-spent { // spent+amount > cap, without overflow
		return &warden.CapExceededError{Spent: spent, Amount: d.Amount, Cap: d.Cap}
	}
	return nil
}

// insertDebit adds the ledger row for e's debit, dated at e.CreatedAt, and
// its amount to the running totals. A trace whose reservation was released
// cannot reserve again (EConflict): a release gives back every ledger row of
// its trace, so a later row under it would be left out of the ledger's sum
// while the running totals count it, and Verify would call the totals
// tampered with; refusing it keeps both the same, and no debit free.
func insertDebit(w *conn, e *warden.AuditEntry, amount warden.USD) error {
	if released, err := exists(w, sqlReleaseExists, e.TraceID); err != nil {
		return fmt.Errorf("read spend releases: %w", err)
	} else if released {
		return warden.Errorf(warden.EConflict, "the spend reservation of trace %s was already released, so the trace cannot reserve again", e.TraceID).
			WithHint("make the request again under a new trace id")
	}
	st, err := w.prepare(sqlInsertDebit)
	if err != nil {
		return err
	}
	at := e.CreatedAt.UnixMilli()
	b := binder{st: st}
	b.int(at)
	b.text(e.TraceID)
	b.int(int64(amount))
	if err := b.exec(); err != nil {
		return fmt.Errorf("insert ledger row: %w", err)
	}
	return addTotals(w, at, int64(amount))
}

// ceilMillis returns the smallest Unix millisecond at or after t: stored times
// are whole milliseconds, so "created_at >= ceilMillis(t)" means "at or after t".
func ceilMillis(t time.Time) int64 {
	ms := t.UnixMilli()
	if !time.UnixMilli(ms).Equal(t) {
		ms++
	}
	return ms
}
