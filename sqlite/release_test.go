package sqlite

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/agentwarden/warden"
)

// A released reservation stops counting toward the cap, once: releasing it
// again changes nothing, a trace with no debit cannot be released (so a
// release never adds budget), and the releases are append-only.
func TestReleaseGivesBackAReservationOnce(t *testing.T) {
	s, path := openTest(t)
	ctx := context.Background()
	now := time.Now()
	for i, id := range []string{"t1", "t2"} {
		e := &warden.AuditEntry{TraceID: id, CreatedAt: now.Add(time.Duration(i) * time.Millisecond), Capability: warden.CapTrade,
			Action: "buy", Resource: "WETH", Verdict: warden.Allow, Rule: "risk.floor", Reason: "ok"}
		if err := s.Record(ctx, e, &warden.Debit{Amount: 300 * warden.MicrosPerDollar, Cap: 2000 * warden.MicrosPerDollar, Since: now.Add(-time.Hour)}); err != nil {
			t.Fatal(err)
		}
	}
	spent := func() warden.USD {
		u, err := s.SpentSince(ctx, now.Add(-time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		return u
	}
	if got := spent(); got != 600*warden.MicrosPerDollar {
		t.Fatalf("spent = $%s, want $600", got)
	}
	for range 2 {
		if err := s.Release(ctx, "t1", "backend refused", now); err != nil {
			t.Fatalf("Release(t1) = %v", err)
		}
		if got := spent(); got != 300*warden.MicrosPerDollar {
			t.Fatalf("spent after releasing t1 = $%s, want $300", got)
		}
	}
	var we *warden.Error
	if err := s.Release(ctx, "nope", "x", now); !errors.As(err, &we) || we.Code != warden.ENotFound {
		t.Fatalf("Release(unknown trace) = %v, want ENotFound", err)
	}
	c := rawConn(t, path)
	for _, q := range []string{`DELETE FROM spend_releases`, `UPDATE spend_releases SET trace_id = 't2'`,
		`INSERT OR REPLACE INTO spend_releases (trace_id, created_at, reason) VALUES ('t1', 0, 'x')`} {
		if err := c.Exec(q); err == nil {
			t.Errorf("%s succeeded; releases are append-only", q)
		}
	}
	if got := spent(); got != 300*warden.MicrosPerDollar {
		t.Fatalf("spent after refused tampering = $%s, want $300", got)
	}
}
