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
