package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agentwarden/warden"
)

// ApprovalChannel is the LISTEN/NOTIFY channel on which every change to an
// approval (created, answered, expired) is announced, with the approval's
// id as payload, when its transaction commits.
const ApprovalChannel = "warden_approvals"

// KillChannel announces the fleet's emergency stop turned on or off
// (payload "on" or "off").
const KillChannel = "warden_kill"

// notify announces the approval id to every listening daemon when tx
// commits (NOTIFY is transactional).
func notify(ctx context.Context, tx pgx.Tx, id string) error {
	_, err := tx.Exec(ctx, `SELECT pg_notify($1, $2)`, ApprovalChannel, col(id))
	return err
}

// Listen calls onApproval with the id of every approval created, answered or
// expired by any daemon of the fleet, and onKill with the emergency stop's
// new state, until ctx ends. It holds one connection of its own, and when
// that connection fails it reconnects (waiting up to 5 s between tries);
// callbacks run on Listen's goroutine. Notifications sent while it was
// disconnected are lost: the approval queue still polls the store, so a
// waiter is released late, never wrongly.
func (s *Store) Listen(ctx context.Context, onApproval func(id string), onKill func(on bool)) error {
	wait := 100 * time.Millisecond
	for {
		err := s.listenOnce(ctx, onApproval, onKill)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err == nil {
			wait = 100 * time.Millisecond
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
		wait = min(2*wait, 5*time.Second)
	}
}

func (s *Store) listenOnce(ctx context.Context, onApproval func(id string), onKill func(on bool)) error {
	c, err := s.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	// The connection leaves the pool: it stays in LISTEN mode and is
	// closed, not reused, when this ends.
	conn := c.Hijack()
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, `LISTEN `+ApprovalChannel+`; LISTEN `+KillChannel); err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		switch n.Channel {
		case ApprovalChannel:
			if onApproval != nil {
				onApproval(n.Payload)
			}
		case KillChannel:
			if onKill != nil {
				onKill(n.Payload == "on")
			}
		}
	}
}

// SetKill turns the fleet's emergency stop on or off: a row in kill_switch
// (append-only, so every turn is kept) and a notification to every daemon.
func (s *Store) SetKill(ctx context.Context, on bool, by, reason string, at time.Time) error {
	err := s.tx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO kill_switch (created_at, engaged, set_by, reason) VALUES ($1, $2, $3, $4)`,
			at.UnixMilli(), on, col(by), col(reason)); err != nil {
			return err
		}
		state := "off"
		if on {
			state = "on"
		}
		_, err := tx.Exec(ctx, `SELECT pg_notify($1, $2)`, KillChannel, state)
		return err
	})
	if err != nil {
		var we *warden.Error
		if !errors.As(err, &we) && Unreachable(err) {
			err = unavailable("set the fleet's emergency stop", err)
		}
		return fmt.Errorf("set the fleet's emergency stop: %w", err)
	}
	return nil
}

// Killed reports whether the fleet's emergency stop is on: the newest row
// of kill_switch says so.
func (s *Store) Killed(ctx context.Context) (bool, error) {
	if err := s.ready(ctx); err != nil {
		return false, readErr("read the fleet's emergency stop", err)
	}
	var on bool
	err := s.pool.QueryRow(ctx, `SELECT engaged FROM kill_switch ORDER BY seq DESC LIMIT 1`).Scan(&on)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, readErr("read the fleet's emergency stop", err)
	}
	return on, nil
}
