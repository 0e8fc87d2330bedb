package app

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/audit"
	"github.com/agentwarden/warden/config"
	"github.com/agentwarden/warden/finance/paper"
	"github.com/agentwarden/warden/finance/stoploss"
	"github.com/agentwarden/warden/postgres"
	"github.com/agentwarden/warden/sqlite"
)

// Store is a home's store: the audit log, security events, spend ledger,
// rate slots, approvals and grants, and the per-host paper book and
// stop-loss rules. It is the home's SQLite database, or, when the policy's
// store.dsn (or --store) names one, a fleet's PostgreSQL database shared
// by many daemons (then the paper book and the stop-loss rules stay in the
// home's SQLite database).
type Store interface {
	warden.AuditStore
	warden.Ledger
	warden.SlotReader
	warden.ApprovalStore
	// QueueEvent is AppendEvent for a caller that must not wait for the
	// commit (see sqlite.Store.QueueEvent); wait must be called once.
	QueueEvent(ctx context.Context, ev *warden.SecurityEvent) (wait func() error)
	PaperBook() paper.Store
	StopLoss() stoploss.Store
	Close() error
}

var (
	_ Store = localStore{}
	_ Store = fleetStore{}
)

// localStore is the home's SQLite database as a Store.
type localStore struct{ *sqlite.Store }

func (s localStore) PaperBook() paper.Store   { return s.Store.PaperBook() }
func (s localStore) StopLoss() stoploss.Store { return s.Store.StopLoss() }

// fleetStore is a fleet's PostgreSQL database as a Store, with the home's
// SQLite database (opened only when used) for the paper book and the
// stop-loss rules, which are per host.
type fleetStore struct {
	*postgres.Store
	local *sqlite.Store
	kill  *killCache
}

// killCache is the fleet's emergency stop as last read or announced: what
// a decision goes by for up to killFresh. A read that fails counts as the
// stop on (see engaged).
type killCache struct {
	mu     sync.Mutex
	on     bool
	unread bool      // on because the read failed
	at     time.Time // when on was read or announced
}

// killFresh is how long a decision goes by the fleet's stop as last read
// before it reads it again. A daemon also hears the stop turned (NOTIFY), at
// once; a stop turned on elsewhere reaches a decision at most this late.
const killFresh = 250 * time.Millisecond

// set records the stop's state as announced or read now.
func (k *killCache) set(on bool) { k.store(on, false) }

func (k *killCache) store(on, unread bool) {
	k.mu.Lock()
	k.on, k.unread, k.at = on, unread, time.Now()
	k.mu.Unlock()
}

// unreadable reports whether the stop counts as on only because the last
// read of it failed.
func (k *killCache) unreadable() bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.on && k.unread
}

