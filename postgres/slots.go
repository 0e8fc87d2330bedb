package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agentwarden/warden"
)

const (
	sqlSlotsHeld = `SELECT count(*) FROM rate_slots
WHERE kind = $1 AND trace_id <> $2 AND created_at >= $3 AND released_at IS NULL AND (hold_until IS NULL OR hold_until > $4)`
	sqlHoldsHeld = `SELECT count(*) FROM rate_slots
WHERE kind = $1 AND trace_id <> $2 AND created_at >= $3 AND released_at IS NULL AND hold_until > $4`
	// A requester's pending holds: the requested_by and session of the
	// audit row that took each (recorded in the same transaction).
	sqlHoldsOf = `SELECT count(DISTINCT s.trace_id) FROM rate_slots s JOIN audit a ON a.trace_id = s.trace_id
WHERE s.kind = $1 AND s.trace_id <> $2 AND s.released_at IS NULL AND s.hold_until > $3 AND a.requested_by = $4 AND a.session = $5`
)

// takeSlot takes sl for the decision e inside the write transaction, which
// holds the chain lock, or returns *warden.RateExceededError,
// *warden.HoldsExceededError or *warden.ReplayError. The rules are
// sqlite's (see warden.RateSlot).
func takeSlot(ctx context.Context, tx pgx.Tx, e *warden.AuditEntry, sl *warden.RateSlot) error {
	traceID, at := col(e.TraceID), e.CreatedAt
	kind := col(sl.Kind)
	if sl.Key != "" {
		other, err := slotKeyTrace(ctx, tx, kind, col(sl.Key))
		if err != nil {
			return err
		}
		if other != "" && other != traceID {
			return &warden.ReplayError{Kind: sl.Kind, Key: sl.Key, TraceID: other}
		}
	}
	ms := at.UnixMilli()
	var hold, released *int64
	found := true
	err := tx.QueryRow(ctx, `SELECT hold_until, released_at FROM rate_slots WHERE kind = $1 AND trace_id = $2`, kind, traceID).Scan(&hold, &released)
	if errors.Is(err, pgx.ErrNoRows) {
		found, err = false, nil
	}
	if err != nil {
		return fmt.Errorf("read rate slot: %w", err)
	}
	live := found && released == nil && (hold == nil || *hold > ms)
	if !live {
		for _, l := range sl.Limits {
			n, err := heldSlots(ctx, tx, kind, at.Add(-l.Window), at, traceID)
			if err != nil {
				return err
			}
			if n >= l.Max {
				return &warden.RateExceededError{Kind: sl.Kind, Limit: l, Held: n}
			}
		}
		if !sl.HoldUntil.IsZero() && sl.MaxHolds > 0 {
			if err := checkHolds(ctx, tx, e, sl); err != nil {
				return err
			}
		}
	}
	var holdArg *int64 // NULL: spent
	if !sl.HoldUntil.IsZero() {
		h := sl.HoldUntil.UnixMilli()
		holdArg = &h
	}
	if found {
		_, err = tx.Exec(ctx, `UPDATE rate_slots SET hold_until = $1, released_at = NULL, reason = NULL WHERE kind = $2 AND trace_id = $3`,
			holdArg, kind, traceID)
	} else {
		var key *string
		if sl.Key != "" {
			k := col(sl.Key)
			key = &k
		}
		_, err = tx.Exec(ctx, `INSERT INTO rate_slots (kind, trace_id, key, created_at, hold_until) VALUES ($1, $2, $3, $4, $5)`,
			kind, traceID, key, ms, holdArg)
	}
	if err != nil {
		return fmt.Errorf("take rate slot: %w", err)
	}
	return nil
}

// checkHolds refuses a new hold for a pending approval past sl.MaxHolds.
func checkHolds(ctx context.Context, tx pgx.Tx, e *warden.AuditEntry, sl *warden.RateSlot) error {
	at := e.CreatedAt.UnixMilli()
	var n int
	if err := tx.QueryRow(ctx, sqlHoldsOf, col(sl.Kind), col(e.TraceID), at, col(e.RequestedBy), col(e.Session)).Scan(&n); err != nil {
		return fmt.Errorf("count holds: %w", err)
	}
	if n >= sl.MaxHolds {
		return &warden.HoldsExceededError{Kind: sl.Kind, Requester: requester(e), Held: n, Max: sl.MaxHolds}
	}
	for _, l := range sl.Limits {
		most := max(l.Max/2, 1)
		if err := tx.QueryRow(ctx, sqlHoldsHeld, col(sl.Kind), col(e.TraceID), ceilMillis(e.CreatedAt.Add(-l.Window)), at).Scan(&n); err != nil {
			return fmt.Errorf("count holds: %w", err)
		}
		if n >= most {
			return &warden.HoldsExceededError{Kind: sl.Kind, Held: n, Max: most, Window: l.Window}
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

func heldSlots(ctx context.Context, q querier, kind string, since, at time.Time, exceptTrace string) (int, error) {
	var n int
	if err := q.QueryRow(ctx, sqlSlotsHeld, kind, exceptTrace, ceilMillis(since), at.UnixMilli()).Scan(&n); err != nil {
		return 0, fmt.Errorf("count rate slots: %w", err)
	}
	return n, nil
}

func slotKeyTrace(ctx context.Context, q querier, kind, key string) (string, error) {
	var trace string
	err := q.QueryRow(ctx, `SELECT trace_id FROM rate_slots WHERE kind = $1 AND key = $2`, kind, key).Scan(&trace)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("look up request id: %w", err)
	}
	return trace, nil
}

// releaseSlots releases every slot traceID holds; found reports whether the
// trace took any.
func releaseSlots(ctx context.Context, tx pgx.Tx, traceID, reason string, at time.Time) (found bool, err error) {
	if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM rate_slots WHERE trace_id = $1)`, col(traceID)).Scan(&found); err != nil || !found {
		return found, err
	}
	_, err = tx.Exec(ctx, `UPDATE rate_slots SET released_at = $1, reason = $2 WHERE trace_id = $3 AND released_at IS NULL`,
		at.UnixMilli(), col(reason), col(traceID))
	return true, err
}

// HeldSlots implements warden.SlotReader.
func (s *Store) HeldSlots(ctx context.Context, kind string, since, at time.Time, exceptTrace string) (int, error) {
	if err := s.ready(ctx); err != nil {
		return 0, readErr("count rate slots", err)
	}
	n, err := heldSlots(ctx, s.pool, col(kind), since, at, col(exceptTrace))
	if err != nil {
		if Unreachable(err) {
			return 0, unavailable("count rate slots", err)
		}
		return 0, fmt.Errorf("count %s rate slots: %w", kind, err)
	}
	return n, nil
}

// SlotKeyTrace implements warden.SlotReader.
func (s *Store) SlotKeyTrace(ctx context.Context, kind, key string) (string, error) {
	if err := s.ready(ctx); err != nil {
		return "", readErr("look up a request id", err)
	}
	trace, err := slotKeyTrace(ctx, s.pool, col(kind), col(key))
	if err != nil {
		if Unreachable(err) {
			return "", unavailable("look up a request id", err)
		}
		return "", fmt.Errorf("look up %s request id: %w", kind, err)
	}
	return trace, nil
}
