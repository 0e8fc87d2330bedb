package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agentwarden/warden/audit"
)

// CheckpointEvery is how many rows of a chain separate two keyed
// checkpoints; a long-lived store also takes one when it closes.
const CheckpointEvery = 100

// checkpoint stores a keyed checkpoint of both chains as they stand, inside
// the caller's transaction, which holds the chain lock (taken here when not).
// Unless force, the caller has decided one is due; with force, one is taken
// only when the chains moved since the last.
func (s *Store) checkpoint(ctx context.Context, tx pgx.Tx, force bool) error {
	if force {
		if err := lockChainsTx(ctx, tx); err != nil {
			return err
		}
	}
	ck, err := chainState(ctx, tx)
	if err != nil {
		return err
	}
	var last audit.Checkpoint
	var seq int64
	err = tx.QueryRow(ctx, `SELECT seq, audit_rows, audit_head, event_rows, event_head FROM chain_checkpoints ORDER BY seq DESC LIMIT 1`).
		Scan(&seq, &last.AuditRows, &last.AuditHead, &last.EventRows, &last.EventHead)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("read the last checkpoint: %w", err)
	}
	if force && last == ck || ck.Total() == 0 {
		return nil
	}
	if _, err := tx.Exec(ctx, `INSERT INTO chain_checkpoints (seq, created_at, audit_rows, audit_head, event_rows, event_head, mac)
VALUES ($1, $2, $3, $4, $5, $6, $7)`, seq+1, s.now().UnixMilli(), ck.AuditRows, ck.AuditHead, ck.EventRows, ck.EventHead, ck.MAC(s.opt.Key)); err != nil {
		return fmt.Errorf("store a checkpoint: %w", err)
	}
	return nil
}

// chainState reads where both chains stand.
func chainState(ctx context.Context, q querier) (audit.Checkpoint, error) {
	var ck audit.Checkpoint
	var err error
	if ck.AuditRows, ck.AuditHead, err = head(ctx, q, `SELECT seq, hash FROM audit ORDER BY seq DESC LIMIT 1`); err != nil {
		return ck, err
	}
	if ck.EventRows, ck.EventHead, err = head(ctx, q, `SELECT seq, hash FROM security_events ORDER BY seq DESC LIMIT 1`); err != nil {
		return ck, err
	}
	return ck, nil
}

// contextTimeout is the context of the short follow-up queries that settle
// a lost commit.
func contextTimeout() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), 5*time.Second)
}
