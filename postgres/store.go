package postgres

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/agentwarden/warden"
)

var (
	_ warden.AuditStore    = (*Store)(nil)
	_ warden.Ledger        = (*Store)(nil)
	_ warden.SlotReader    = (*Store)(nil)
	_ warden.ApprovalStore = (*Store)(nil)
)

// Advisory lock keys (pg_advisory_xact_lock), per database. lockChains
// orders every append to the audit and security-event chains, fleet-wide;
// the spend-cap check and the rate slots are decided under it too.
const lockChains int64 = 0x7761726465_6e_01 // "warden" 1

// Options adjust Open. The zero value opens a store without keyed
// checkpoints, checking the schema version.
type Options struct {
	// Key is the checkpoint key (audit.KeySize bytes), the same on every
	// daemon of the fleet; nil takes and verifies no keyed checkpoints.
	Key []byte
	// MaxConns bounds the pool; zero is 16 for a long-lived store and
	// pgxpool's default (at least 4) otherwise.
	MaxConns int32
	// Now is the clock for entries and events without CreatedAt; nil is
	// time.Now.
	Now func() time.Time
	// LongLived stores (the daemon) take a checkpoint when they close.
	LongLived bool
	// Password, when set, is the database password, kept out of the DSN
	// (read from a file or an environment variable by the caller).
	Password string
	// Journal, when set, is this host's journal file (see journal.go):
	// while the database cannot be reached, Record without a debit and
	// AppendEvent append there and succeed, and Open succeeds without
	// having checked the schema (it is checked at first contact); the
	// journal is replayed, in order and exactly once, when the database
	// answers again. Without it they fail, and so does Open.
	Journal string
	// Anchor, when set with Key, is this host's anchor file (see
	// anchor.go): what this host saw committed, which Verify checks the
	// database still holds.
	Anchor string
}

// Store is warden's audit log, spend ledger, rate slots, approvals and grants
// in one PostgreSQL database shared by a fleet of daemons. It is safe for
// concurrent use by goroutines and by processes on many hosts. Use Open;
// the zero value is not usable.
type Store struct {
	pool *pgxpool.Pool
	opt  Options
	now  func() time.Time

	gmu        sync.Mutex // guards queue and committing (group.go)
	queue      []*pendingRecord
	committing bool

	journal  *journal    // nil: no journal
	anchor   *hostAnchor // nil: no host anchor
	schemaOK atomic.Bool // the schema was checked on a connection that worked

	mu     sync.Mutex
	closed bool
}

// Open connects to the database dsn names and checks that its schema is the
// one this warden knows (see Migrate): an older schema is refused with a
// hint to run `warden migrate`, a newer one as unknown. It never changes the
// database. An unreachable server is a *warden.Error with code
// EUnavailable; the error never contains the DSN's password.
func Open(ctx context.Context, dsn string, opt Options) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, warden.Errorf(warden.EInvalid, "the PostgreSQL DSN cannot be read: %s", scrub(err, dsn)).
			WithHint("give a postgres://user@host/db URL; the password goes in a file or an environment variable (see docs/fleet.md)")
	}
	switch {
	case opt.MaxConns > 0:
		cfg.MaxConns = opt.MaxConns
	case opt.LongLived:
		cfg.MaxConns = 16 // a daemon's concurrent decisions wait less for a connection
	}
	if opt.Password != "" {
		cfg.ConnConfig.Password = opt.Password
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, unavailable("connect to PostgreSQL", err)
	}
	s := &Store{pool: pool, opt: opt, now: opt.Now}
	if s.now == nil {
		s.now = time.Now
	}
	if opt.Journal != "" {
		s.journal = &journal{path: opt.Journal}
	}
	if opt.Anchor != "" && opt.Key != nil {
		s.anchor = &hostAnchor{path: opt.Anchor, key: opt.Key}
	}
	if err := s.checkSchema(ctx); err != nil {
		if s.journal == nil || !Unreachable(err) {
			pool.Close()
			return nil, err
		}
		return s, nil // checked at first contact; meanwhile the journal takes what it can
	}
	s.schemaOK.Store(true)
	return s, nil
}

// ready checks the schema once a connection works, and replays the journal
// before anything else reaches the database, so that what this host
// acknowledged while offline enters the chain before what follows.
func (s *Store) ready(ctx context.Context) error {
	if s.isClosed() {
		return errClosed
	}
	if !s.schemaOK.Load() {
		if err := s.checkSchema(ctx); err != nil {
			return err
		}
		s.schemaOK.Store(true)
	}
	if s.journal != nil && s.journal.pending() {
		if _, err := s.replay(ctx); err != nil {
			return err
		}
	}
	return nil
}

