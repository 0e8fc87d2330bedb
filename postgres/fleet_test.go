package postgres

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/internal/pgtest"
)

const dollar = warden.USD(warden.MicrosPerDollar)

// TestStoresShareOneCapAndChain: three stores on one database (each its own
// pool, as three daemons on three hosts are) take 300 concurrent $10 debits
// against a $2,000 cap: exactly 200 are allowed, the ledger holds $2,000,
// and the audit log is one chain of 300 rows (the refused ones are recorded
// without a debit, as the pipeline records a denial) that verifies.
func TestStoresShareOneCapAndChain(t *testing.T) {
	first, owner := openTest(t)
	stores := []*Store{first, openDSN(t, pgtest.WithRole(t, owner, writerRole)), openDSN(t, pgtest.WithRole(t, owner, writerRole))}
	now := time.Now()
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		allowed int
		errs    []error
	)
	for i := range 300 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := stores[i%len(stores)]
			e := &warden.AuditEntry{TraceID: fmt.Sprintf("trade-%d", i), Capability: warden.CapTrade, Action: "swap", Resource: "SOL", Verdict: warden.Allow}
			err := s.Record(ctx, e, &warden.Debit{Amount: 10 * dollar, Cap: 2000 * dollar, Since: now.Add(-warden.SpendWindow)})
			var capErr *warden.CapExceededError
			if errors.As(err, &capErr) {
				e = &warden.AuditEntry{TraceID: e.TraceID, Capability: warden.CapTrade, Action: "swap", Resource: "SOL", Verdict: warden.Deny, Reason: capErr.Error()}
				err = s.Record(ctx, e, nil)
			} else if err == nil {
				mu.Lock()
				allowed++
				mu.Unlock()
			}
			if err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		t.Errorf("Record: %v", err)
	}
	if allowed != 200 {
		t.Errorf("%d of 300 concurrent $10 debits against a $2,000 cap were allowed, want exactly 200", allowed)
	}
	if got, err := stores[1].SpentSince(ctx, now.Add(-time.Hour)); err != nil || got != 2000*dollar {
		t.Errorf("SpentSince = $%s, %v; want $2,000", got, err)
	}
	rep, err := stores[2].Verify(ctx)
	if err != nil || !rep.OK() || rep.AuditRows != 300 || rep.Checkpoints != 3 {
		t.Errorf("Verify = %+v, %v; want 300 rows in one chain through 3 checkpoints", rep, err)
	}
}

// TestSpentSinceMatchesTheLedger: the running totals give, for any t, the
// sum a scan of the ledger gives, releases included, across minute
// boundaries and at the edges of a minute.
func TestSpentSinceMatchesTheLedger(t *testing.T) {
	s, _ := openTest(t)
	r := rand.New(rand.NewPCG(27, 1))
	base := time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC)
	type debit struct {
		at     time.Time
		amount warden.USD
		trace  string
	}
	var ds []debit
	for i := range 200 {
		d := debit{at: base.Add(time.Duration(r.Int64N(int64(3 * time.Hour)))).Truncate(time.Millisecond), amount: warden.USD(1 + r.Int64N(int64(50*dollar))),
			trace: fmt.Sprintf("t%d", i)}
		if i%10 == 0 {
			d.at = base.Add(time.Duration(r.IntN(180)) * time.Minute) // on a minute boundary
		}
		ds = append(ds, d)
		e := &warden.AuditEntry{TraceID: d.trace, CreatedAt: d.at, Capability: warden.CapTrade, Action: "swap", Verdict: warden.Allow}
		if err := s.Record(ctx, e, &warden.Debit{Amount: d.amount, Cap: 1 << 60, Since: base}); err != nil {
			t.Fatal(err)
		}
	}
	released := map[string]bool{}
	for i := 0; i < len(ds); i += 7 {
		if err := s.Release(ctx, ds[i].trace, "failed", base); err != nil {
			t.Fatal(err)
		}
		released[ds[i].trace] = true
	}
	if err := s.Release(ctx, ds[0].trace, "again", base); err != nil {
		t.Errorf("a second release: %v; want it to do nothing", err)
	}
	probes := []time.Time{{}, base, base.Add(3 * time.Hour)}
	for _, d := range ds[:20] {
		probes = append(probes, d.at, d.at.Add(time.Millisecond), d.at.Add(-time.Millisecond), d.at.Add(-time.Microsecond))
	}
	for range 50 {
		probes = append(probes, base.Add(time.Duration(r.Int64N(int64(3*time.Hour)))))
	}
	for _, p := range probes {
		var want warden.USD
		for _, d := range ds {
			if !d.at.Before(p) && !released[d.trace] {
				want += d.amount
			}
		}
		if got, err := s.SpentSince(ctx, p); err != nil || got != want {
			t.Errorf("SpentSince(%v) = $%s, %v; want $%s", p, got, err, want)
		}
	}
	if rep, err := s.Verify(ctx); err != nil || !rep.OK() {
		t.Errorf("Verify = %+v, %v", rep, err)
	}
}

