package sqlite

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
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

	gmu        sync.Mutex // guards queue, committing and the gathering state below (group commit, group.go)
	queue      []*pendingEntry
	committing bool
	lastBatch  int           // records in the previous group commit
	lastCommit time.Duration // how long the previous group commit took
	want       int           // a gathering leader waits for this many queued records
	grown      chan struct{} // closed by enqueue once the queue holds want; nil when no leader gathers
	batches    atomic.Int64  // group commits so far, for tests
	opened     atomic.Bool   // the database has been opened (spooling)

	rmu sync.Mutex // guards r
	r   *conn      // the read connection, opened on first use

	// The chain anchor (anchor.go); all guarded by mu.
	opt          Options
	anchor       *anchorFile // nil: no anchor (yet)
	key          []byte      // the checkpoint key; never printed
	dev, ino     uint64      // identity of the database file s.w has open
	lastAnchor   anchorState // what the anchor holds as far as this store knows
	anchorErr    error       // the last anchor write that failed
	ckAudit      int64       // rows of each chain at the last checkpoint known
	ckEvent      int64
	ckStored     bool      // a checkpoint is stored
	found        *findings // Inspect: what the checks found
	unreadable   error     // the database file exists but SQLite cannot read it
	broken       error     // once set, every operation fails with it
	lostReported bool      // the loss was recorded as a security event
	spoolOnly    bool      // Inspect: Verify found only the spool's tail missing
	recovery     *recovery // Recover: the first rows of the new chains
}

// Open opens (creating if needed) the audit database at path, brings its
// schema up to date and drains the spool into it. On an existing, current
// database it runs no DDL. An error means the database cannot be used; a
// database written by a newer warden is refused with a *warden.Error.
// It is OpenWith with zero Options: a bare store without an anchor.
func Open(ctx context.Context, path string) (*Store, error) {
	return OpenWith(ctx, path, Options{})
}

// OpenWith is Open with options. With an anchor, a database that is missing,
// holds fewer rows than the anchor recorded or differs from it, or a spool
// that lost its tail, is refused with a *warden.Error whose cause is
// ErrLost (unless opt.Inspect), and a critical security event is spooled.
func OpenWith(ctx context.Context, path string, opt Options) (*Store, error) {
	s := OpenDeferredWith(path, opt)
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
	return OpenDeferredWith(path, Options{})
}

// OpenDeferredWith is OpenDeferred with options. With an anchor, a spooling
// store makes sure first, cheaply, that the database is there and is the
// file the anchor was last written for; when it is not, it opens the
// database, which runs every check OpenWith runs.
func OpenDeferredWith(path string, opt Options) *Store {
	if opt.Anchor == "" {
		opt.Create = true
	}
	return &Store{path: path, now: time.Now, opt: opt}
}

// openLocked opens the write connection and drains the spool, once. s.mu must
// be held.
func (s *Store) openLocked(ctx context.Context) error {
	if s.closed {
		return errClosed
	}
	if s.broken != nil {
		return s.broken
	}
	if s.w != nil {
		return nil
	}
	if s.opt.Anchor == "" {
		return s.openBareLocked(ctx)
	}
	err := s.openAnchoredLocked(ctx)
	if err != nil && s.w != nil {
		s.w.close()
		s.w = nil
	}
	return err
}

