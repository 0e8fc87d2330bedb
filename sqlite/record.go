package sqlite

import (
	"context"
	"fmt"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/audit"
	"github.com/google/uuid"
	"github.com/ncruces/go-sqlite3"
)

// auditColumns lists the audit table's columns in the order scanEntry reads
// them and insertEntry binds them.
const auditColumns = `seq, id, trace_id, created_at, capability, action, resource, tool, tier, args,
	context, requested_by, autonomous, session, host, raw, verdict, blocked, block_reason, reason,
	rule, result, output, error, duration, prev_hash, hash, stages`

const (
	sqlAuditHead   = `SELECT seq, hash FROM audit ORDER BY seq DESC LIMIT 1`
	sqlInsertAudit = `INSERT INTO audit (` + auditColumns + `)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
)

// Record durably appends e, chained to the previous entry, and fills e.Seq,
// e.PrevHash and e.Hash; it also fills an empty e.ID (a UUIDv7) and a zero
// e.CreatedAt (now), keeps CreatedAt at millisecond precision and truncates
// e.Output (audit.NormalizeEntry). With a debit, the spend-cap check, the
// ledger row (dated at e.CreatedAt, with e.TraceID) and the entry commit in one
// BEGIN IMMEDIATE transaction, so the check and the debit are atomic across
// processes; so does the debit's rate slot. A debit that does not fit returns
// *warden.CapExceededError, a slot that does not *warden.RateExceededError,
// *warden.HoldsExceededError or *warden.ReplayError. After
// any error nothing of e (and no debit) was stored, and e.Seq, e.PrevHash and
// e.Hash are zero.
func (s *Store) Record(ctx context.Context, e *warden.AuditEntry, debit *warden.Debit) error {
	return storageAt(s.path, s.record(ctx, e, debit))
}

func (s *Store) record(ctx context.Context, e *warden.AuditEntry, debit *warden.Debit) error {
	if debit != nil && debit.Amount < 0 {
		return warden.Errorf(warden.EInvalid, "record audit entry: negative debit $%s", debit.Amount)
	}
	if err := s.prepareEntry(e); err != nil {
		return err
	}
	if debit == nil {
		if s.spooling() {
			ok, err := s.spoolReady(ctx)
			if err != nil {
				return fmt.Errorf("record audit entry: %w", err)
			}
			if ok {
				return s.spool(ctx, e)
			}
		}
		if err := s.recordGrouped(ctx, e); err != nil {
			return fmt.Errorf("record audit entry: %w", err)
		}
		return nil
	}
	err := s.write(ctx, func(w *conn) error {
		if debit.MovesFunds() {
			if err := checkCap(w, debit); err != nil {
				return err
			}
		}
		if debit.Slot != nil {
			if err := takeSlot(w, e, debit.Slot); err != nil {
				return err
			}
		}
		seq, prev, err := head(w, sqlAuditHead)
		if err != nil {
			return err
		}
		if err := insertEntry(w, e, seq+1, prev); err != nil {
			return err
		}
		if debit.MovesFunds() {
			return insertDebit(w, e, debit.Amount)
		}
		return nil
	})
	if err != nil {
		e.Seq, e.PrevHash, e.Hash = 0, "", ""
		if r := warden.DebitRefusal(err); r != nil {
			return r
		}
		return fmt.Errorf("record audit entry: %w", err)
	}
	return nil
}

// RecordBatch appends es in order in one transaction (one fsync for all of
// them), preparing each entry as Record does. If any entry cannot be stored,
// none is, and every entry's Seq, PrevHash and Hash are zero.
func (s *Store) RecordBatch(ctx context.Context, es []*warden.AuditEntry) error {
	if len(es) == 0 {
		return nil
	}
	for _, e := range es {
		if err := s.prepareEntry(e); err != nil {
			return err
		}
	}
	err := s.write(ctx, func(w *conn) error {
		seq, prev, err := head(w, sqlAuditHead)
		if err != nil {
			return err
		}
		for _, e := range es {
			seq++
			if err := insertEntry(w, e, seq, prev); err != nil {
				return err
			}
			prev = e.Hash
		}
		return nil
	})
	if err != nil {
		for _, e := range es {
			e.Seq, e.PrevHash, e.Hash = 0, "", ""
		}
		return fmt.Errorf("record audit batch of %d: %w", len(es), err)
	}
	return nil
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
func head(w *conn, query string) (int64, string, error) {
	st, err := w.prepare(query)
	if err != nil {
		return 0, "", err
	}
	defer st.Reset()
	if !st.Step() {
		if err := st.Err(); err != nil {
			return 0, "", fmt.Errorf("read chain head: %w", err)
		}
		return 0, audit.GenesisHash, nil
	}
	return st.ColumnInt64(0), st.ColumnText(1), nil
}

// insertEntry sets e's Seq, PrevHash and Hash and inserts it, its stage
// answers in its stages column.
func insertEntry(w *conn, e *warden.AuditEntry, seq int64, prev string) error {
	stages, err := encodeStages(e.Stages)
	if err != nil {
		return fmt.Errorf("insert audit row: %w", err)
	}
	e.Seq, e.PrevHash = seq, prev
	e.Hash = audit.HashEntry(prev, e)
	st, err := w.prepare(sqlInsertAudit)
	if err != nil {
		return err
	}
	b := binder{st: st}
	b.int(e.Seq)
	b.text(e.ID)
	b.text(e.TraceID)
	b.int(e.CreatedAt.UnixMilli())
	b.text(e.Capability)
	b.text(e.Action)
	b.text(e.Resource)
	b.text(e.Tool)
	b.int(int64(e.Tier))
	b.json(e.Args)
	b.text(e.Context)
	b.text(e.RequestedBy)
	b.bool(e.Autonomous)
	b.text(e.Session)
	b.text(e.Host)
	b.json(e.Raw)
	b.text(e.Verdict.String())
	b.bool(e.Blocked)
	b.text(e.BlockReason)
	b.text(e.Reason)
	b.text(e.Rule)
	b.json(e.Result)
	b.text(e.Output)
	b.text(e.Error)
	b.int(int64(e.Duration))
	b.text(e.PrevHash)
	b.text(e.Hash)
	b.json(stages)
	if err := b.exec(); err != nil {
		return fmt.Errorf("insert audit row: %w", err)
	}
	return nil
}

// binder binds parameters 1, 2, 3… in turn without boxing them, keeping the
// first error.
type binder struct {
	st  *sqlite3.Stmt
	n   int
	err error
}

func (b *binder) next() int {
	b.n++
	return b.n
}

func (b *binder) keep(err error) {
	if b.err == nil {
		b.err = err
	}
}

func (b *binder) int(v int64)   { b.keep(b.st.BindInt64(b.next(), v)) }
func (b *binder) text(v string) { b.keep(b.st.BindText(b.next(), v)) }
func (b *binder) bool(v bool)   { b.keep(b.st.BindBool(b.next(), v)) }

func (b *binder) json(v []byte) {
	if len(v) == 0 {
		b.keep(b.st.BindNull(b.next()))
		return
	}
	b.keep(b.st.BindRawText(b.next(), v))
}

// exec runs the bound statement and resets it.
func (b *binder) exec() error {
	if b.err != nil {
		b.st.Reset()
		return b.err
	}
	return b.st.Exec()
}
