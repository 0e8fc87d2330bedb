package app

import (
	"context"
	"testing"
	"time"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/hook"
)

// TestRecordRanJudgesTheCallsNewestDecision: the outcome of a call that ran
// is judged by the strongest verdict of its newest decision, the last
// Requests rows under its trace (a Codex patch decides one row per file; a
// Gemini call's trace is shared by its identical calls); an ask counts as
// approved only where the host asked its user.
func TestRecordRanJudgesTheCallsNewestDecision(t *testing.T) {
	ctx := context.Background()
	home := Home(t.TempDir())
	if _, err := Init(ctx, home, false); err != nil {
		t.Fatal(err)
	}
	s, err := OpenStore(ctx, home)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	cases := []struct {
		name     string
		rows     []warden.Verdict
		asked    bool
		requests int
		want     string // the event type; "" for none
	}{
		{name: "no decision", want: warden.EventHostRanUndecided},
		{name: "allowed", rows: []warden.Verdict{warden.Allow}},
		{name: "sandboxed", rows: []warden.Verdict{warden.Sandbox}},
		{name: "denied", rows: []warden.Verdict{warden.Deny}, want: warden.EventHostRanDenied},
		{name: "asked at the host's prompt", rows: []warden.Verdict{warden.Ask}, asked: true, want: warden.EventHostApproved},
		{name: "ask refused by the hook", rows: []warden.Verdict{warden.Ask}, want: warden.EventHostRanDenied},
		{name: "an ask, then the approved retry", rows: []warden.Verdict{warden.Ask, warden.Allow}},
		{name: "an allowed call, then a denied one", rows: []warden.Verdict{warden.Allow, warden.Deny}, want: warden.EventHostRanDenied},
		{name: "a two-file patch, one file denied", rows: []warden.Verdict{warden.Deny, warden.Allow}, requests: 2, want: warden.EventHostRanDenied},
		{name: "a two-file patch, one file refused", rows: []warden.Verdict{warden.Ask, warden.Allow}, requests: 2, want: warden.EventHostRanDenied},
		{name: "a denied patch, then an allowed one", rows: []warden.Verdict{warden.Deny, warden.Allow, warden.Allow}, requests: 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			trace := NewID()
			for _, v := range c.rows {
				e := &warden.AuditEntry{ID: NewID(), TraceID: trace, CreatedAt: time.Now(), Capability: warden.CapTool, Action: "call",
					Resource: "x", RequestedBy: "agent", Verdict: v, Blocked: v == warden.Deny, Reason: "test", Rule: "test.rule"}
				if err := s.Record(ctx, e, nil); err != nil {
					t.Fatal(err)
				}
			}
			err := recordRan(ctx, s, hook.RanCall{Host: "codex", Session: "s", Tool: "x", TraceID: trace, Asked: c.asked, Requests: c.requests})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, typ := range []string{warden.EventHostApproved, warden.EventHostRanDenied, warden.EventHostRanUndecided} {
				evs, err := s.Events(ctx, warden.EventFilter{Type: typ})
				if err != nil {
					t.Fatal(err)
				}
				for _, ev := range evs {
					if ev.TraceID == trace {
						got = append(got, ev.Type)
					}
				}
			}
			switch {
			case c.want == "" && len(got) != 0:
				t.Errorf("recordRan after %v = %v; want no event", c.rows, got)
			case c.want != "" && (len(got) != 1 || got[0] != c.want):
				t.Errorf("recordRan after %v = %v; want one %s", c.rows, got, c.want)
			}
		})
	}
}
