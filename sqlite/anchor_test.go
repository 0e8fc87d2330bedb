package sqlite

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/audit"
)

// anchoredHome is a home's store layout in a temporary directory: the
// database, the anchor and the key side by side, as app lays them out.
type anchoredHome struct {
	dir, db string
	opt     Options
}

func newAnchoredHome(t testing.TB) anchoredHome {
	t.Helper()
	dir := t.TempDir()
	h := anchoredHome{dir: dir, db: filepath.Join(dir, "warden.db"),
		opt: Options{Anchor: filepath.Join(dir, "audit.anchor"), Key: filepath.Join(dir, "audit.key")}}
	create := h.opt
	create.Create = true
	s, err := OpenWith(ctx, h.db, create)
	if err != nil {
		t.Fatalf("create the home's store: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return h
}

// open opens the home's store as every process does (no Create).
func (h anchoredHome) open(t testing.TB) (*Store, error) {
	t.Helper()
	s, err := OpenWith(ctx, h.db, h.opt)
	if err == nil {
		t.Cleanup(func() { s.Close() })
	}
	return s, err
}

func (h anchoredHome) mustOpen(t testing.TB) *Store {
	t.Helper()
	s, err := h.open(t)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	return s
}

// verify is `warden audit verify`: an inspecting open and Verify.
func (h anchoredHome) verify(t *testing.T) warden.VerifyReport {
	t.Helper()
	o := h.opt
	o.Inspect = true
	s, err := OpenWith(ctx, h.db, o)
	if err != nil {
		t.Fatalf("open to verify: %v", err)
	}
	defer s.Close()
	rep, err := s.Verify(ctx)
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	return rep
}

func (h anchoredHome) record(t *testing.T, s *Store, n int) {
	t.Helper()
	for i := range n {
		if err := s.Record(ctx, spoolEntry(i), nil); err != nil {
			t.Fatalf("Record %d: %v", i, err)
		}
	}
}

func removeDB(t *testing.T, path string) {
	t.Helper()
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
	}
}

// spooledEvents returns the security events waiting in the spool.
func spooledEvents(t *testing.T, db string) []*warden.SecurityEvent {
	t.Helper()
	data, err := os.ReadFile(db + spoolSuffix)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	records, _ := decodeFrames(data)
	var evs []*warden.SecurityEvent
	for _, r := range records {
		if r.event != nil {
			evs = append(evs, r.event)
		}
	}
	return evs
}

func hasCriticalLoss(evs []*warden.SecurityEvent) bool {
	return slices.ContainsFunc(evs, func(ev *warden.SecurityEvent) bool {
		return ev.Type == warden.EventAuditLost && ev.Severity == warden.SevCritical
	})
}

func wantLost(t *testing.T, err error, part string) {
	t.Helper()
	if !errors.Is(err, ErrLost) {
		t.Fatalf("err = %v, want ErrLost", err)
	}
	if msg := warden.UserMessage(err); !strings.Contains(msg, part) || !strings.Contains(msg, "warden audit recover --yes") {
		t.Fatalf("message %q does not name %q and the recovery command", msg, part)
	}
}

func wantMissing(t *testing.T, rep warden.VerifyReport, part string) {
	t.Helper()
	if rep.OK() || !slices.ContainsFunc(rep.Missing, func(m string) bool { return strings.Contains(m, part) }) {
		t.Fatalf("Verify missing = %q (break %+v), want one containing %q", rep.Missing, rep.FirstBreak, part)
	}
}

func TestNewHomeIsAnchored(t *testing.T) {
	h := newAnchoredHome(t)
	fi, err := os.Stat(h.opt.Key)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("key mode %04o, want 0600", fi.Mode().Perm())
	}
	s := h.mustOpen(t)
	h.record(t, s, CheckpointEvery+5)
	s.Close()
	rep := h.verify(t)
	if !rep.OK() || rep.AuditRows != CheckpointEvery+5 || rep.Checkpoints < 2 {
		t.Fatalf("Verify = %+v, want ok, %d rows, at least 2 checkpoints", rep, CheckpointEvery+5)
	}
}