// engaged is the emergency stop's state for home in a fleet: on when the
// home's own stop is (read every time), or the fleet's (read again when the
// last read is older than killFresh). A fleet's stop that cannot be read is
// on, as the home's own is when its file cannot be looked at: another host
// may have turned it on meanwhile, so a state last read before the database
// went out of reach is never trusted longer than killFresh. That failure is
// kept for killFresh too, so that decisions during an outage do not each
// wait for the read's timeout; tier 1 (read-only) requests still run, and
// are journaled.
func (f fleetStore) engaged(home Home) func() bool {
	return func() bool {
		if home.Killed() {
			return true
		}
		f.kill.mu.Lock()
		on, fresh := f.kill.on, time.Since(f.kill.at) < killFresh
		f.kill.mu.Unlock()
		if fresh {
			return on
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		now, err := f.Store.Killed(ctx)
		cancel()
		if err != nil {
			f.kill.store(true, true) // fail closed: another host may have stopped the fleet
			return true
		}
		f.kill.set(now)
		return now
	}
}

// killEngaged is the emergency stop's state function for a store of home.
func killEngaged(home Home, store Store) func() bool {
	if f, ok := store.(fleetStore); ok {
		return f.engaged(home)
	}
	return home.Killed
}

// killUnread reports, for a store of home, whether the stop counts as on
// only because the fleet's could not be read (nil for a home's own store).
func killUnread(home Home, store Store) func() bool {
	if f, ok := store.(fleetStore); ok {
		return func() bool { return !home.Killed() && f.kill.unreadable() }
	}
	return nil
}

// setFleetKill turns the emergency stop of the fleet the home's policy (or
// override, --store) names on or off; a home of no fleet has nothing to do.
func setFleetKill(h Home, override string, on bool, by, reason string, now time.Time) error {
	p, err := policyForStore(h)
	if err != nil {
		if override == "" {
			return nil // no policy to name a fleet: the home's own stop is what there is
		}
		p = &config.Policy{}
	}
	f, err := fleetOf(h, p, override)
	if err != nil || f == nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	pg, err := f.open(ctx, false)
	if err != nil {
		return err
	}
	defer pg.Close()
	return pg.SetKill(ctx, on, by, reason, now)
}

// QueueEvent appends ev before it returns: in order, like the SQLite
// store's queue, only without the wait taken off the caller.
func (f fleetStore) QueueEvent(ctx context.Context, ev *warden.SecurityEvent) func() error {
	err := f.Store.AppendEvent(ctx, ev)
	return func() error { return err }
}

func (f fleetStore) PaperBook() paper.Store   { return f.local.PaperBook() }
func (f fleetStore) StopLoss() stoploss.Store { return f.local.StopLoss() }

func (f fleetStore) Close() error { return errors.Join(f.Store.Close(), f.local.Close()) }

// newFleetStore is pg with the home's SQLite database for what stays per
// host, and the fleet's emergency stop as it stands now.
func newFleetStore(ctx context.Context, pg *postgres.Store, home Home) fleetStore {
	f := fleetStore{Store: pg, local: home.deferredStore(), kill: &killCache{}}
	if on, err := pg.Killed(ctx); err == nil {
		f.kill.set(on)
	}
	return f
}

// JournalFile is where a fleet home keeps, while the fleet's database
// cannot be reached, the decisions and events that need no shared state
// (see postgres.Options.Journal).
const JournalFile = "fleet.journal"

// JournalPath is the fleet journal's path.
func (h Home) JournalPath() string { return filepath.Join(string(h), JournalFile) }

// FleetAnchorFile is where a fleet home keeps what it saw committed to the
// fleet's chains, for `warden audit verify` (see postgres.Options.Anchor).
const FleetAnchorFile = "fleet.anchor"

// FleetAnchorPath is the fleet anchor's path.
func (h Home) FleetAnchorPath() string { return filepath.Join(string(h), FleetAnchorFile) }

// replayAttempt bounds one replay of the fleet journal (replayJournal).
const replayAttempt = 30 * time.Second

// replayJournal chains what the home journaled while the fleet's database
// was out of reach, as soon as it answers again, until ctx ends.
func (f fleetStore) replayJournal(ctx context.Context, log func(msg string, args ...any)) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		// Each attempt is bounded: a replay holds the journal's lock, and
		// one stuck on a connection that hangs would hold it for good.
		rctx, cancel := context.WithTimeout(ctx, replayAttempt)
		n, err := f.Store.Replay(rctx)
		cancel()
		if err != nil && !postgres.Unreachable(err) && ctx.Err() == nil {
			log("the fleet journal could not be replayed", "error", warden.UserMessage(err))
		} else if n > 0 {
			log("replayed the fleet journal into the fleet's database", "rows", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// fleet is how to reach a fleet's database: resolved from the policy's
// store section, or from --store, which overrides store.dsn.
type fleet struct {
	dsn      string
	password string // never printed
	keyPath  string // the fleet's checkpoint key, read by open
	journal  string // this host's journal for while the database is out of reach
	anchor   string // this host's anchor: what it saw committed
}

// fleetOf returns the fleet store the policy (or override, a postgres://
// URL from --store) names, or nil for the home's SQLite database. An
// invalid store section is refused: falling back to SQLite would split a
// fleet's log and cap without anyone noticing.
func fleetOf(home Home, p *config.Policy, override string) (*fleet, error) {
	sc := p.Store
	if override != "" {
		if why := config.CheckStoreDSN(override); why != "" {
			return nil, warden.Errorf(warden.EInvalid, "--store %s", why)
		}
		// The policy's password is its role's: --store naming another role
		// (the owner, for `warden migrate`) takes the driver's own sources
		// (PGPASSWORD, PGPASSFILE, ~/.pgpass) instead.
		if dsnUser(override) != dsnUser(sc.DSN) {
			sc.PasswordFile, sc.PasswordEnv = "", ""
		}
		sc.DSN, sc.Invalid = override, false
	}
	if sc.Invalid {
		return nil, warden.Errorf(warden.EInvalid, "the store section of %s is invalid, so warden cannot tell which database holds the audit log", home.PolicyPath()).
			WithHint("`warden config validate` says what is wrong; fix it and try again")
	}
	if sc.DSN == "" {
		return nil, nil
	}
	f := &fleet{dsn: sc.DSN, journal: home.JournalPath(), anchor: home.FleetAnchorPath()}
	switch {
	case sc.PasswordFile != "":
		b, err := readSecretFile(expandHome(sc.PasswordFile))
		if err != nil {
			return nil, warden.Errorf(warden.EInvalid, "read the fleet database's password from store.passwordFile %s", sc.PasswordFile).Wrap(err).
				WithHint("the file holds the password alone, readable by its owner only (chmod 600)")
		}
		f.password = strings.TrimRight(string(b), "\r\n")
	case sc.PasswordEnv != "":
		v, ok := os.LookupEnv(sc.PasswordEnv)
		if !ok || v == "" {
			return nil, warden.Errorf(warden.EInvalid, "store.passwordEnv names %s, which is not set", sc.PasswordEnv).
				WithHint("set " + sc.PasswordEnv + " to the fleet database's password in warden's environment")
		}
		f.password = v
	}
	f.keyPath = home.KeyPath()
	if sc.KeyFile != "" {
		f.keyPath = expandHome(sc.KeyFile)
	}
	return f, nil
}

// dsnUser is the role a postgres:// URL logs in as ("" when it names none
// or cannot be read).
func dsnUser(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil || u.User == nil {
		return ""
	}
	return u.User.Username()
}

// readSecretFile reads a file that holds a secret, refusing one that others
// may read.
func readSecretFile(path string) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("others may read it (mode %04o): chmod 600 %s", fi.Mode().Perm(), path)
	}
	return os.ReadFile(path)
}

// open opens the fleet's database; the schema must be the one this warden
// knows (`warden migrate` brings it there).
func (f *fleet) open(ctx context.Context, longLived bool) (*postgres.Store, error) {
	b, err := readSecretFile(f.keyPath)
	if err != nil {
		return nil, warden.Errorf(warden.EInvalid, "read the fleet's checkpoint key %s", f.keyPath).Wrap(err).
			WithHint("every daemon of a fleet holds the same key file (mode 0600); copy it from the host that made it, or set store.keyFile")
	}
	key, err := audit.DecodeKey(b)
	if err != nil {
		return nil, warden.Errorf(warden.EInvalid, "the fleet's checkpoint key %s: %v", f.keyPath, err)
	}
	return postgres.Open(ctx, f.dsn, postgres.Options{Key: key, Password: f.password, LongLived: longLived, Journal: f.journal, Anchor: f.anchor})
}

// openHomeStore opens the store the policy names for the home: a deferred
// SQLite store (or an open one, openDatabase), or the fleet's database.
func openHomeStore(ctx context.Context, home Home, p *config.Policy, override string, openDatabase bool) (Store, error) {
	f, err := fleetOf(home, p, override)
	if err != nil {
		return nil, err
	}
	if f != nil {
		pg, err := f.open(ctx, openDatabase)
		if err != nil {
			return nil, err
		}
		return newFleetStore(ctx, pg, home), nil
	}
	if !openDatabase {
		return localStore{home.deferredStore()}, nil
	}
	s, err := openStore(ctx, home, sqlite.Options{LongLived: true})
	if err != nil {
		return nil, err
	}
	return localStore{s}, nil
}

// OpenLogStore opens the store that holds the home's audit log: the fleet's
// database when the policy (or override, --store) names one, else the
// home's SQLite database as OpenStore does. A policy with problems
// elsewhere still opens; one that cannot be read at all (not YAML) says
// nothing about a fleet, so then the home's own log is used: `warden
// kill` and `warden audit` work whatever state the policy is in.
func OpenLogStore(ctx context.Context, home Home, override string) (Store, error) {
	p, err := policyForStore(home)
	if err != nil {
		p = config.Default()
	}
	f, err := fleetOf(home, p, override)
	if err != nil {
		return nil, err
	}
	if f != nil {
		pg, err := f.open(ctx, false)
		if err != nil {
			return nil, err
		}
		return newFleetStore(ctx, pg, home), nil
	}
	s, err := OpenStore(ctx, home)
	if err != nil {
		return nil, err
	}
	return localStore{s}, nil
}

// policyForStore loads the policy for its store section; a home without a
// policy file has the default (SQLite) store.
func policyForStore(home Home) (*config.Policy, error) {
	p, _, err := home.LoadPolicy()
	if errors.Is(err, fs.ErrNotExist) {
		return config.Default(), nil
	}
	return p, err
}

// Migrate is `warden migrate`: it applies the fleet database's migrations,
// as the role the DSN names (the owner of warden's tables, see
// docs/fleet.md). It returns the schema versions before and after.
func Migrate(ctx context.Context, home Home, override string) (from, to int, err error) {
	p, err := policyForStore(home)
	if err != nil {
		return 0, 0, err
	}
	f, err := fleetOf(home, p, override)
	if err != nil {
		return 0, 0, err
	}
	if f == nil {
		return 0, 0, warden.Errorf(warden.EInvalid, "this home keeps its audit log in SQLite, which migrates itself").
			WithHint("`warden migrate` is for a fleet's PostgreSQL database: set store.dsn in the policy file, or pass --store postgres://USER@HOST/DATABASE")
	}
	return postgres.Migrate(ctx, f.dsn, f.password)
}
