package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agentwarden/warden"
)

// The spend ledger keeps one row per debit (spend_ledger) and, by trigger, a
// running total per minute (spend_minutes) that releases take back from. A
// sum since t is the totals of the whole minutes after t's minute plus the
// unreleased rows of t's own minute at or after t: at most 1,440 totals and
// one minute of rows for the 24-hour window, however many debits the day
// held.
const sqlSpentSince = `SELECT
	coalesce((SELECT sum(amount_micros) FROM spend_minutes WHERE minute > $2), 0) +
	coalesce((SELECT sum(l.amount_micros) FROM spend_ledger l
		WHERE l.created_at >= $1 AND l.created_at < ($2 + 1) * 60000
		  AND NOT EXISTS (SELECT 1 FROM spend_releases r WHERE r.trace_id = l.trace_id)), 0)`

// SpentSince returns the sum of the ledger's debits dated at or after t,
// less the released ones.
func (s *Store) SpentSince(ctx context.Context, t time.Time) (warden.USD, error) {
	if err := s.ready(ctx); err != nil {
		return 0, readErr("read the spend ledger", err)
	}
	u, err := spentSince(ctx, s.pool, t)
	if err != nil {
		if Unreachable(err) {
			return 0, unavailable("read the spend ledger", err)
		}
		return 0, fmt.Errorf("read spend ledger: %w", err)
	}
	return u, nil
}

func spentSince(ctx context.Context, q querier, t time.Time) (warden.USD, error) {
	ms := ceilMillis(t)
	var sum int64
	if err := q.QueryRow(ctx, sqlSpentSince, ms, floorDiv(ms, 60000)).Scan(&sum); err != nil {
		return 0, err
	}
	return warden.USD(sum), nil
}

// checkCap returns *warden.CapExceededError unless the debit fits under its
// cap given what the ledger holds since debit.Since. It runs under the chain
// lock, which every debit takes, so no other debit can commit in between.
func checkCap(ctx context.Context, tx pgx.Tx, d *warden.Debit) error {
	spent, err := spentSince(ctx, tx, d.Since)
	if err != nil {
		return fmt.Errorf("read spend ledger: %w", err)
	}
	if d.Amount > d.Cap-spent { // spent+amount > cap, without overflow
		return &warden.CapExceededError{Spent: spent, Amount: d.Amount, Cap: d.Cap}
	}
	return nil
}

// insertDebit adds the ledger row for e's debit, dated at e.CreatedAt.
func insertDebit(ctx context.Context, tx pgx.Tx, e *warden.AuditEntry, amount warden.USD) error {
	if _, err := tx.Exec(ctx, `INSERT INTO spend_ledger (created_at, trace_id, amount_micros) VALUES ($1, $2, $3)`,
		e.CreatedAt.UnixMilli(), col(e.TraceID), int64(amount)); err != nil {
		return fmt.Errorf("insert ledger row: %w", err)
	}
	return nil
}

// Release gives back the reservations of traceID: its ledger rows stop
// counting toward the cap and its rate slots toward their limits. Releasing
// twice does nothing; a trace with neither is ENotFound.
func (s *Store) Release(ctx context.Context, traceID, reason string, at time.Time) error {
	err := s.tx(ctx, func(tx pgx.Tx) error {
		slots, err := releaseSlots(ctx, tx, traceID, reason, at)
		if err != nil {
			return err
		}
		var debited bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM spend_ledger WHERE trace_id = $1)`, col(traceID)).Scan(&debited); err != nil {
			return err
		}
		if !debited {
			if slots {
				return nil
			}
			return warden.Errorf(warden.ENotFound, "no reservation in the spend ledger or rate slots for trace %s", traceID)
		}
		_, err = tx.Exec(ctx, `INSERT INTO spend_releases (trace_id, created_at, reason) VALUES ($1, $2, $3) ON CONFLICT (trace_id) DO NOTHING`,
			col(traceID), at.UnixMilli(), col(reason))
		return err
	})
	if err != nil {
		var we *warden.Error
		if !errors.As(err, &we) && Unreachable(err) {
			err = unavailable("release a reservation", err)
		}
		return fmt.Errorf("release reservation %s: %w", traceID, err)
	}
	return nil
}

// ceilMillis returns the smallest Unix millisecond at or after t.
func ceilMillis(t time.Time) int64 {
	ms := t.UnixMilli()
	if !time.UnixMilli(ms).Equal(t) {
		ms++
	}
	return ms
}

// floorDiv is a / b rounded toward minus infinity, as the minute of a time
// before 1970 must be.
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}
