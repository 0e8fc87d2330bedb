package sqlite

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ncruces/go-sqlite3"

	"github.com/agentwarden/warden"
)

// TestApprovalRowsChangeOnce proves the database itself keeps approvals and
// grants honest, whoever connects: an ended approval cannot be re-answered or
// rewritten, no row is deleted, a used once grant cannot be reset.
func TestApprovalRowsChangeOnce(t *testing.T) {
	s, path := openTest(t)
	now := time.Now()
	req := warden.Request{Capability: warden.CapShell, Action: "exec", Resource: "make deploy", Session: "s"}
	a := &warden.Approval{ID: "a1", TraceID: "t1", Request: req, Decision: warden.Decision{Verdict: warden.Ask, Tier: 3},
		InputHash: warden.InputHash(&req), CreatedAt: now, ExpiresAt: now.Add(time.Minute), Channel: "api"}
	if err := s.CreateApproval(ctx, a); err != nil {
		t.Fatal(err)
	}
	c := rawConn(t, path)
	for _, sql := range []string{
		`UPDATE approvals SET request = '{"resource":"rm -rf /"}' WHERE id = 'a1'`,
		`UPDATE approvals SET state = 'pending' WHERE id = 'a1'`,
		`UPDATE approvals SET expires_at = expires_at + 1000000 WHERE id = 'a1'`,
		`DELETE FROM approvals`,
	} {
		if err := c.Exec(sql); err == nil {
			t.Errorf("%s succeeded on a pending approval; want it refused", sql)
		}
	}
	g := &warden.Grant{ID: "g1", Kind: warden.GrantOnce, InputHash: a.InputHash, Session: "s", ApprovalID: "a1", By: "terminal", CreatedAt: now}
	if _, err := s.ResolveApproval(ctx, warden.Resolution{ID: "a1", State: warden.ApprovalApproved, Answer: warden.AnswerOnce, By: "terminal", At: now}, g); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := s.TakeGrant(ctx, warden.GrantQuery{InputHash: a.InputHash, Session: "s", At: now}); !ok || err != nil {
		t.Fatalf("TakeGrant = %v, %v", ok, err)
	}
	for _, sql := range []string{
		`UPDATE approvals SET state = 'denied', answer = 'deny' WHERE id = 'a1'`,
		`UPDATE approvals SET answered_by = 'someone else' WHERE id = 'a1'`,
		`UPDATE grants SET used_at = 0 WHERE id = 'g1'`,
		`UPDATE grants SET kind = 'session' WHERE id = 'g1'`,
		`DELETE FROM grants`,
	} {
		err := c.Exec(sql)
		if err == nil {
			t.Errorf("%s succeeded; want it refused", sql)
		} else if !strings.Contains(err.Error(), "once") && !strings.Contains(err.Error(), "kept") {
			t.Errorf("%s failed with %v; want a trigger to refuse it", sql, err)
		}
	}
}

// TestMigrateV1KeepsTheLog opens a database written by a warden that knew
// only schema version 1: it gains the approval tables and keeps its rows.
func TestMigrateV1KeepsTheLog(t *testing.T) {
	path := filepath.Join(t.TempDir(), "warden.db")
	c, err := sqlite3.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Exec(`PRAGMA journal_mode = WAL; BEGIN; ` + schemaV1 + `; PRAGMA user_version = 1; COMMIT;`); err != nil {
		t.Fatal(err)
	}
	c.Close()
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	seed(t, s)
	if rep, err := s.Verify(ctx); err != nil || !rep.OK() || rep.AuditRows != 5 {
		t.Errorf("Verify after migration = %+v, %v", rep, err)
	}
	if _, err := s.ListApprovals(ctx, warden.ApprovalFilter{}); err != nil {
		t.Errorf("ListApprovals after migrating from version 1: %v", err)
	}
	if v := queryRows(t, rawConn(t, path), `PRAGMA user_version`, nil)[0][0]; v != strconv.Itoa(schemaVersion) {
		t.Errorf("user_version = %s, want %d", v, schemaVersion)
	}
}

