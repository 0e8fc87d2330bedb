package postgres

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/internal/pgtest"
)

// seed records n entries (every third one with a debit), an event, an
// approval answered with a once grant, a released debit and a rate slot.
func seed(t *testing.T, s *Store, n int) {
	t.Helper()
	now := time.Now().Truncate(time.Millisecond)
	for i := range n {
		e := &warden.AuditEntry{TraceID: fmt.Sprintf("t%d", i), CreatedAt: now.Add(time.Duration(i) * time.Millisecond),
			Capability: warden.CapTrade, Action: "swap", Resource: "SOL", Verdict: warden.Allow, Reason: "fits", Rule: "trade.ok"}
		var d *warden.Debit
		if i%3 == 0 {
			d = &warden.Debit{Amount: warden.USD(warden.MicrosPerDollar), Cap: 1000 * warden.USD(warden.MicrosPerDollar), Since: now.Add(-time.Hour),
				Slot: &warden.RateSlot{Kind: "sign", Limits: []warden.RateLimit{{Window: time.Hour, Max: 1000}}}}
		}
		if err := s.Record(ctx, e, d); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.AppendEvent(ctx, &warden.SecurityEvent{Type: warden.EventKillSwitchOn, Severity: warden.SevCritical, Summary: "stop"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Release(ctx, "t0", "failed", now); err != nil {
		t.Fatal(err)
	}
	req := warden.Request{Capability: warden.CapShell, Action: "exec", Resource: "make deploy", Session: "s"}
	a := &warden.Approval{ID: "a1", TraceID: "ta", Request: req, Decision: warden.Decision{Verdict: warden.Ask, Tier: 3},
		InputHash: warden.InputHash(&req), CreatedAt: now, ExpiresAt: now.Add(time.Hour), Channel: "api"}
	if err := s.CreateApproval(ctx, a); err != nil {
		t.Fatal(err)
	}
	g := &warden.Grant{ID: "g1", Kind: warden.GrantOnce, InputHash: a.InputHash, Session: "s", ApprovalID: "a1", By: "terminal", CreatedAt: now}
	if _, err := s.ResolveApproval(ctx, warden.Resolution{ID: "a1", State: warden.ApprovalApproved, Answer: warden.AnswerOnce, By: "terminal", At: now}, g); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := s.TakeGrant(ctx, warden.GrantQuery{InputHash: a.InputHash, Session: "s", At: now}); !ok || err != nil {
		t.Fatalf("TakeGrant = %v, %v", ok, err)
	}
	if _, err := s.pool.Exec(ctx, `INSERT INTO kill_switch (created_at, engaged, set_by, reason) VALUES (1, true, 'test', 'seed')`); err != nil {
		t.Fatal(err)
	}
}

func connect(t *testing.T, dsn string) *pgx.Conn {
	t.Helper()
	c, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(ctx) })
	return c
}

// rewrites are changes to logged rows that nobody may make.
var rewrites = []string{
	`UPDATE audit SET verdict = 'deny' WHERE seq = 2`,
	`UPDATE audit SET resource = 'x'`,
	`DELETE FROM audit WHERE seq = 3`,
	`TRUNCATE audit CASCADE`,
	`UPDATE security_events SET summary = 'nothing happened'`,
	`DELETE FROM security_events`,
	`TRUNCATE security_events`,
	`UPDATE spend_ledger SET amount_micros = 0`,
	`DELETE FROM spend_ledger`,
	`TRUNCATE spend_ledger CASCADE`,
	`DELETE FROM spend_releases`,
	`DELETE FROM spend_minutes`,
	`DELETE FROM chain_checkpoints`,
	`UPDATE approvals SET state = 'denied', answer = 'deny' WHERE id = 'a1'`,
	`UPDATE approvals SET request = '{"resource":"rm -rf /"}' WHERE id = 'a1'`,
	`DELETE FROM approvals`,
	`UPDATE grants SET used_at = 0 WHERE id = 'g1'`,
	`UPDATE grants SET kind = 'session' WHERE id = 'g1'`,
	`DELETE FROM grants`,
	`DELETE FROM rate_slots`,
	`UPDATE rate_slots SET created_at = 0`,
	`DELETE FROM kill_switch`,
}

// TestAppendOnlyByTriggers: the database refuses every rewrite of a logged
// row even to the tables' owner (here a superuser), by trigger.
func TestAppendOnlyByTriggers(t *testing.T) {
	s, owner := openTest(t)
	seed(t, s, CheckpointEvery+10)
	c := connect(t, owner)
	for _, sql := range rewrites {
		_, err := c.Exec(ctx, sql)
		var pe *pgconn.PgError
		if !errors.As(err, &pe) {
			t.Errorf("%s as the owner = %v; want a trigger to refuse it", sql, err)
			continue
		}
		if pe.Code != "42501" || !strings.Contains(pe.Message, "append-only") && !strings.Contains(pe.Message, "once") && !strings.Contains(pe.Message, "keeps") {
			t.Errorf("%s as the owner failed with %s %q; want a trigger's refusal", sql, pe.Code, pe.Message)
		}
	}
	if rep, err := s.Verify(ctx); err != nil || !rep.OK() || rep.AuditRows != CheckpointEvery+10 || rep.EventRows != 1 || rep.Checkpoints != 1 {
		t.Errorf("Verify after the refused rewrites = %+v, %v; want %d and 1 rows intact through 1 checkpoint", rep, err, CheckpointEvery+10)
	}
}

// TestWriterRoleCannotRewrite: warden_writer lacks the privilege to update,
// delete or truncate what it logged, or to drop the triggers, so the
// refusal does not rest on the triggers alone.
func TestWriterRoleCannotRewrite(t *testing.T) {
	s, owner := openTest(t)
	seed(t, s, 10)
	c := connect(t, pgtest.WithRole(t, owner, writerRole))
	var denied []string
	for _, sql := range rewrites {
		// The answer columns of approvals and grants are the writer's to
		// set, once: their triggers refuse these.
		if !strings.HasPrefix(sql, "UPDATE approvals SET state") && !strings.HasPrefix(sql, "UPDATE grants SET used_at") {
			denied = append(denied, sql)
		}
	}
	for _, sql := range append(denied,
		`UPDATE spend_minutes SET amount_micros = 0`,
		`ALTER TABLE audit DISABLE TRIGGER audit_append_only`,
		`DROP TRIGGER audit_append_only ON audit`,
		`UPDATE approvals SET request = '{}' WHERE id = 'a1'`,
		`UPDATE grants SET input_hash = 'x'`,
		`INSERT INTO spend_minutes VALUES (1, -1000000000)`,
		`SET session_replication_role = replica`,
	) {
		_, err := c.Exec(ctx, sql)
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || pe.Code != "42501" {
			t.Errorf("%s as warden_writer = %v; want permission denied (42501)", sql, err)
			continue
		}
		if strings.Contains(pe.Message, "append-only") || strings.Contains(pe.Message, "once") {
			t.Errorf("%s as warden_writer reached a trigger (%q); want the privilege check to refuse it first", sql, pe.Message)
		}
	}
}