// TestAnchorFollowsEveryCommit: the anchor holds the chain's head after
// each commit, so nothing committed is outside what it vouches for.
func TestAnchorFollowsEveryCommit(t *testing.T) {
	h := newAnchoredHome(t)
	s := h.mustOpen(t)
	h.record(t, s, 3)
	a, err := openAnchor(h.opt.Anchor, false)
	if err != nil || a == nil {
		t.Fatalf("open anchor: %v", err)
	}
	defer a.close()
	st, ok, _, err := a.readDB()
	if err != nil || !ok || st.AuditRows != 3 {
		t.Fatalf("anchor = %+v, %v, %v; want 3 audit rows", st, ok, err)
	}
}

// TestNoFreshDatabaseWithoutInit: a home's store never creates its
// database; only Create (warden init) and Recover do.
func TestNoFreshDatabaseWithoutInit(t *testing.T) {
	dir := t.TempDir()
	opt := Options{Anchor: filepath.Join(dir, "audit.anchor"), Key: filepath.Join(dir, "audit.key")}
	db := filepath.Join(dir, "warden.db")
	if _, err := OpenWith(ctx, db, opt); err == nil || !strings.Contains(warden.UserMessage(err), "warden init") {
		t.Fatalf("OpenWith in an empty home = %v, want a refusal pointing at warden init", err)
	}
	d := OpenDeferredWith(db, opt)
	defer d.Close()
	if err := d.Record(ctx, spoolEntry(1), nil); err == nil {
		t.Fatal("a deferred store recorded in a home without a database")
	}
	if _, err := os.Stat(db); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a database was created: %v", err)
	}
}

// TestDeletedDatabaseIsRefused: with the database gone, neither an open
// nor a spooling store decides, and the loss is recorded in the spool.
func TestDeletedDatabaseIsRefused(t *testing.T) {
	h := newAnchoredHome(t)
	s := h.mustOpen(t)
	h.record(t, s, 4)
	s.Close()
	removeDB(t, h.db)

	_, err := h.open(t)
	wantLost(t, err, "the database")
	if !strings.Contains(warden.UserMessage(err), "4 audit rows") {
		t.Errorf("message %q does not say how many rows were recorded", warden.UserMessage(err))
	}
	d := OpenDeferredWith(h.db, h.opt)
	defer d.Close()
	err = d.Record(ctx, spoolEntry(9), nil)
	wantLost(t, err, "the database")
	if _, err := os.Stat(h.db); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("a fresh database was created")
	}
	if !hasCriticalLoss(spooledEvents(t, h.db)) {
		t.Error("no critical audit_log_lost event in the spool")
	}
	wantMissing(t, h.verify(t), "the database "+h.db)
}

// TestDatabaseDeletedUnderAnOpenStore: a long-lived store notices at its
// next commit that its file is gone, instead of writing to the unlinked
// file, and stays refused.
func TestDatabaseDeletedUnderAnOpenStore(t *testing.T) {
	h := newAnchoredHome(t)
	s := h.mustOpen(t)
	h.record(t, s, 2)
	removeDB(t, h.db)
	e := spoolEntry(7)
	err := s.Record(ctx, e, nil)
	wantLost(t, err, "deleted while warden had it open")
	if e.Seq != 0 {
		t.Errorf("the refused entry got seq %d", e.Seq)
	}
	if err := s.AppendEvent(ctx, testEvent(1)); !errors.Is(err, ErrLost) {
		t.Errorf("AppendEvent after the deletion = %v, want ErrLost", err)
	}
	if _, err := s.Entries(ctx, warden.AuditFilter{}); !errors.Is(err, ErrLost) {
		t.Errorf("Entries after the deletion = %v, want ErrLost", err)
	}
	if !hasCriticalLoss(spooledEvents(t, h.db)) {
		t.Error("no critical audit_log_lost event in the spool")
	}
	wantMissing(t, h.verify(t), "the database")
}

// TestDatabaseReplacedUnderAnOpenStore: a file renamed over the database
// is not the one the store has open.
func TestDatabaseReplacedUnderAnOpenStore(t *testing.T) {
	h := newAnchoredHome(t)
	other := newAnchoredHome(t)
	s := h.mustOpen(t)
	h.record(t, s, 2)
	if err := os.Rename(other.db, h.db); err != nil {
		t.Fatal(err)
	}
	wantLost(t, s.Record(ctx, spoolEntry(3), nil), "replaced by another file")
}

