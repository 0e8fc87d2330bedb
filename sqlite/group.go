package sqlite

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/agentwarden/warden"
)

// Group commit. In a long-lived process (the daemon serving many hooks, the
// egress proxy), concurrent Records without a debit and concurrent
// AppendEvents share one transaction and one fdatasync: the first caller to
// find no commit in flight becomes the leader and commits everything queued
// (entries into the audit chain, events into the security-event chain, each in
// the order queued). When more arrived meanwhile, it hands the lead to the
// oldest of them and returns with its own result, so no caller waits for more
// than the commit in flight, a gathering (below) and its own commit. A lone
// caller pays exactly what a plain transaction costs.
//
// Gathering. Under steady load from many callers (the proxy's clients), the
// callers of one commit come back together after it, one of them finds no
// commit in flight and leads a commit of its own record alone, and the rest
// queue behind that: commits alternate between one record and nearly all of
// them, and every commit's fixed cost (its fdatasync, the WAL frames of the
// index leaves, page 1 and the table's interior page, the anchor) is paid
// about twice as often as the load needs. So a leader whose queue holds
// fewer than half the records of the previous commit waits for the queue to
// reach half of it, and never longer than the previous commit took (at most
// maxGather): about what its caller would have waited for a lone commit
// anyway, during which the others would have queued.
//
// A batch is all or nothing. If it fails, each of its records is committed
// again alone, so that one record that cannot be stored (an id already used)
// fails only its own caller; what fails alone too was not stored, and its
// caller gets the error: no caller acknowledges a record that was lost.

// pendingEntry is one queued record: exactly one of e and ev is set.
type pendingEntry struct {
	e    *warden.AuditEntry
	ev   *warden.SecurityEvent
	done chan error // the result; errLead first when this caller is to lead
}

// errLead tells a queued caller that it leads the next commit.
var errLead = errors.New("sqlite: lead the next group commit")

// maxGather bounds a leader's wait for others, whatever the previous commit
// took (a slow disk's fdatasync). A variable for tests.
var maxGather = 2 * time.Millisecond

// recordGrouped appends e through the group committer.
func (s *Store) recordGrouped(ctx context.Context, e *warden.AuditEntry) error {
	return s.commitGrouped(ctx, &pendingEntry{e: e, done: make(chan error, 1)})
}

// queueEventGrouped queues ev for the next group commit and returns what
// waits for its result (see QueueEvent).
func (s *Store) queueEventGrouped(ctx context.Context, ev *warden.SecurityEvent) (wait func() error) {
	p := &pendingEntry{ev: ev, done: make(chan error, 1)}
	lead := s.enqueue(p)
	return func() error { return s.await(ctx, p, lead) }
}

// commitGrouped queues p and waits for its result.
func (s *Store) commitGrouped(ctx context.Context, p *pendingEntry) error {
	return s.await(ctx, p, s.enqueue(p))
}

// enqueue queues p, reporting whether its caller is to lead the next commit
// (none was in flight).
func (s *Store) enqueue(p *pendingEntry) (lead bool) {
	s.gmu.Lock()
	s.queue = append(s.queue, p)
	if s.grown != nil && len(s.queue) >= s.want {
		close(s.grown)
		s.grown = nil
	}
	lead = !s.committing
	s.committing = true
	s.gmu.Unlock()
	return lead
}

// await waits for p's result, leading a commit when lead is set or when the
// lead is handed to it.
func (s *Store) await(ctx context.Context, p *pendingEntry, lead bool) error {
	if !lead {
		err := <-p.done
		if err != errLead {
			return err
		}
	}
	s.lead(ctx)
	return <-p.done
}

// lead commits everything queued, which includes the leader's own record,
// after gathering (see above), tells each caller its result, and hands the
// lead to the oldest caller queued since, if any. The commit does not end
// with the leader's context: a leader whose client went away must not fail
// the others' records.
func (s *Store) lead(ctx context.Context) {
	ctx = context.WithoutCancel(ctx)
	s.gmu.Lock()
	s.gatherLocked()
	batch := s.queue
	s.queue = nil
	s.gmu.Unlock()
	start := time.Now()
	err := s.commitSafe(ctx, batch)
	took := time.Since(start)
	if err != nil && len(batch) > 1 {
		for _, q := range batch {
			q.done <- s.commitSafe(ctx, []*pendingEntry{q})
		}
	} else {
		for _, q := range batch {
			q.done <- err
		}
	}
	s.gmu.Lock()
	s.lastBatch, s.lastCommit = len(batch), took
	if len(s.queue) == 0 {
		s.committing = false
	} else {
		s.queue[0].done <- errLead
	}
	s.gmu.Unlock()
}

// gatherLocked waits, when the queue holds fewer than half the records of
// the previous commit, until it holds half as many or as long as the
// previous commit took (at most maxGather). A leader's own record is
// queued, so it never waits after a commit of fewer than 4. s.gmu
// is held on entry and on return; it is released while waiting, so that
// callers can queue.
func (s *Store) gatherLocked() {
	want := s.lastBatch / 2
	if len(s.queue) >= want {
		return
	}
	grown := make(chan struct{})
	s.want, s.grown = want, grown
	t := time.NewTimer(min(s.lastCommit, maxGather))
	s.gmu.Unlock()
	select {
	case <-grown:
	case <-t.C:
	}
	t.Stop()
	s.gmu.Lock()
	s.grown = nil
}

// commitSafe is commitBatch with a panic turned into its error: nothing of
// batch was stored (the transaction is rolled back, see txLocked), and the
// leader goes on to answer every caller and give up the lead, which a panic
// escaping lead would leave taken, every later Record waiting on it.
func (s *Store) commitSafe(ctx context.Context, batch []*pendingEntry) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("commit panicked: %v", r)
			clearChains(batch)
		}
	}()
	return s.commitBatch(ctx, batch)
}

// commitBatch stores batch in one transaction; on error nothing of it is
// stored and every record's Seq, PrevHash and Hash are zero.
func (s *Store) commitBatch(ctx context.Context, batch []*pendingEntry) error {
	s.batches.Add(1)
	err := s.write(ctx, func(w *conn) error {
		var (
			seq  int64
			prev string
			read bool
		)
		for _, q := range batch {
			if q.ev != nil {
				if err := insertEvent(w, q.ev); err != nil {
					return err
				}
				continue
			}
			if !read {
				var err error
				if seq, prev, err = head(w, sqlAuditHead); err != nil {
					return err
				}
				read = true
			}
			seq++
			if err := insertEntry(w, q.e, seq, prev); err != nil {
				return err
			}
			prev = q.e.Hash
		}
		return nil
	})
	if err != nil {
		clearChains(batch)
	}
	return err
}

// clearChains zeroes the Seq, PrevHash and Hash of batch's records.
func clearChains(batch []*pendingEntry) {
	for _, q := range batch {
		if q.e != nil {
			q.e.Seq, q.e.PrevHash, q.e.Hash = 0, "", ""
		}
		if q.ev != nil {
			q.ev.Seq, q.ev.PrevHash, q.ev.Hash = 0, "", ""
		}
	}
}
