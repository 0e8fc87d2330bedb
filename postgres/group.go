package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agentwarden/warden"
)

// Group commit: concurrent Records share one transaction (one chain lock,
// one commit, one fsync on the server). The first caller to find no commit
// under way leads: it commits everything queued, in one group with its own
// timeout, and hands the lead to the oldest caller queued meanwhile, if any,
// which commits the next group; the others wait for their entry's outcome.
// So no caller waits for more than the group in flight and its own: a
// leader that committed group after group until the queue ran dry kept its
// own answer for as long as others kept coming (a hook past its host's
// timeout, which the host takes as no objection). Entries without a debit go in first, in one pipelined batch;
// then each debit in turn, inside a savepoint: its cap check and rate slot
// see everything before it in the transaction, and a debit refused (the
// cap, a limit) is rolled back to its savepoint alone and refused. A
// group that fails otherwise is retried entry by entry, so every outcome is
// an entry's own: after an error nothing of it was stored.

type pendingRecord struct {
	es    []*warden.AuditEntry
	debit *warden.Debit // nil: no debit (then es may hold several)
	done  chan error
}

// groupTimeout bounds one group commit, whose leader's context may end
// before the entries of others in it are stored (a variable for tests).
var groupTimeout = 30 * time.Second

func (s *Store) recordGrouped(ctx context.Context, es []*warden.AuditEntry, debit *warden.Debit) error {
	if err := ctx.Err(); err != nil {
		return err // nothing queued: nothing stored
	}
	p := &pendingRecord{es: es, debit: debit, done: make(chan error, 1)}
	s.gmu.Lock()
	s.queue = append(s.queue, p)
	lead := !s.committing
	s.committing = true
	s.gmu.Unlock()
	if !lead {
		if err := <-p.done; err != errLead {
			return err
		}
	}
	s.lead(ctx)
	return <-p.done
}

// errLead tells a queued caller that it leads the next group commit.
var errLead = errors.New("postgres: lead the next group commit")

// lead commits everything queued, which includes the leader's own record,
// as one group, and hands the lead to the oldest caller queued since, if
// any. The group has its own timeout and does not end with the leader's
// context: a leader whose client went away must not fail the others'.
func (s *Store) lead(ctx context.Context) {
	s.gmu.Lock()
	batch := s.queue
	s.queue = nil
	s.gmu.Unlock()
	gctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), groupTimeout)
	s.commitGroup(gctx, batch)
	cancel()
	s.gmu.Lock()
	if len(s.queue) == 0 {
		s.committing = false
	} else {
		s.queue[0].done <- errLead
	}
	s.gmu.Unlock()
}

// one records p in a transaction of its own.
func (s *Store) one(ctx context.Context, p *pendingRecord) error {
	return safely(func() error {
		if p.debit != nil {
			return s.recordDebit(ctx, p.es[0], p.debit)
		}
		return s.appendTx(ctx, p.es, nil, nil)
	})
}

// safely runs fn with a panic turned into its error. A commit that panics
// is rolled back (txRaw's deferred Rollback) and fails its own records; the
// leader goes on to answer every caller and give up the lead, which a panic
// escaping recordGrouped would leave taken, every later Record waiting.
func safely(fn func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("commit panicked: %v", r)
		}
	}()
	return fn()
}

func (s *Store) commitGroup(ctx context.Context, batch []*pendingRecord) {
	if len(batch) == 1 {
		batch[0].done <- s.one(ctx, batch[0])
		return
	}
	refused := make([]error, len(batch))
	err := safely(func() error {
		return s.tx(ctx, func(tx pgx.Tx) error {
			return s.groupTx(ctx, tx, batch, refused)
		})
	})
	if err != nil && ambiguous(err) {
		// The commit's answer was lost: what the log holds decides.
		for i, p := range batch {
			if refused[i] != nil {
				p.done <- refused[i]
				continue
			}
			if ok, lerr := s.committed(p.es[0]); lerr == nil && ok {
				p.done <- nil
			} else {
				p.done <- unavailable("record", err)
			}
		}
		return
	}
	switch {
	case err == nil:
		var last *warden.AuditEntry
		for i, p := range batch {
			for _, e := range p.es {
				if refused[i] == nil && (last == nil || e.Seq > last.Seq) {
					last = e
				}
			}
		}
		if last != nil {
			s.saw(last.Seq, last.Hash, 0, "")
		}
		for i, p := range batch {
			p.done <- refused[i]
		}
	case s.offline(err) || Unreachable(err):
		if warden.ErrorCodeOf(err) != warden.EUnavailable {
			err = unavailable("record", err)
		}
		for _, p := range batch {
			p.done <- err // each caller journals its own (no debit) or is denied
		}
	default:
		for _, p := range batch {
			p.done <- s.one(ctx, p)
		}
	}
}

// groupTx appends the group's entries under the chain lock; refused[i] is
// set for each debit refused (rolled back to its savepoint).
func (s *Store) groupTx(ctx context.Context, tx pgx.Tx, batch []*pendingRecord, refused []error) error {
	if err := lockChainsTx(ctx, tx); err != nil {
		return err
	}
	seq, prev, err := head(ctx, tx, `SELECT seq, hash FROM audit ORDER BY seq DESC LIMIT 1`)
	if err != nil {
		return err
	}
	first := seq
	b := &pgx.Batch{}
	for _, p := range batch {
		if p.debit == nil {
			for _, e := range p.es {
				seq++
				queueEntry(b, e, seq, prev)
				prev = e.Hash
			}
		}
	}
	if b.Len() > 0 {
		if err := tx.SendBatch(ctx, b).Close(); err != nil {
			return fmt.Errorf("insert audit rows: %w", err)
		}
	}
	for i, p := range batch {
		if p.debit == nil {
			continue
		}
		e := p.es[0]
		if _, err := tx.Exec(ctx, `SAVEPOINT debit`); err != nil {
			return err
		}
		derr := checkDebit(ctx, tx, e, p.debit)
		if derr == nil {
			db := &pgx.Batch{}
			queueEntry(db, e, seq+1, prev)
			if p.debit.MovesFunds() {
				db.Queue(`INSERT INTO spend_ledger (created_at, trace_id, amount_micros) VALUES ($1, $2, $3)`,
					e.CreatedAt.UnixMilli(), col(e.TraceID), int64(p.debit.Amount))
			}
			derr = tx.SendBatch(ctx, db).Close()
		}
		if derr != nil {
			if _, err := tx.Exec(ctx, `ROLLBACK TO SAVEPOINT debit`); err != nil {
				return err
			}
			if !refusal(derr) {
				return derr // a failure, not a refusal: the group goes one by one
			}
			e.Seq, e.PrevHash, e.Hash = 0, "", ""
			refused[i] = derr
			continue
		}
		if _, err := tx.Exec(ctx, `RELEASE SAVEPOINT debit`); err != nil {
			return err
		}
		seq++
		prev = e.Hash
	}
	if s.opt.Key != nil && seq/CheckpointEvery > first/CheckpointEvery {
		return s.checkpoint(ctx, tx, false)
	}
	return nil
}
