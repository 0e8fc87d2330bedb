package sqlite

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/agentwarden/warden"
)

// seed records a few entries with stages, a debit and an event.
func seed(t *testing.T, s *Store) {
	t.Helper()
	for i := range 5 {
		e := &warden.AuditEntry{
			TraceID: "trace-" + string(rune('a'+i)), Capability: warden.CapTrade, Action: "swap", Resource: "SOL",
			Args: json.RawMessage(`{"amount_usd":"10"}`), Verdict: warden.Allow, Reason: "ok", Rule: "finance.ok",
			Stages: []warden.StageAnswer{
				{Stage: "position-sizing", Verdict: warden.Allow, Rule: "sizing.ok", Reason: "fits"},
				{Stage: "exposure", Verdict: warden.Allow, Rule: "exposure.ok", Reason: "fits"},
			},
		}
		d := &warden.Debit{Amount: 10 * warden.MicrosPerDollar, Cap: 1000 * warden.MicrosPerDollar, Since: time.Now().Add(-warden.SpendWindow)}
		if err := s.Record(ctx, e, d); err != nil {
			t.Fatal(err)
		}
	}
	for _, typ := range []string{warden.EventKillSwitchOn, warden.EventKillSwitchOff, warden.EventConfigChanged} {
		if err := s.AppendEvent(ctx, &warden.SecurityEvent{Type: typ, Severity: warden.SevWarn, Summary: typ}); err != nil {
			t.Fatal(err)
		}
	}
}

// TestAppendOnly proves the database itself refuses UPDATE and DELETE on every
// audit table, whoever connects.
func TestAppendOnly(t *testing.T) {
	s, path := openTest(t)
	seed(t, s)
	c := rawConn(t, path)
	for _, tc := range []struct{ name, sql string }{
		{"update audit row", `UPDATE audit SET verdict = 'deny' WHERE seq = 2`},
		{"update every audit row", `UPDATE audit SET output = ''`},
		{"delete audit row", `DELETE FROM audit WHERE seq = 3`},
		{"delete every audit row", `DELETE FROM audit`},
		{"update stages", `UPDATE audit SET stages = NULL WHERE seq = 1`},
		{"update event", `UPDATE security_events SET severity = 'info'`},
		{"delete event", `DELETE FROM security_events WHERE seq = 1`},
		{"update ledger", `UPDATE spend_ledger SET amount_micros = 0`},
		{"delete ledger", `DELETE FROM spend_ledger`},
		// REPLACE deletes the old row without firing DELETE triggers; an upsert
		// updates it. Both must be refused too.
		{"replace audit row", `INSERT OR REPLACE INTO audit (` + auditColumns + `)
			SELECT seq, 'x', trace_id, created_at, capability, action, resource, tool, tier, args, context, requested_by,
			autonomous, session, host, raw, verdict, blocked, block_reason, reason, rule, result, output, error, duration,
			prev_hash, hash, stages FROM audit WHERE seq = 1`},
		{"replace event", `INSERT OR REPLACE INTO security_events SELECT * FROM security_events WHERE seq = 2`},
		{"upsert ledger", `INSERT INTO spend_ledger (seq, created_at, trace_id, amount_micros) VALUES (1, 0, 'x', 0)
			ON CONFLICT (seq) DO UPDATE SET amount_micros = 0`},
		{"negative ledger row", `INSERT INTO spend_ledger (created_at, trace_id, amount_micros) VALUES (0, 'x', -50000000)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := c.Exec(tc.sql)
			if err == nil {
				t.Fatalf("%s succeeded; want the database to refuse it", tc.sql)
			}
			if !strings.Contains(err.Error(), "append-only") && !strings.Contains(err.Error(), "CHECK constraint") {
				t.Errorf("%s failed with %v; want the append-only trigger or a CHECK constraint to refuse it", tc.sql, err)
			}
		})
	}
	rep, err := s.Verify(ctx)
	if err != nil || !rep.OK() || rep.AuditRows != 5 || rep.EventRows != 3 {
		t.Errorf("Verify after refused tampering = %+v (break %+v), %v; want 5 and 3 intact rows", rep, rep.FirstBreak, err)
	}
	if spent, _ := s.SpentSince(ctx, time.Time{}); spent != 50*warden.MicrosPerDollar {
		t.Errorf("ledger = $%s after refused tampering, want $50", spent)
	}
}