// openBareLocked opens a store without an anchor.
func (s *Store) openBareLocked(ctx context.Context) error {
	w, err := openConn(ctx, s.path, true)
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

// openAnchoredLocked opens the database without creating it (unless the
// home is new and opt.Create), checks it and the spool against the anchor,
// migrates it and drains the spool. On error the caller closes s.w.
func (s *Store) openAnchoredLocked(ctx context.Context) error {
	before, statErr := os.Stat(s.path)
	missing := errors.Is(statErr, fs.ErrNotExist)
	if statErr != nil && !missing {
		return fmt.Errorf("open audit db %s: %w", s.path, statErr)
	}
	if !missing {
		w, err := openConn(ctx, s.path, false)
		if err != nil && !unreadable(err) {
			return fmt.Errorf("open audit db %s: %w", s.path, err)
		}
		if err == nil {
			s.w = w
			after, serr := os.Stat(s.path)
			if serr != nil || !os.SameFile(before, after) {
				return fmt.Errorf("open audit db %s: the file changed while it was opened", s.path)
			}
			s.dev, s.ino = fileID(after)
			var v int
			v, err = userVersion(w.c)
			if err != nil && !unreadable(err) {
				return fmt.Errorf("open audit db %s: %w", s.path, err)
			}
			if err == nil && v == 0 {
				// An empty file, or one with no schema: not a database this
				// home ever wrote to.
				missing = true
			}
		}
		if err != nil {
			// Damaged (cut short, overwritten): what it held is lost as if
			// it were missing, and it is never written to.
			if s.w != nil {
				s.w.close()
				s.w = nil
			}
			s.unreadable, missing = err, true
		}
	}
	hadKey := fileExists(s.opt.Key)
	f, have, err := s.checkHomeLocked(missing)
	if err != nil {
		return fmt.Errorf("open audit db %s: %w", s.path, err)
	}
	if !f.empty() {
		if s.opt.Inspect {
			s.found = f
			return nil // Verify reports it; nothing is written
		}
		s.fail(f)
		return s.broken
	}
	if missing {
		// A new home (opt.Create, no anchor): create the database.
		if s.w != nil {
			s.w.close()
			s.w = nil
		}
		w, err := openConn(ctx, s.path, true)
		if err != nil {
			return fmt.Errorf("create audit db %s: %w", s.path, err)
		}
		s.w = w
		fi, err := os.Stat(s.path)
		if err != nil {
			return fmt.Errorf("create audit db %s: %w", s.path, err)
		}
		s.dev, s.ino = fileID(fi)
	}
	restore := s.w.withContext(ctx)
	err = migrate(s.w.c)
	restore()
	if err != nil {
		return fmt.Errorf("open audit db %s: %w", s.path, err)
	}
	if s.ckAudit, s.ckEvent, s.ckStored, err = lastCheckpoint(s.w); err != nil {
		return fmt.Errorf("open audit db %s: %w", s.path, err)
	}
	if !have {
		how := anchorUpgraded
		switch {
		case missing && hadKey:
			how = anchorRecreated
		case missing:
			how = anchorNew
		}
		if err := s.anchorNewLocked(ctx, how); err != nil {
			return fmt.Errorf("anchor audit db %s: %w", s.path, err)
		}
	}
	if s.opt.Inspect {
		// Verify drains a spool that is whole, and only reports one that is
		// not.
		g := &findings{}
		if s.anchor != nil {
			if err := inspectSpool(s.path+spoolSuffix, s.anchor, g); err != nil {
				return fmt.Errorf("open audit db %s: %w", s.path, err)
			}
		}
		if !g.empty() {
			s.found = g
			return nil
		}
	}
	if err := s.drainLocked(ctx); err != nil {
		if errors.Is(err, ErrLost) {
			return err
		}
		return fmt.Errorf("open audit db %s: %w", s.path, err)
	}
	if s.lastAnchor.Dev != s.dev || s.lastAnchor.Ino != s.ino {
		// The anchor names another file (a copy restored whole, a home
		// moved): it now names this one, whose rows it just vouched for.
		// Committed rows are durable, so the heads cannot be ahead.
		ck, err := chainState(s.w)
		if err != nil {
			return fmt.Errorf("open audit db %s: %w", s.path, err)
		}
		if s.key != nil && s.anchor != nil {
			s.anchorLocked(&anchorState{Checkpoint: ck, MAC: ck.MAC(s.key), Dev: s.dev, Ino: s.ino})
		}
	}
	return nil
}

// lastCheckpoint returns the rows of each chain at the last stored checkpoint.
func lastCheckpoint(c *conn) (auditRows, eventRows int64, ok bool, err error) {
	st, err := c.prepare(sqlLastCheckpoint)
	if err != nil {
		return 0, 0, false, err
	}
	defer st.Reset()
	if st.Step() {
		return st.ColumnInt64(0), st.ColumnInt64(1), true, nil
	}
	return 0, 0, false, st.Err()
}

func fileExists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// catchUp opens the database if needed and drains whatever other processes
// spooled since, so a read that follows sees every acknowledged decision.
func (s *Store) catchUp(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.w == nil {
		return s.openLocked(ctx)
	}
	if err := s.checkFileLocked(); err != nil {
		return err
	}
	if s.found != nil {
		return nil
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
	if s.opt.LongLived && s.w != nil && s.broken == nil && s.checkFileLocked() == nil {
		_ = s.checkpointLocked(context.Background())
	}
	w, a := s.w, s.anchor
	s.w, s.anchor, s.closed = nil, nil, true
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
	errs = append(errs, a.close())
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
//
// With an anchor, it first makes sure the database file is still the one
// open (checkFileLocked), seals the transaction (a checkpoint when one is
// due) and, after the commit, writes the chains' heads into the anchor.
func (s *Store) txLocked(ctx context.Context, fn func(w *conn) error) error {
	if err := s.checkFileLocked(); err != nil {
		return err
	}
	defer s.w.withContext(ctx)()
	s.w.ck = nil
	if err := s.w.c.Exec(`BEGIN IMMEDIATE`); err != nil {
		s.w.rollback()
		return busy(fmt.Errorf("begin: %w", err))
	}
	// A panic in fn must not leave the transaction open for the next
	// writer (whose BEGIN would fail) with fn's rows in it.
	defer func() {
		if r := recover(); r != nil {
			s.w.rollback()
			panic(r)
		}
	}()
	if err := fn(s.w); err != nil {
		s.w.rollback()
		return err
	}
	st, err := s.sealLocked(s.w)
	if err != nil {
		s.w.rollback()
		return err
	}
	if err := s.w.c.Exec(`COMMIT`); err != nil {
		s.w.rollback()
		return fmt.Errorf("commit: %w", err)
	}
	if ck := s.w.ck; ck != nil {
		s.ckAudit, s.ckEvent, s.ckStored = ck.AuditRows, ck.EventRows, true
	}
	s.anchorLocked(st)
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
		r, err := openConn(ctx, s.path, false)
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
//
// Once the database is open it stays open until Close, whose later writes
// fail with errClosed anyway, so the answer is then false without taking
// s.mu: a writer holds s.mu through its commit and fdatasync, and every
// Record asking here would otherwise queue behind it instead of joining
// the next group commit (group.go).
func (s *Store) spooling() bool {
	if s.opened.Load() {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.w != nil {
		s.opened.Store(true)
	}
	return spoolSupported && s.w == nil && !s.closed
}