// TestTruncatedDatabaseIsRefused: rows removed from the end leave a chain
// that verifies by itself; the anchor names them.
func TestTruncatedDatabaseIsRefused(t *testing.T) {
	h := newAnchoredHome(t)
	s := h.mustOpen(t)
	h.record(t, s, 5)
	s.Close()
	dropTriggers(t, h.db)
	if err := rawConn(t, h.db).Exec(`DELETE FROM audit WHERE seq > 3`); err != nil {
		t.Fatal(err)
	}
	_, err := h.open(t)
	wantLost(t, err, "audit rows 4 to 5")
	rep := h.verify(t)
	wantMissing(t, rep, "audit rows 4 to 5")
}

// TestReplacedDatabaseIsDetected: another home's valid database swapped
// in, with as many rows or more, is refused and reported.
func TestReplacedDatabaseIsDetected(t *testing.T) {
	for _, rows := range []int{5, 8} {
		h := newAnchoredHome(t)
		s := h.mustOpen(t)
		h.record(t, s, 5)
		s.Close()
		other := newAnchoredHome(t)
		o := other.mustOpen(t)
		for i := range rows {
			e := spoolEntry(100 + i)
			e.Reason = "another home"
			if err := o.Record(ctx, e, nil); err != nil {
				t.Fatal(err)
			}
		}
		o.Close()
		removeDB(t, h.db)
		for _, sfx := range []string{"", "-wal"} {
			if b, err := os.ReadFile(other.db + sfx); err == nil {
				if err := os.WriteFile(h.db+sfx, b, 0o600); err != nil {
					t.Fatal(err)
				}
			}
		}
		_, err := h.open(t)
		wantLost(t, err, "database was replaced")
		rep := h.verify(t)
		if b := rep.FirstBreak; b == nil || b.Table != audit.TableAudit || b.Seq != 5 || !strings.Contains(b.Why, "replaced") {
			t.Errorf("%d rows: Verify break = %+v, want audit row 5 replaced", rows, rep.FirstBreak)
		}
	}
}

