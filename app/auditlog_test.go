package app_test

import (
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/app"
)

func removeDatabase(t *testing.T, home app.Home) {
	t.Helper()
	for _, sfx := range []string{"", "-wal", "-shm"} {
		if err := os.Remove(home.DatabasePath() + sfx); err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
	}
}

// notAllowed fails the test if a check answered allow.
func notAllowed(t *testing.T, what string, d warden.Decision, err error) {
	t.Helper()
	if err == nil && d.Verdict == warden.Allow {
		t.Fatalf("%s: allow (%s), want a refusal", what, d.Reason)
	}
}

func missingNames(t *testing.T, rep warden.VerifyReport, part string) {
	t.Helper()
	if rep.OK() || !slices.ContainsFunc(rep.Missing, func(m string) bool { return strings.Contains(m, part) }) {
		t.Fatalf("audit verify: missing %q, break %+v; want it to name %q", rep.Missing, rep.FirstBreak, part)
	}
}

// TestDaemonSeesItsDatabaseDeleted: warden.db deleted under a running
// daemon. Its next decisions are not allow (it does not write to the
// unlinked file), `audit verify` names the database as missing, and the
// critical event it recorded survives into the chain that recovery starts.
func TestDaemonSeesItsDatabaseDeleted(t *testing.T) {
	dm := startDaemon(t)
	for range 3 {
		if d, err := dm.agent.Check(ctx, toolReq("get_price", "")); err != nil || d.Verdict != warden.Allow {
			t.Fatalf("before: %v %v", d.Verdict, err)
		}
	}
	removeDatabase(t, dm.home)
	for i := range 2 {
		d, err := dm.agent.Check(ctx, toolReq("get_price", ""))
		notAllowed(t, "a check after the database was deleted", d, err)
		if i == 0 && err != nil && !strings.Contains(err.Error(), "deleted while warden had it open") {
			t.Errorf("the refusal does not say what happened: %v", err)
		}
	}
	if _, err := os.Stat(dm.home.DatabasePath()); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("a fresh database was created")
	}
	rep, err := app.VerifyAudit(ctx, dm.home)
	if err != nil {
		t.Fatal(err)
	}
	missingNames(t, rep, "the database "+dm.home.DatabasePath())

	res, err := app.RecoverAudit(ctx, dm.home, "test", time.Now())
	if err != nil || !res.NewChain {
		t.Fatalf("RecoverAudit = %+v, %v", res, err)
	}
	s, err := app.OpenStore(ctx, dm.home)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	evs, err := s.Events(ctx, warden.EventFilter{Type: warden.EventAuditLost})
	if err != nil || len(evs) == 0 || evs[0].Severity != warden.SevCritical || !strings.Contains(evs[0].Summary, "deleted while warden had it open") {
		t.Fatalf("audit_log_lost events after recovery = %+v, %v; want the daemon's critical event", evs, err)
	}
}

// TestDaemonSeesItsDatabaseReplaced: another valid database renamed over
// warden.db under a running daemon is not the file it has open.
func TestDaemonSeesItsDatabaseReplaced(t *testing.T) {
	dm := startDaemon(t)
	other := startDaemon(t)
	if _, err := other.agent.Check(ctx, toolReq("get_price", "")); err != nil {
		t.Fatal(err)
	}
	if _, err := dm.agent.Check(ctx, toolReq("get_price", "")); err != nil {
		t.Fatal(err)
	}
	// Swapped in whole: the other database and its write-ahead log.
	removeDatabase(t, dm.home)
	for _, sfx := range []string{"", "-wal"} {
		if err := os.Rename(other.home.DatabasePath()+sfx, dm.home.DatabasePath()+sfx); err != nil {
			t.Fatal(err)
		}
	}
	d, err := dm.agent.Check(ctx, toolReq("get_price", ""))
	notAllowed(t, "a check after the database was replaced", d, err)
	rep, err := app.VerifyAudit(ctx, dm.home)
	if err != nil {
		t.Fatal(err)
	}
	if rep.OK() {
		t.Fatalf("audit verify of a replaced database = %+v, want a problem", rep)
	}
}

// TestUnrecordedDecisionIsNeverAllowed: a one-shot process whose audit
// record cannot be written (the database is gone) gets an error, never an
// allow, and no fresh database is made for it.
func TestUnrecordedDecisionIsNeverAllowed(t *testing.T) {
	home := app.Home(t.TempDir() + "/h")
	if _, err := app.Init(ctx, home, false); err != nil {
		t.Fatal(err)
	}
	a, err := app.Open(ctx, home, app.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if d, err := a.Gate.Check(ctx, toolReq("get_price", "")); err != nil || d.Verdict != warden.Allow {
		t.Fatalf("before: %v %v", d.Verdict, err)
	}
	a.Close()
	removeDatabase(t, home)
	a, err = app.Open(ctx, home, app.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	d, err := a.Gate.Check(ctx, toolReq("get_price", ""))
	notAllowed(t, "a one-shot check without its database", d, err)
	if msg := warden.UserMessage(err); !strings.Contains(msg, "the database") || !strings.Contains(msg, "warden audit recover --yes") {
		t.Errorf("the refusal %q does not name the database and the way back", msg)
	}
	if _, err := os.Stat(home.DatabasePath()); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("a fresh database was created")
	}
	if _, err := app.Init(ctx, home, false); err == nil {
		t.Fatal("warden init made a fresh database for a home whose anchor recorded rows")
	}
}
