package sqlite

import (
	"context"

	"github.com/agentwarden/warden"
)

// Group commit. In a long-lived process (the daemon serving many hooks),
// concurrent Records without a debit share one transaction and one fsync: the
// first caller to find no commit in flight becomes the leader and commits
// everything queued, repeating while more arrives; the others wait for their
// batch's result. A batch is all or nothing: if it fails, every entry in it
// fails and nothing of it was stored, so no caller acknowledges a decision that
// was lost. A lone caller pays exactly what a plain transaction costs.

type pendingEntry struct {
	e    *warden.AuditEntry
	done chan error
}

// recordGrouped appends e through the group committer.
func (s *Store) recordGrouped(ctx context.Context, e *warden.AuditEntry) error {
	p := &pendingEntry{e: e, done: make(chan error, 1)}
	s.gmu.Lock()
	s.queue = append(s.queue, p)
	if s.committing {
		s.gmu.Unlock()
		return <-p.done
	}
	s.committing = true
	for len(s.queue) > 0 {
		batch := s.queue
		s.queue = nil
		s.gmu.Unlock()
		err := s.commitBatch(ctx, batch)
		for _, q := range batch {
			q.done <- err
		}
		s.gmu.Lock()
	}
	s.committing = false
	s.gmu.Unlock()
	return <-p.done
}

func (s *Store) commitBatch(ctx context.Context, batch []*pendingEntry) error {
	s.batches.Add(1)
	err := s.write(ctx, func(w *conn) error {
		seq, prev, err := head(w, sqlAuditHead)
		if err != nil {
			return err
		}
		for _, q := range batch {
			seq++
			if err := insertEntry(w, q.e, seq, prev); err != nil {
				return err
			}
			prev = q.e.Hash
		}
		return nil
	})
	if err != nil {
		for _, q := range batch {
			q.e.Seq, q.e.PrevHash, q.e.Hash = 0, "", ""
		}
	}
	return err
}