// TestRehashedChainIsDetected is the attack of issue 23: drop the
// append-only triggers, turn a deny into an allow, recompute every later
// hash with warden's own code. The chain then verifies by itself; the
// keyed checkpoints and the anchor do not let it pass.
func TestRehashedChainIsDetected(t *testing.T) {
	h := newAnchoredHome(t)
	s := h.mustOpen(t)
	const n, forged = 2*CheckpointEvery + 50, 150
	for i := range n {
		e := spoolEntry(i)
		if i+1 == forged {
			e.Verdict, e.Blocked, e.Reason, e.Rule = warden.Deny, true, "transfers to unknown addresses are denied", "sign.recipient"
		}
		if err := s.Record(ctx, e, nil); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()

	// The attacker, with write access to the file and warden's code.
	dropTriggers(t, h.db)
	bare, err := Open(ctx, h.db)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := bare.Entries(ctx, warden.AuditFilter{})
	bare.Close()
	if err != nil {
		t.Fatal(err)
	}
	c := rawConn(t, h.db)
	prev := audit.GenesisHash
	for i := range rows {
		e := &rows[i]
		if e.Seq == forged {
			e.Verdict, e.Blocked, e.Reason, e.Rule = warden.Allow, false, "ok", "tools.tier1"
		}
		if e.Seq >= forged {
			e.PrevHash, e.Hash = prev, audit.HashEntry(prev, e)
			if err := c.Exec(`UPDATE audit SET verdict = '` + e.Verdict.String() + `', blocked = 0, reason = '` + e.Reason + `', rule = '` + e.Rule +
				`', prev_hash = '` + e.PrevHash + `', hash = '` + e.Hash + `' WHERE seq = ` + itoa(e.Seq)); err != nil {
				t.Fatal(err)
			}
		}
		prev = e.Hash
	}
	if b := audit.VerifyEntries(rows); b != nil {
		t.Fatalf("the forged chain does not verify by itself, so the test proves nothing: %+v", b)
	}

	rep := h.verify(t)
	b := rep.FirstBreak
	if b == nil || b.Table != audit.TableAudit || b.Seq != 2*CheckpointEvery || !strings.Contains(b.Why, "rows 101 to 200 were rewritten") {
		t.Fatalf("Verify = %+v (break %+v), want audit row %d: rows 101 to 200 rewritten", rep, b, 2*CheckpointEvery)
	}
	_, err = h.open(t)
	wantLost(t, err, "rewritten")
}

// TestForgedCheckpointIsDetected: a checkpoint row the attacker writes
// without the key does not verify.
func TestForgedCheckpointIsDetected(t *testing.T) {
	h := newAnchoredHome(t)
	s := h.mustOpen(t)
	h.record(t, s, 3)
	s.Close()
	dropTriggers(t, h.db)
	if err := rawConn(t, h.db).Exec(`UPDATE chain_checkpoints SET mac = iif(substr(mac, 1, 1) = 'f', '0', 'f') || substr(mac, 2) WHERE seq = 1`); err != nil {
		t.Fatal(err)
	}
	rep := h.verify(t)
	if b := rep.FirstBreak; b == nil || b.Table != "chain_checkpoints" || !strings.Contains(b.Why, "MAC does not verify") {
		t.Fatalf("Verify break = %+v, want a checkpoint whose MAC does not verify", rep.FirstBreak)
	}
}

// TestTruncatedSpoolIsDetected: acknowledged records cut from the spool
// before they entered the chain are noticed by the next append and by the
// next open, recorded, and recovered from without a new chain.
func TestTruncatedSpoolIsDetected(t *testing.T) {
	for _, how := range []string{"truncated", "deleted"} {
		t.Run(how, func(t *testing.T) {
			h := newAnchoredHome(t)
			d := OpenDeferredWith(h.db, h.opt)
			h.record(t, d, 3)
			d.Close()
			spool := h.db + spoolSuffix
			var err error
			if how == "deleted" {
				err = os.Remove(spool)
			} else {
				err = os.Truncate(spool, 10)
			}
			if err != nil {
				t.Fatal(err)
			}
			wantMissing(t, h.verify(t), "the spool's tail")

			d = OpenDeferredWith(h.db, h.opt)
			err = d.Record(ctx, spoolEntry(4), nil)
			d.Close()
			wantLost(t, err, "the spool's tail")
			_, err = h.open(t)
			wantLost(t, err, "the spool's tail")
			if !hasCriticalLoss(spooledEvents(t, h.db)) {
				t.Error("no critical audit_log_lost event in the spool")
			}

			res, err := Recover(ctx, h.db, h.opt, "test", time.Now())
			if err != nil {
				t.Fatalf("Recover: %v", err)
			}
			if res.NewChain {
				t.Error("Recover started a new chain for a spool's loss")
			}
			s := h.mustOpen(t)
			evs, err := s.Events(ctx, warden.EventFilter{Type: warden.EventAuditRecovered})
			if err != nil || len(evs) != 1 {
				t.Fatalf("audit_log_recovered events = %d, %v; want 1", len(evs), err)
			}
			h.record(t, s, 1)
			s.Close()
			if rep := h.verify(t); !rep.OK() {
				t.Fatalf("Verify after recovery = %+v", rep)
			}
		})
	}
}

// TestRecoverStartsANewChain: after the database was deleted, Recover keeps
// what is left, and the new chain's first rows record the loss and the
// old anchor; the loss events from the spool follow.
func TestRecoverStartsANewChain(t *testing.T) {
	h := newAnchoredHome(t)
	s := h.mustOpen(t)
	h.record(t, s, 4)
	s.Close()
	if err := os.Remove(h.db); err != nil { // the -wal stays: kept aside
		t.Fatal(err)
	}
	if _, err := h.open(t); !errors.Is(err, ErrLost) {
		t.Fatalf("open = %v, want ErrLost", err)
	}
	res, err := Recover(ctx, h.db, h.opt, "test", time.Now())
	if err != nil {
		t.Fatalf("Recover: %v", err)
	}
	if !res.NewChain || len(res.Kept) == 0 {
		t.Fatalf("Recover = %+v, want a new chain and the old files kept", res)
	}
	s = h.mustOpen(t)
	rows, err := s.Entries(ctx, warden.AuditFilter{})
	if err != nil || len(rows) != 1 || rows[0].Action != "recover" || !strings.Contains(rows[0].Reason, "4 audit rows") {
		t.Fatalf("new chain = %+v, %v; want one recover row naming the old anchor's 4 rows", rows, err)
	}
	evs, err := s.Events(ctx, warden.EventFilter{})
	if err != nil || len(evs) < 2 || evs[0].Type != warden.EventAuditRecovered || !hasCriticalLoss(ptrs(evs)) {
		t.Fatalf("events = %+v, %v; want audit_log_recovered first, then the spooled audit_log_lost", evs, err)
	}
	s.Close()
	if rep := h.verify(t); !rep.OK() {
		t.Fatalf("Verify after recovery = %+v", rep)
	}
	if _, err := Recover(ctx, h.db, h.opt, "test", time.Now()); warden.ErrorCodeOf(err) != warden.EConflict {
		t.Fatalf("Recover of a log that verifies = %v, want a refusal", err)
	}
}

// TestHomeFromBeforeAnchorsIsAnchored: a database made by a warden
// without anchors is anchored on its first open, and says so.
func TestHomeFromBeforeAnchorsIsAnchored(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "warden.db")
	bare, err := Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	if err := bare.Record(ctx, spoolEntry(1), nil); err != nil {
		t.Fatal(err)
	}
	bare.Close()
	h := anchoredHome{dir: dir, db: db, opt: Options{Anchor: filepath.Join(dir, "audit.anchor"), Key: filepath.Join(dir, "audit.key")}}
	s := h.mustOpen(t)
	evs, err := s.Events(ctx, warden.EventFilter{Type: warden.EventAuditAnchored})
	if err != nil || len(evs) != 1 {
		t.Fatalf("audit_log_anchored events = %d, %v; want 1", len(evs), err)
	}
	s.Close()
	if rep := h.verify(t); !rep.OK() || rep.AuditRows != 1 {
		t.Fatalf("Verify = %+v", rep)
	}
	// Once anchored, losing the anchor is not taken for an old home.
	if err := os.Remove(h.opt.Anchor); err != nil {
		t.Fatal(err)
	}
	_, err = h.open(t)
	wantLost(t, err, "the chain anchor")
}

