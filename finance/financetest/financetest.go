// Package financetest helps tests of trading backends: a finance.Clearance
// can only come from a finance.Trader whose gate allowed an order, and
// Clearance obtains one that way.
package financetest

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/finance"
)

// capture is a backend that only keeps the clearance it is handed.
type capture struct {
	finance.Backend
	c finance.Clearance
}

func (b *capture) Name() string { return "capture" }

func (b *capture) ClosePerp(_ context.Context, _ string, c finance.Clearance) (finance.Fill, error) {
	b.c = c
	return finance.Fill{}, nil
}

// Clearance returns a valid clearance for traceID, issued by a Trader
// whose gate allowed a perp close.
func Clearance(t testing.TB, traceID string) finance.Clearance {
	t.Helper()
	b := &capture{}
	tr := &finance.Trader{Backend: b, Decide: func(context.Context, *warden.Request, finance.DecideOptions) (warden.Decision, error) {
		return warden.Decision{Verdict: warden.Allow, TraceID: traceID}, nil
	}}
	req := &warden.Request{Capability: warden.CapTrade, Action: finance.PerpClose, Resource: "ETH",
		Params: map[string]json.RawMessage{finance.ParamChain: json.RawMessage(`"base"`), finance.ParamPosition: json.RawMessage(`"p"`)}}
	if _, err := tr.Execute(context.Background(), req, finance.DecideOptions{}); err != nil {
		t.Fatalf("Trader.Execute: %v", err)
	}
	if err := b.c.Check(); err != nil || b.c.TraceID() != traceID {
		t.Fatalf("the Trader issued clearance %q (%v); want a valid one for %q", b.c.TraceID(), err, traceID)
	}
	return b.c
}
