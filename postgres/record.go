package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/audit"
)

const sqlInsertAudit = `INSERT INTO audit (seq, id, trace_id, created_at, capability, action, resource, tool, tier,
	requested_by, autonomous, session, host, verdict, blocked, reason, rule, enc, prev_hash, hash)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20)`

// Record durably appends e, chained to the previous entry, and fills e.Seq,
// e.PrevHash and e.Hash (and an empty e.ID, a zero e.CreatedAt, as
// audit.NormalizeEntry does). The append runs under the fleet-wide chain lock
// (pg_advisory_xact_lock), so the chain stays one ordered chain whichever
// daemon writes; with a debit, the spend-cap check, the rate slot and the
// ledger row commit in the same transaction under the same lock, so the
// check and the debit are atomic across every process on every host. A
// debit that does not fit returns *warden.CapExceededError, a slot that does
// not *warden.RateExceededError, *warden.HoldsExceededError or
// *warden.ReplayError. After any error nothing of e was stored and e.Seq,
// e.PrevHash and e.Hash are zero.
func (s *Store) Record(ctx context.Context, e *warden.AuditEntry, debit *warden.Debit) error {
	if debit != nil && debit.Amount < 0 {
		return warden.Errorf(warden.EInvalid, "record audit entry: negative debit $%s", debit.Amount)
	}
	if err := s.prepareEntry(e); err != nil {
		return err
	}
	if debit == nil {
		err := s.recordGrouped(ctx, []*warden.AuditEntry{e}, nil)
		if err != nil && s.offline(err) {
			return s.journalEntries(e)
		}
		if err != nil {
			e.Seq, e.PrevHash, e.Hash = 0, "", ""
			return fmt.Errorf("record audit entry: %w", err)
		}
		return nil
	}
	err := s.recordGrouped(ctx, []*warden.AuditEntry{e}, debit)
	if err != nil {
		e.Seq, e.PrevHash, e.Hash = 0, "", ""
		if r := warden.DebitRefusal(err); r != nil {
			return r
		}
		return fmt.Errorf("record audit entry: %w", err)
	}
	return nil
}

// recordDebit records e with its debit in a transaction of its own.
func (s *Store) recordDebit(ctx context.Context, e *warden.AuditEntry, debit *warden.Debit) error {
	return s.appendTx(ctx, []*warden.AuditEntry{e}, func(tx pgx.Tx) error {
		return checkDebit(ctx, tx, e, debit)
	}, func(tx pgx.Tx) error {
		if debit.MovesFunds() {
			return insertDebit(ctx, tx, e, debit.Amount)
		}
		return nil
	})
}