// TestHostAnswerRoundTrips: "run on host" is stored with its once grant,
// both marked host, and read back as the answer host; the database refuses
// a host mark on anything else, and a grant's mark never changes.
func TestHostAnswerRoundTrips(t *testing.T) {
	s, path := openTest(t)
	now := time.Now()
	req := warden.Request{Capability: warden.CapShell, Action: "exec", Resource: "git push", Session: "s"}
	a := &warden.Approval{ID: "a1", TraceID: "t1", Request: req, Decision: warden.Decision{Verdict: warden.Ask, Tier: 3},
		InputHash: warden.InputHash(&req), CreatedAt: now, ExpiresAt: now.Add(time.Minute), Channel: "exec"}
	if err := s.CreateApproval(ctx, a); err != nil {
		t.Fatal(err)
	}
	plain := *a
	plain.ID, plain.TraceID = "a2", "t2"
	if err := s.CreateApproval(ctx, &plain); err != nil {
		t.Fatal(err)
	}
	mismatched := &warden.Grant{ID: "g0", Kind: warden.GrantOnce, InputHash: a.InputHash, Session: "s", ApprovalID: "a2", By: "terminal:me", CreatedAt: now, Host: true}
	if _, err := s.ResolveApproval(ctx, warden.Resolution{ID: "a2", State: warden.ApprovalApproved, Answer: warden.AnswerOnce, By: "terminal:me", At: now}, mismatched); err == nil {
		t.Errorf("ResolveApproval stored a host grant for the answer once; want it refused")
	}
	g := &warden.Grant{ID: "g1", Kind: warden.GrantOnce, InputHash: a.InputHash, Session: "s", ApprovalID: "a1", By: "terminal:me", CreatedAt: now, Host: true}
	ended, err := s.ResolveApproval(ctx, warden.Resolution{ID: "a1", State: warden.ApprovalApproved, Answer: warden.AnswerHost, By: "terminal:me", At: now}, g)
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.GetApproval(ctx, "a1")
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range []warden.Approval{ended, got} {
		if x.State != warden.ApprovalApproved || x.Answer != warden.AnswerHost {
			t.Errorf("approval after the answer host: state %s, answer %q; want approved, host", x.State, x.Answer)
		}
	}
	if rows := queryRows(t, rawConn(t, path), `SELECT answer, host FROM approvals WHERE id = 'a1'`, nil); rows[0][0] != "once" || rows[0][1] != "1" {
		t.Errorf("stored answer, host = %v; want once, 1", rows[0])
	}
	peek, ok, err := s.TakeGrant(ctx, warden.GrantQuery{InputHash: a.InputHash, Session: "s", At: now, Peek: true})
	if err != nil || !ok || !peek.Host {
		t.Fatalf("TakeGrant(peek) = %+v, %v, %v; want the host grant", peek, ok, err)
	}
	c := rawConn(t, path)
	for _, sql := range []string{
		`UPDATE grants SET host = 0 WHERE id = 'g1'`,
		`UPDATE grants SET used_at = 1, host = 0 WHERE id = 'g1'`,
		`UPDATE approvals SET host = 0 WHERE id = 'a1'`,
		`INSERT INTO grants (id, kind, input_hash, session, approval_id, by, created_at, expires_at, used_at, host) VALUES ('g2', 'session', 'h', 's', 'a1', 'x', 0, 0, 0, 1)`,
		`INSERT INTO grants (id, kind, input_hash, session, approval_id, by, created_at, expires_at, used_at, host) VALUES ('g3', 'once', 'h', 's', 'a1', 'x', 0, 0, 0, 2)`,
	} {
		if err := c.Exec(sql); err == nil {
			t.Errorf("%s succeeded; want it refused", sql)
		}
	}
	taken, ok, err := s.TakeGrant(ctx, warden.GrantQuery{InputHash: a.InputHash, Session: "s", At: now})
	if err != nil || !ok || !taken.Host || taken.ID != "g1" {
		t.Fatalf("TakeGrant = %+v, %v, %v; want host grant g1", taken, ok, err)
	}
	if _, ok, _ := s.TakeGrant(ctx, warden.GrantQuery{InputHash: a.InputHash, Session: "s", At: now}); ok {
		t.Errorf("the host grant was taken twice; it is a once grant")
	}
}

// TestMigrateV5KeepsApprovals: a database of schema 5 with an approval and
// an unused once grant keeps both through the host migration, unmarked,
// and the grant still works once.
func TestMigrateV5KeepsApprovals(t *testing.T) {
	path := filepath.Join(t.TempDir(), "warden.db")
	c, err := sqlite3.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Exec(`PRAGMA journal_mode = WAL; BEGIN`); err != nil {
		t.Fatal(err)
	}
	for v := range 5 {
		if err := migrations[v](c); err != nil {
			t.Fatalf("migration %d: %v", v, err)
		}
	}
	if err := c.Exec(`PRAGMA user_version = 5;
INSERT INTO approvals (id, trace_id, request, decision, input_hash, session, created_at, expires_at, channel, state, answer, answered_by, answered_at, note)
VALUES ('a1', 't1', '{}', '{}', 'h1', 's', 1, 9999999999999, 'api', 'approved', 'once', 'terminal', 2, '');
INSERT INTO grants (id, kind, input_hash, session, approval_id, by, created_at, expires_at, used_at)
VALUES ('g1', 'once', 'h1', 's', 'a1', 'terminal', 2, 0, 0);
COMMIT`); err != nil {
		t.Fatal(err)
	}
	c.Close()
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	a, err := s.GetApproval(ctx, "a1")
	if err != nil || a.Answer != warden.AnswerOnce {
		t.Errorf("GetApproval after migrating = %+v, %v; want answer once", a, err)
	}
	g, ok, err := s.TakeGrant(ctx, warden.GrantQuery{InputHash: "h1", Session: "s", At: time.Now()})
	if err != nil || !ok || g.Host {
		t.Errorf("TakeGrant after migrating = %+v, %v, %v; want the plain once grant", g, ok, err)
	}
}