func ptrs(evs []warden.SecurityEvent) []*warden.SecurityEvent {
	out := make([]*warden.SecurityEvent, len(evs))
	for i := range evs {
		out[i] = &evs[i]
	}
	return out
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// TestConcurrentSpoolingAndDrainingInAHome: in a home's store, writers
// spool while a long-lived store drains; the spool's claim never runs
// ahead of the spool (no false loss), and every record is chained once.
func TestConcurrentSpoolingAndDrainingInAHome(t *testing.T) {
	h := newAnchoredHome(t)
	const writers, each = 6, 40
	var wg sync.WaitGroup
	errs := make(chan error, writers+1)
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				s := OpenDeferredWith(h.db, h.opt) // one store per "process"
				err := s.Record(ctx, spoolEntry(w*each+i), nil)
				s.Close()
				if err != nil {
					errs <- err
					return
				}
			}
		})
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		o := h.opt
		o.LongLived = true
		r, err := OpenWith(ctx, h.db, o)
		if err != nil {
			errs <- err
			return
		}
		defer r.Close()
		for range 30 {
			if _, err := r.Entries(ctx, warden.AuditFilter{Limit: 1}); err != nil {
				errs <- err
				return
			}
		}
	}()
	wg.Wait()
	<-done
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	rep := h.verify(t)
	if !rep.OK() || rep.AuditRows != writers*each {
		t.Fatalf("Verify = %+v, want ok and %d rows", rep, writers*each)
	}
}

// TestLongLivedStoreCheckpointsAtClose: the daemon's store leaves a keyed
// checkpoint of where the chains stood when it closed.
func TestLongLivedStoreCheckpointsAtClose(t *testing.T) {
	h := newAnchoredHome(t)
	o := h.opt
	o.LongLived = true
	s, err := OpenWith(ctx, h.db, o)
	if err != nil {
		t.Fatal(err)
	}
	h.record(t, s, 3)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	rows := queryRows(t, rawConn(t, h.db), `SELECT audit_rows FROM chain_checkpoints ORDER BY seq DESC LIMIT 1`, nil)
	if len(rows) != 1 || rows[0][0] != "3" {
		t.Fatalf("last checkpoint = %v, want one at 3 audit rows", rows)
	}
}