// checkDebit checks e's debit against the cap and takes its rate slot,
// inside the transaction that holds the chain lock.
func checkDebit(ctx context.Context, tx pgx.Tx, e *warden.AuditEntry, debit *warden.Debit) error {
	if debit.MovesFunds() {
		// A release gives back every ledger row of its trace: a later
		// debit under it would be left out of the sum, free.
		var released bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM spend_releases WHERE trace_id = $1)`, col(e.TraceID)).Scan(&released); err != nil {
			return fmt.Errorf("read spend releases: %w", err)
		}
		if released {
			return warden.Errorf(warden.EConflict, "the spend reservation of trace %s was already released, so the trace cannot reserve again", e.TraceID).
				WithHint("make the request again under a new trace id")
		}
		if err := checkCap(ctx, tx, debit); err != nil {
			return err
		}
	}
	if debit.Slot != nil {
		return takeSlot(ctx, tx, e, debit.Slot)
	}
	return nil
}

// refusal reports whether err is a debit refused (the cap, a rate limit,
// held asks, a replayed request id), as opposed to a failure.
func refusal(err error) bool { return warden.DebitRefusal(err) != nil }

// offline reports whether err is the database out of reach while this
// store has a journal to take what needs no shared state.
func (s *Store) offline(err error) bool {
	return s.journal != nil && !errors.Is(err, errClosed) && Unreachable(err)
}

// journalEntries appends es to the journal, to be chained when the
// database answers; until then their Seq, PrevHash and Hash are zero.
func (s *Store) journalEntries(es ...*warden.AuditEntry) error {
	recs := make([][]byte, len(es))
	for i, e := range es {
		e.Seq, e.PrevHash, e.Hash = 0, "", ""
		recs[i] = journalRecord(journalEntry, audit.AppendEntry(nil, e))
	}
	if err := s.journal.append(recs...); err != nil {
		return fmt.Errorf("record audit entry: the fleet database cannot be reached and %w", err)
	}
	return nil
}

// RecordBatch appends es in order in one transaction. If any entry cannot be
// stored, none is, and every entry's Seq, PrevHash and Hash are zero.
func (s *Store) RecordBatch(ctx context.Context, es []*warden.AuditEntry) error {
	if len(es) == 0 {
		return nil
	}
	for _, e := range es {
		if err := s.prepareEntry(e); err != nil {
			return err
		}
	}
	err := s.appendTx(ctx, es, nil, nil)
	if err != nil && s.offline(err) {
		return s.journalEntries(es...)
	}
	if err != nil {
		for _, e := range es {
			e.Seq, e.PrevHash, e.Hash = 0, "", ""
		}
		return fmt.Errorf("record audit batch of %d: %w", len(es), err)
	}
	return nil
}

// appendTx appends es under the chain lock in one transaction: before runs
// first (the cap and slot checks), after once the entries are in (the
// ledger row). A commit whose outcome the lost connection hid is settled by
// looking the first entry up.
func (s *Store) appendTx(ctx context.Context, es []*warden.AuditEntry, before, after func(tx pgx.Tx) error) error {
	err := s.tx(ctx, func(tx pgx.Tx) error {
		if err := lockChainsTx(ctx, tx); err != nil {
			return err
		}
		if before != nil {
			if err := before(tx); err != nil {
				return err
			}
		}
		seq, prev, err := head(ctx, tx, `SELECT seq, hash FROM audit ORDER BY seq DESC LIMIT 1`)
		if err != nil {
			return err
		}
		first := seq
		b := &pgx.Batch{}
		for _, e := range es {
			seq++
			queueEntry(b, e, seq, prev)
			prev = e.Hash
		}
		if err := tx.SendBatch(ctx, b).Close(); err != nil {
			return fmt.Errorf("insert audit rows: %w", err)
		}
		if after != nil {
			if err := after(tx); err != nil {
				return err
			}
		}
		if s.opt.Key != nil && seq/CheckpointEvery > first/CheckpointEvery {
			return s.checkpoint(ctx, tx, false)
		}
		return nil
	})
	if err != nil && ambiguous(err) {
		if ok, lerr := s.committed(es[0]); lerr == nil && ok {
			err = nil
		}
	}
	if err == nil {
		last := es[len(es)-1]
		s.saw(last.Seq, last.Hash, 0, "")
		return nil
	}
	if Unreachable(err) && warden.ErrorCodeOf(err) != warden.EUnavailable {
		return unavailable("record", err)
	}
	return err
}

// committed reports whether e is in the log as Record chained it: the
// outcome of a commit the connection lost.
func (s *Store) committed(e *warden.AuditEntry) (bool, error) {
	ctx, cancel := contextTimeout()
	defer cancel()
	var seq int64
	var hash string
	err := s.pool.QueryRow(ctx, `SELECT seq, hash FROM audit WHERE id = $1`, e.ID).Scan(&seq, &hash)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return seq == e.Seq && hash == e.Hash, nil
}

// prepareEntry assigns an ID and normalises e before the transaction starts.
func (s *Store) prepareEntry(e *warden.AuditEntry) error {
	if err := audit.NormalizeEntry(e, s.now()); err != nil {
		return &warden.Error{Code: warden.EInvalid, Message: "cannot record " + err.Error()}
	}
	if e.ID == "" {
		id, err := uuid.NewV7()
		if err != nil {
			return fmt.Errorf("record audit entry: new id: %w", err)
		}
		e.ID = id.String()
	}
	return nil
}

// head returns the seq and hash of the last row of a chain, or 0 and
// audit.GenesisHash when it is empty.
func head(ctx context.Context, q querier, sql string) (int64, string, error) {
	var seq int64
	var hash string
	err := q.QueryRow(ctx, sql).Scan(&seq, &hash)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, audit.GenesisHash, nil
	}
	if err != nil {
		return 0, "", fmt.Errorf("read chain head: %w", err)
	}
	return seq, hash, nil
}

// queueEntry sets e's Seq, PrevHash and Hash and queues its insert.
func queueEntry(b *pgx.Batch, e *warden.AuditEntry, seq int64, prev string) {
	e.Seq, e.PrevHash = seq, prev
	enc := audit.AppendEntry(nil, e)
	e.Hash = audit.HashEntry(prev, e)
	b.Queue(sqlInsertAudit, e.Seq, col(e.ID), col(e.TraceID), e.CreatedAt.UnixMilli(), col(e.Capability), col(e.Action),
		col(e.Resource), col(e.Tool), int16(e.Tier), col(e.RequestedBy), e.Autonomous, col(e.Session), col(e.Host),
		e.Verdict.String(), e.Blocked, col(e.Reason), col(e.Rule), enc, e.PrevHash, e.Hash)
}

// col is s as a query column holds it: PostgreSQL text is UTF-8 without
// NUL, so other bytes become U+FFFD there. The row's exact bytes are in its
// enc column, which is what reads return and the hash covers.
func col(s string) string {
	if strings.IndexByte(s, 0) >= 0 {
		s = strings.ReplaceAll(s, "\x00", "\uFFFD")
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}
