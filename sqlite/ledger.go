package sqlite

import (
	"context"
	"fmt"
	"time"

	"github.com/agentwarden/warden"
)

const (
	sqlSpentSince  = `SELECT COALESCE(SUM(amount_micros), 0) FROM spend_ledger WHERE created_at >= ?`
	sqlInsertDebit = `INSERT INTO spend_ledger (created_at, trace_id, amount_micros) VALUES (?, ?, ?)`
)

// SpentSince returns the sum of the ledger's debits dated at or after t. It
// reads on the write connection: it is a quick indexed sum, often followed by a
// Record, and a short process should not open a second connection for it.
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
	if err := st.BindInt64(1, ceilMillis(t)); err != nil {
		return 0, err
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

// insertDebit adds the ledger row for e's debit, dated at e.CreatedAt.
func insertDebit(w *conn, e *warden.AuditEntry, amount warden.USD) error {
	st, err := w.prepare(sqlInsertDebit)
	if err != nil {
		return err
	}
	b := binder{st: st}
	b.int(e.CreatedAt.UnixMilli())
	b.text(e.TraceID)
	b.int(int64(amount))
	if err := b.exec(); err != nil {
		return fmt.Errorf("insert ledger row: %w", err)
	}
	return nil
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
