package gate_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/gate"
)

func keyOf(req *warden.Request) string {
	var k string
	_ = json.Unmarshal(req.Params["key"], &k)
	return k
}

// slotPolicy asks for every request whose resource is "ask", allows the rest.
type slotPolicy struct{}

func (slotPolicy) Decide(_ context.Context, r *warden.Request) warden.Decision {
	if r.Resource == "ask" {
		return warden.Decision{Verdict: warden.Ask, Rule: "signing.threshold", Reason: "above the threshold", Tier: 3}
	}
	return warden.Decision{Verdict: warden.Allow, Rule: "signing.ok", Reason: "within policy", Tier: 2}
}

func slotDebit(req *warden.Request, at time.Time) *warden.Debit {
	return &warden.Debit{Slot: &warden.RateSlot{Kind: "signing", Key: keyOf(req),
		Limits: []warden.RateLimit{{Window: time.Hour, Max: 3}}}}
}

func signReq(resource, key string) *warden.Request {
	r := &warden.Request{Capability: warden.CapSign, Action: "eth_signTransaction", Resource: resource}
	if key != "" {
		r.Params = map[string]json.RawMessage{"key": json.RawMessage(fmt.Sprintf("%q", key))}
	}
	return r
}

// TestAskHoldsRateSlot: an ask that opens an approval holds a slot, so the
// limit counts it before anyone answers; a denied approval gives it back.
func TestAskHoldsRateSlot(t *testing.T) {
	h := newHarness(t)
	h.g.Decider, h.g.Debit = slotPolicy{}, slotDebit
	for i := range 2 {
		if d, err := h.g.Check(ctx, signReq("allow", "")); err != nil || d.Verdict != warden.Allow {
			t.Fatalf("allow %d: %v %v", i, d.Verdict, err)
		}
	}
	pending, err := h.g.CheckWith(ctx, signReq("ask", ""), gate.CheckOptions{Approval: "api"})
	if err != nil || pending.Verdict != warden.Ask || pending.ApprovalID == "" {
		t.Fatalf("ask: %+v %v", pending, err)
	}
	d, err := h.g.Check(ctx, signReq("allow", ""))
	if err != nil || d.Verdict != warden.Deny || d.Rule != "signing.rate" {
		t.Fatalf("4th request while the ask holds the 3rd slot: %v %q %v; want a signing.rate deny", d.Verdict, d.Rule, err)
	}
	if err := h.g.Release(ctx, pending.TraceID, "denied by the operator"); err != nil {
		t.Fatal(err)
	}
	if d, err := h.g.Check(ctx, signReq("allow", "")); err != nil || d.Verdict != warden.Allow {
		t.Fatalf("after the held slot was released: %v %v", d.Verdict, err)
	}
	// With the limit full, an ask is refused at once: no approval opens.
	d, err = h.g.CheckWith(ctx, signReq("ask", ""), gate.CheckOptions{Approval: "api"})
	if err != nil || d.Verdict != warden.Deny || d.ApprovalID != "" {
		t.Fatalf("ask over the limit: %+v %v; want a deny with no approval", d, err)
	}
	if as, _ := h.q.List(ctx, warden.ApprovalFilter{Pending: true}); len(as) != 1 {
		t.Errorf("%d pending approvals, want only the first", len(as))
	}
}

// TestReplayedKeyDenied: a key another trace took is a deny recorded as
// such, whatever the stages said.
func TestReplayedKeyDenied(t *testing.T) {
	h := newHarness(t)
	h.g.Decider, h.g.Debit = slotPolicy{}, slotDebit
	if d, err := h.g.Check(ctx, signReq("allow", "req-1")); err != nil || d.Verdict != warden.Allow {
		t.Fatalf("first: %v %v", d.Verdict, err)
	}
	d, err := h.g.Check(ctx, signReq("allow", "req-1"))
	if err != nil || d.Verdict != warden.Deny || d.Rule != "signing.replay" {
		t.Fatalf("replay: %v %q %v; want a signing.replay deny", d.Verdict, d.Rule, err)
	}
	es, err := h.store.Entries(ctx, warden.AuditFilter{TraceID: d.TraceID})
	if err != nil || len(es) != 1 || es[0].Verdict != warden.Deny {
		t.Fatalf("audit of the replay: %+v %v; want one deny", es, err)
	}
}
