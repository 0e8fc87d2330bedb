package sqlite

import (
	"context"
	"errors"
	"fmt"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/audit"
	"github.com/google/uuid"
	"github.com/ncruces/go-sqlite3"
)

// eventColumns lists the security_events columns in the order scanEvent reads
// them and AppendEvent binds them.
const eventColumns = `seq, id, trace_id, created_at, type, severity, summary, metadata, prev_hash, hash`

const (
	sqlEventHead   = `SELECT seq, hash FROM security_events ORDER BY seq DESC LIMIT 1`
	sqlInsertEvent = `INSERT INTO security_events (` + eventColumns + `) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
)

// AppendEvent durably appends ev to the security-event chain, filling ev.Seq,
// ev.PrevHash and ev.Hash, an empty ev.ID (a UUIDv7) and a zero ev.CreatedAt
// (audit.NormalizeEvent). A store that has not opened its database (see
// OpenDeferred) appends ev to the spool instead, as Record does for entries:
// durable (fdatasync'd) when AppendEvent returns nil, chained when the spool is
// drained, which every read does first; until then ev.Seq, ev.PrevHash and
// ev.Hash are zero. An event whose encoding is above the spool's 8 MiB record
// limit is then refused. Concurrent appends share a commit with each other
// and with concurrent Records (group.go). An event the database stays locked
// for (by other processes, past BusyTimeout or the caller's context) goes to
// the spool as well: a security event records what happened, and must not
// be lost to contention. After an error nothing was stored and ev.Seq,
// ev.PrevHash and ev.Hash are zero.
func (s *Store) AppendEvent(ctx context.Context, ev *warden.SecurityEvent) error {
	err := s.QueueEvent(ctx, ev)()
	if err != nil && errors.Is(err, sqlite3.BUSY) && ev.ID != "" {
		ev.Seq, ev.PrevHash, ev.Hash = 0, "", ""
		if serr := s.spoolEvent(context.WithoutCancel(ctx), ev); serr == nil {
			return nil
		}
	}
	return storageAt(s.path, err)
}

// QueueEvent is AppendEvent in two steps, for a caller that must not wait
// for the commit but needs its events in order (the egress proxy's request
// log, written after the answer went out). When QueueEvent returns, ev is
// queued for the next group commit behind everything queued before it, so a
// Record or AppendEvent that is queued later and returns nil implies ev is
// stored too (or failed alone: a batch that fails is retried record by
// record). wait must be called exactly once, and soon (until it is, a
// commit it is to lead waits for it): it may lead the commit that
// stores ev and others' records, and returns what AppendEvent would have. A
// store that is spooling appends ev to the spool before QueueEvent returns.
func (s *Store) QueueEvent(ctx context.Context, ev *warden.SecurityEvent) (wait func() error) {
	if err := audit.NormalizeEvent(ev, s.now()); err != nil {
		return failed(&warden.Error{Code: warden.EInvalid, Message: "cannot append " + err.Error()})
	}
	if ev.ID == "" {
		id, err := uuid.NewV7()
		if err != nil {
			return failed(fmt.Errorf("append security event: new id: %w", err))
		}
		ev.ID = id.String()
	}
	if s.spooling() {
		ev.Seq, ev.PrevHash, ev.Hash = 0, "", ""
		ok, err := s.spoolReady(ctx)
		if err != nil {
			return failed(fmt.Errorf("append security event %s: %w", ev.Type, err))
		}
		if ok {
			return failed(s.spoolEvent(ctx, ev))
		}
	}
	queued := s.queueEventGrouped(ctx, ev)
	return func() error {
		if err := queued(); err != nil {
			return fmt.Errorf("append security event %s: %w", ev.Type, err)
		}
		return nil
	}
}

// failed is a wait that returns err.
func failed(err error) func() error { return func() error { return err } }

// insertEvent chains ev after the last security event and inserts it, inside
// the caller's write transaction.
func insertEvent(w *conn, ev *warden.SecurityEvent) error {
	seq, prev, err := head(w, sqlEventHead)
	if err != nil {
		return err
	}
	ev.Seq, ev.PrevHash = seq+1, prev
	ev.Hash = audit.HashEvent(prev, ev)
	st, err := w.prepare(sqlInsertEvent)
	if err != nil {
		return err
	}
	b := binder{st: st}
	b.int(ev.Seq)
	b.text(ev.ID)
	b.text(ev.TraceID)
	b.int(ev.CreatedAt.UnixMilli())
	b.text(ev.Type)
	b.text(string(ev.Severity))
	b.text(ev.Summary)
	b.json(ev.Metadata)
	b.text(ev.PrevHash)
	b.text(ev.Hash)
	return b.exec()
}
