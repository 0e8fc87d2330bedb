package postgres

import (
	"context"
	"time"

	"github.com/agentwarden/warden"
)

// Group commit: concurrent Records without a debit share one transaction
// (one chain lock, one commit, one fsync on the server). The first caller
// to find no commit under way leads: it commits everything queued, then
// whatever queued meanwhile, until the queue is empty; the others wait for
// their entries' outcome. A batch that fails is retried entry by entry, so
// one bad entry (a duplicate id) fails alone, and an entry's outcome is
// always its own: after an error nothing of it was stored.

type pendingRecord struct {
	es   []*warden.AuditEntry
	done chan error
}

// groupTimeout bounds one group commit, whose caller's context may end
// before the entries of others in it are stored.
const groupTimeout = 30 * time.Second

func (s *Store) recordGrouped(ctx context.Context, es []*warden.AuditEntry) error {
	p := &pendingRecord{es: es, done: make(chan error, 1)}
	s.gmu.Lock()
	s.queue = append(s.queue, p)
	if s.committing {
		s.gmu.Unlock()
		return <-p.done
	}
	s.committing = true
	gctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), groupTimeout)
	defer cancel()
	for len(s.queue) > 0 {
		batch := s.queue
		s.queue = nil
		s.gmu.Unlock()
		s.commitGroup(gctx, batch)
		s.gmu.Lock()
	}
	s.committing = false
	s.gmu.Unlock()
	return <-p.done
}

func (s *Store) commitGroup(ctx context.Context, batch []*pendingRecord) {
	if len(batch) == 1 {
		batch[0].done <- s.appendTx(ctx, batch[0].es, nil, nil)
		return
	}
	var all []*warden.AuditEntry
	for _, p := range batch {
		all = append(all, p.es...)
	}
	err := s.appendTx(ctx, all, nil, nil)
	if err == nil {
		for _, p := range batch {
			p.done <- nil
		}
		return
	}
	if s.offline(err) {
		for _, p := range batch {
			p.done <- err // each caller journals its own, in the order they return
		}
		return
	}
	for _, p := range batch {
		p.done <- s.appendTx(ctx, p.es, nil, nil)
	}
}
