package gate_test

import (
	"strings"
	"testing"
	"time"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/gate"
)

// holdsDebit is slotDebit with 10 slots an hour and at most 3 pending asks
// per requester.
func holdsDebit(req *warden.Request, at time.Time) *warden.Debit {
	d := slotDebit(req, at)
	d.Slot.Limits = []warden.RateLimit{{Window: time.Hour, Max: 10}}
	d.Slot.MaxHolds = 3
	return d
}

func signBy(resource, session string) *warden.Request {
	r := signReq(resource, "")
	r.RequestedBy, r.Session = "agent", session
	return r
}

// TestUnansweredAsksCannotTakeTheLimit: an agent opening asks nobody answers
// holds at most 3 slots, and is told why its next ask is denied; pending asks
// of all requesters hold at most half of the limit; another requester still
// signs with the slots left.
func TestUnansweredAsksCannotTakeTheLimit(t *testing.T) {
	h := newHarness(t)
	h.g.Decider, h.g.Debit = slotPolicy{}, holdsDebit
	open := gate.CheckOptions{Approval: "api"}
	for i := range 3 {
		if d := h.check(t, signBy("ask", "greedy"), open); d.Verdict != warden.Ask || d.ApprovalID == "" {
			t.Fatalf("ask %d: %v (%s), want an ask holding a slot", i, d.Verdict, d.Reason)
		}
	}
	d := h.check(t, signBy("ask", "greedy"), open)
	if d.Verdict != warden.Deny || d.Rule != "signing.pending" || d.ApprovalID != "" ||
		!strings.Contains(d.Reason, "3 signing asks of yours") || !strings.Contains(d.Reason, "answer them or let them expire") {
		t.Fatalf("4th unanswered ask = %v %q (%s), want a signing.pending deny naming the 3 waiting asks", d.Verdict, d.Rule, d.Reason)
	}
	// Other requesters' asks hold slots until pending asks hold half the limit.
	for i := range 2 {
		if d := h.check(t, signBy("ask", "other"), open); d.Verdict != warden.Ask {
			t.Fatalf("other requester's ask %d: %v (%s), want an ask", i, d.Verdict, d.Reason)
		}
	}
	d = h.check(t, signBy("ask", "third"), open)
	if d.Verdict != warden.Deny || d.Rule != "signing.pending" || !strings.Contains(d.Reason, "at most 5 of the hour limit") {
		t.Fatalf("ask with half the limit pending = %v %q (%s), want a signing.pending deny", d.Verdict, d.Rule, d.Reason)
	}
	// The other half stays for requests allowed outright.
	for i := range 5 {
		if d := h.check(t, signBy("allow", "third"), gate.CheckOptions{}); d.Verdict != warden.Allow {
			t.Fatalf("signature %d of another requester: %v %q (%s), want allowed", i, d.Verdict, d.Rule, d.Reason)
		}
	}
	if d := h.check(t, signBy("allow", "third"), gate.CheckOptions{}); d.Verdict != warden.Deny || d.Rule != "signing.rate" {
		t.Fatalf("11th slot = %v %q, want the hourly limit", d.Verdict, d.Rule)
	}
	if as, _ := h.q.List(ctx, warden.ApprovalFilter{Pending: true}); len(as) != 5 {
		t.Errorf("%d pending approvals, want 5 (a refused hold opens none)", len(as))
	}
}