// TestOpenChecksTheSchema: a database warden has not migrated is refused
// with the command that migrates it; one of a newer warden is refused as
// unknown, by Open and by Migrate.
func TestOpenChecksTheSchema(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	_, err := Open(ctx, dsn, Options{})
	if warden.ErrorCodeOf(err) != warden.EConflict || !strings.Contains(warden.UserMessage(err), "warden migrate") {
		t.Errorf("Open before migrating = %q; want a conflict naming `warden migrate`", warden.UserMessage(err))
	}
	from, to, err := Migrate(ctx, dsn, "")
	if err != nil || from != 0 || to != SchemaVersion() {
		t.Fatalf("Migrate = %d, %d, %v; want 0 → %d", from, to, err, SchemaVersion())
	}
	if from, to, err := Migrate(ctx, dsn, ""); err != nil || from != to {
		t.Errorf("a second Migrate = %d, %d, %v; want nothing to do", from, to, err)
	}
	s, err := Open(ctx, dsn, Options{})
	if err != nil {
		t.Fatalf("Open after migrating: %v", err)
	}
	s.Close()
	c := connect(t, dsn)
	if _, err := c.Exec(ctx, `INSERT INTO warden_schema (version, name) VALUES ($1, 'from the future')`, SchemaVersion()+1); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(ctx, dsn, Options{}); warden.ErrorCodeOf(err) != warden.EConflict || !strings.Contains(err.Error(), "knows only up to") {
		t.Errorf("Open on a newer schema = %v; want it refused as unknown", err)
	}
	if _, _, err := Migrate(ctx, dsn, ""); err == nil || !strings.Contains(err.Error(), "knows only up to") {
		t.Errorf("Migrate on a newer schema = %v; want it refused", err)
	}
}

// TestConcurrentMigrations: daemons migrating one database at once wait
// for each other; every one ends at the current schema.
func TestConcurrentMigrations(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _, errs[i] = Migrate(ctx, dsn, "")
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Errorf("concurrent Migrate: %v", err)
		}
	}
}

// TestUnreachableServer: a server that cannot be reached is EUnavailable,
// and no error carries the DSN's password.
// TestLoginRefusedIsNamed: a server that refuses warden's login (here an
// unknown role) is a setting to fix, said as such, not an internal error.
func TestLoginRefusedIsNamed(t *testing.T) {
	u, err := url.Parse(pgtest.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword("no_such_role_x", "s3cret-Pa55")
	_, err = Open(ctx, u.String(), Options{})
	msg := warden.UserMessage(err)
	if warden.ErrorCodeOf(err) != warden.EInvalid || !strings.Contains(msg, "refused warden's login") || strings.Contains(msg, "s3cret-Pa55") {
		t.Errorf("Open as an unknown role = %q (%v); want an invalid-setting error naming the refused login, without the password", msg, warden.ErrorCodeOf(err))
	}
}

func TestUnreachableServer(t *testing.T) {
	dsn := "postgres://warden:s3cret-Pa55@/warden?host=/nonexistent-dir&connect_timeout=2"
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	_, err := Open(cctx, dsn, Options{})
	if warden.ErrorCodeOf(err) != warden.EUnavailable {
		t.Errorf("Open on an unreachable server = %v; want EUnavailable", err)
	}
	if err != nil && strings.Contains(fmt.Sprintf("%v %+v", err, err), "s3cret-Pa55") {
		t.Errorf("the error carries the password: %v", err)
	}
	if _, err := Open(ctx, "postgres://warden:s3cret-Pa55@host:notaport/db", Options{}); err == nil || strings.Contains(err.Error(), "s3cret-Pa55") {
		t.Errorf("Open on a malformed DSN = %v; want an error without the password", err)
	}
}
