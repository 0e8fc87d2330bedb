package postgres

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/audit"
)

const sqlInsertEvent = `INSERT INTO security_events (seq, id, trace_id, created_at, type, severity, summary, enc, prev_hash, hash)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`

// AppendEvent durably appends ev to the security-event chain under the chain
// lock, filling ev.Seq, ev.PrevHash and ev.Hash, an empty ev.ID (a UUIDv7)
// and a zero ev.CreatedAt (audit.NormalizeEvent). After an error nothing was
// stored and ev.Seq, ev.PrevHash and ev.Hash are zero.
func (s *Store) AppendEvent(ctx context.Context, ev *warden.SecurityEvent) error {
	if err := audit.NormalizeEvent(ev, s.now()); err != nil {
		return &warden.Error{Code: warden.EInvalid, Message: "cannot append " + err.Error()}
	}
	if ev.ID == "" {
		id, err := uuid.NewV7()
		if err != nil {
			return fmt.Errorf("append security event: new id: %w", err)
		}
		ev.ID = id.String()
	}
	err := s.tx(ctx, func(tx pgx.Tx) error {
		if err := lockChainsTx(ctx, tx); err != nil {
			return err
		}
		seq, prev, err := head(ctx, tx, `SELECT seq, hash FROM security_events ORDER BY seq DESC LIMIT 1`)
		if err != nil {
			return err
		}
		b := &pgx.Batch{}
		queueEvent(b, ev, seq+1, prev)
		if err := tx.SendBatch(ctx, b).Close(); err != nil {
			return fmt.Errorf("insert security event: %w", err)
		}
		if s.opt.Key != nil && ev.Seq%CheckpointEvery == 0 {
			return s.checkpoint(ctx, tx, false)
		}
		return nil
	})
	if err != nil && ambiguous(err) {
		var hash string
		cctx, cancel := contextTimeout()
		lerr := s.pool.QueryRow(cctx, `SELECT hash FROM security_events WHERE id = $1`, ev.ID).Scan(&hash)
		cancel()
		if lerr == nil && hash == ev.Hash {
			return nil
		}
	}
	if err == nil {
		s.saw(0, "", ev.Seq, ev.Hash)
	}
	if err != nil && s.offline(err) {
		ev.Seq, ev.PrevHash, ev.Hash = 0, "", ""
		if jerr := s.journal.append(journalRecord(journalEvent, audit.AppendEvent(nil, ev))); jerr != nil {
			return fmt.Errorf("append security event %s: the fleet database cannot be reached and %w", ev.Type, jerr)
		}
		return nil
	}
	if err != nil {
		ev.Seq, ev.PrevHash, ev.Hash = 0, "", ""
		if Unreachable(err) && warden.ErrorCodeOf(err) != warden.EUnavailable {
			err = unavailable("append a security event", err)
		}
		return fmt.Errorf("append security event %s: %w", ev.Type, err)
	}
	return nil
}

// queueEvent sets ev's Seq, PrevHash and Hash and queues its insert.
func queueEvent(b *pgx.Batch, ev *warden.SecurityEvent, seq int64, prev string) {
	ev.Seq, ev.PrevHash = seq, prev
	ev.Hash = audit.HashEvent(prev, ev)
	b.Queue(sqlInsertEvent, ev.Seq, col(ev.ID), col(ev.TraceID), ev.CreatedAt.UnixMilli(), col(ev.Type),
		string(ev.Severity), col(ev.Summary), audit.AppendEvent(nil, ev), ev.PrevHash, ev.Hash)
}