// Close takes a last keyed checkpoint (a long-lived store with a key) and
// closes the pool. It is safe to call more than once.
func (s *Store) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.mu.Unlock()
	var err error
	if s.opt.LongLived && s.opt.Key != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err = s.tx(ctx, func(tx pgx.Tx) error { return s.checkpoint(ctx, tx, true) })
		cancel()
		if err != nil {
			err = fmt.Errorf("close fleet store: last checkpoint: %w", err)
		}
	}
	s.pool.Close()
	return err
}

// Ping reports whether the database answers.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.pool.Ping(ctx); err != nil {
		return unavailable("reach PostgreSQL", err)
	}
	return nil
}

// tx runs fn in one READ COMMITTED transaction and commits it. If fn or the
// commit fails, nothing of it is stored (a commit whose outcome was lost
// with the connection is settled by the caller, see Record).
func (s *Store) tx(ctx context.Context, fn func(tx pgx.Tx) error) error {
	if err := s.ready(ctx); err != nil {
		return err
	}
	return s.txRaw(ctx, fn)
}

// txRaw is tx without ready: for the replay itself.
func (s *Store) txRaw(ctx context.Context, fn func(tx pgx.Tx) error) error {
	if s.isClosed() {
		return errClosed
	}
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return unavailable("begin a transaction", err)
	}
	defer tx.Rollback(context.Background()) //nolint:errcheck // after Commit it does nothing
	if err := fn(tx); err != nil {
		return err
	}
	if err := tx.Commit(ctx); err != nil {
		return &commitError{err: err}
	}
	return nil
}

// lockChains takes the fleet-wide lock that orders the chains, until the
// transaction ends.
func lockChainsTx(ctx context.Context, tx pgx.Tx) error {
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, lockChains); err != nil {
		return fmt.Errorf("lock the chains: %w", err)
	}
	return nil
}

func (s *Store) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// errClosed is returned by every method of a closed Store.
var errClosed = errors.New("postgres: store is closed")

// commitError is a failed COMMIT: when the server did not answer, the
// transaction may have committed all the same.
type commitError struct{ err error }

func (e *commitError) Error() string { return "commit: " + e.err.Error() }
func (e *commitError) Unwrap() error { return e.err }

// ambiguous reports whether err leaves the outcome of a commit unknown: the
// connection failed without the server saying what happened.
func ambiguous(err error) bool {
	var ce *commitError
	if !errors.As(err, &ce) {
		return false
	}
	var pe *pgconn.PgError
	return !errors.As(err, &pe)
}

// unavailable wraps a failure to reach the server (or a server going away)
// as EUnavailable; a server's own error passes through.
func unavailable(what string, err error) error {
	if refused := loginRefused(err); refused != nil {
		return refused
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %w", what, err)
	}
	return warden.Errorf(warden.EUnavailable, "the fleet database cannot be reached (%s)", what).Wrap(err).
		WithHint("check that PostgreSQL is up and reachable from this host; fund-moving and approval requests are denied until it is")
}

// loginRefused is the error for a server that refused warden's login
// (SQLSTATE class 28: a wrong or missing password, an unknown role, a
// pg_hba.conf rule): a setting to fix, not a bug; nil for any other error.
// The server's message names the role, never the password.
func loginRefused(err error) error {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || !strings.HasPrefix(pe.Code, "28") {
		return nil
	}
	return warden.Errorf(warden.EInvalid, "the fleet database refused warden's login: %s (SQLSTATE %s)", pe.Message, pe.Code).
		WithHint("check the role in store.dsn (or --store) and its password: store.passwordFile or store.passwordEnv, else PGPASSWORD or PGPASSFILE; and the server's pg_hba.conf")
}

// Unreachable reports whether err says the database could not be reached
// (as opposed to refusing what was asked).
func Unreachable(err error) bool {
	if warden.ErrorCodeOf(err) == warden.EUnavailable {
		return true
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		// Class 08: connection exception; 57P0x: the server is shutting down.
		return len(pe.Code) == 5 && (pe.Code[:2] == "08" || pe.Code[:4] == "57P0")
	}
	var ne net.Error
	return errors.As(err, &ne) || pgconn.SafeToRetry(err) || errors.Is(err, pgx.ErrTxClosed)
}

// scrub returns err's text without the DSN's password.
func scrub(err error, dsn string) string {
	msg := strings.ReplaceAll(err.Error(), dsn, "the DSN")
	if u, perr := url.Parse(dsn); perr == nil && u.User != nil {
		if pw, ok := u.User.Password(); ok && pw != "" {
			msg = strings.ReplaceAll(msg, pw, "xxxxx")
		}
	}
	return msg
}

// saw raises the host anchor to what a commit ended with (see anchor.go).
func (s *Store) saw(auditRows int64, auditHead string, eventRows int64, eventHead string) {
	if s.anchor != nil {
		s.anchor.advance(auditRows, auditHead, eventRows, eventHead)
	}
}
