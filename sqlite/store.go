package sqlite

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentwarden/warden"
)

var (
	_ warden.AuditStore = (*Store)(nil)
	_ warden.Ledger     = (*Store)(nil)
)

// errClosed is returned by every method of a closed Store.
var errClosed = errors.New("sqlite: store is closed")

// Store is warden's audit log and spend ledger in one SQLite file. It is safe
// for concurrent use; writes from one process go through its single write
// connection in turn, and writes from other processes wait on SQLite's lock.
// Use Open or OpenDeferred; the zero value is not usable.
type Store struct {
	path string
	now  func() time.Time // the clock for entries and events without CreatedAt

	mu     sync.Mutex // guards w and closed
	w      *conn      // the write connection; also serves SpentSince; nil until opened
	closed bool

	gmu        sync.Mutex // guards queue and committing (group commit, group.go)
	queue      []*pendingEntry
	committing bool
	batches    atomic.Int64 // group commits so far, for tests

	rmu sync.Mutex // guards r
	r   *conn      // the read connection, opened on first use
}

// Open opens (creating if needed) the audit database at path, brings its
// schema up to date and drains the spool into it. On an existing, current
// database it runs no DDL. An error means the database cannot be used; a
// database written by a newer warden is refused with a *warden.Error.
func Open(ctx context.Context, path string) (*Store, error) {
	s := OpenDeferred(path)
	s.mu.Lock()
	err := s.openLocked(ctx)
	s.mu.Unlock()
	if err != nil {
		return nil, err
	}
	return s, nil
}

// OpenDeferred returns a store for the database at path that opens it only
// when it must. Until then, Record without a debit and AppendEvent append to
// the spool (see spool.go): durable, but without the cost of opening SQLite,
// which is what a one-decision process like `warden check` wants. Everything
// else (a debit, SpentSince, any read, Verify) opens the database and drains
// the spool first.
func OpenDeferred(path string) *Store {
	return &Store{path: path, now: time.Now}
}

// openLocked opens the write connection and drains the spool, once. s.mu must
// be held.
func (s *Store) openLocked(ctx context.Context) error {
	if s.closed {
		return errClosed
	}
	if s.w != nil {
		return nil
	}
	w, err := openConn(ctx, s.path)
	if err != nil {
		return fmt.Errorf("open audit db %s: %w", s.path, err)
	}
	restore := w.withContext(ctx)
	err = migrate(w.c)
	restore()
	if err != nil {
		w.close()
		return fmt.Errorf("open audit db %s: %w", s.path, err)
	}
	s.w = w
	if err := s.drainLocked(ctx); err != nil {
		s.w = nil
		w.close()
		return fmt.Errorf("open audit db %s: %w", s.path, err)
	}
	return nil
}

// catchUp opens the database if needed and drains whatever other processes
// spooled since, so a read that follows sees every acknowledged decision.
func (s *Store) catchUp(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.w == nil {
		return s.openLocked(ctx)
	}
	return s.drainLocked(ctx)
}

// Close closes the database. If the write-ahead log has grown past 256 KiB, the
// last connection to close checkpoints it into the database and removes it
// (see checkpoint.go). Close is safe to call more than once.
func (s *Store) Close() error {
	// Detach the write connection first so no read can open a new connection,
	// then close the reader, so that the writer closes last and may checkpoint.
	s.mu.Lock()
	w := s.w
	s.w, s.closed = nil, true
	s.mu.Unlock()
	s.rmu.Lock()
	r := s.r
	s.r = nil
	s.rmu.Unlock()
	var errs []error
	if r != nil {
		errs = append(errs, r.close())
	}
	if w != nil {
		checkpointOnClose(w, s.path)
		errs = append(errs, w.close())
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("close audit db %s: %w", s.path, err)
	}
	return nil
}

// write runs fn in one BEGIN IMMEDIATE transaction on the write connection and
// commits it; synchronous=FULL makes the commit durable before write returns.
// If fn or the commit fails, the transaction is rolled back: nothing is stored.
func (s *Store) write(ctx context.Context, fn func(w *conn) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.openLocked(ctx); err != nil {
		return err
	}
	return s.txLocked(ctx, fn)
}

// txLocked runs fn in one BEGIN IMMEDIATE transaction on the open write
// connection. s.mu must be held.
func (s *Store) txLocked(ctx context.Context, fn func(w *conn) error) error {
	defer s.w.withContext(ctx)()
	if err := s.w.c.Exec(`BEGIN IMMEDIATE`); err != nil {
		s.w.rollback()
		return busy(fmt.Errorf("begin: %w", err))
	}
	if err := fn(s.w); err != nil {
		s.w.rollback()
		return err
	}
	if err := s.w.c.Exec(`COMMIT`); err != nil {
		s.w.rollback()
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// read runs fn on the read connection, opening it on first use, inside one
// read transaction so that fn sees a single snapshot of the database.
func (s *Store) read(ctx context.Context, fn func(r *conn) error) error {
	if err := s.catchUp(ctx); err != nil {
		return err
	}
	s.rmu.Lock()
	defer s.rmu.Unlock()
	if s.r == nil {
		if s.isClosed() {
			return errClosed
		}
		r, err := openConn(ctx, s.path)
		if err != nil {
			return fmt.Errorf("open read connection: %w", err)
		}
		if err := r.c.Exec(`PRAGMA query_only = ON`); err != nil {
			r.close()
			return fmt.Errorf("open read connection: %w", err)
		}
		s.r = r
	}
	defer s.r.withContext(ctx)()
	if err := s.r.c.Exec(`BEGIN`); err != nil {
		return busy(fmt.Errorf("begin read: %w", err))
	}
	err := fn(s.r)
	s.r.rollback() // a read transaction has nothing to commit
	return err
}

func (s *Store) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// spooling reports whether Record and AppendEvent should append to the spool:
// the database has not been opened by this store.
func (s *Store) spooling() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return spoolSupported && s.w == nil && !s.closed
}
