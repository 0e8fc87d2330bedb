package safety

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/agentwarden/warden"
)

func req(tier warden.Tier, autonomous bool, params map[string]string) *warden.Request {
	r := &warden.Request{Capability: "tool", Action: "call", Resource: "x", Tier: tier, Autonomous: autonomous}
	if params != nil {
		r.Params = map[string]json.RawMessage{}
		for k, v := range params {
			r.Params[k] = json.RawMessage(v)
		}
	}
	return r
}

func usd(t *testing.T, s string) warden.USD {
	t.Helper()
	u, err := warden.ParseUSD(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// ledgerFunc is a func-field Ledger.
type ledgerFunc func(context.Context, time.Time) (warden.USD, error)

func (f ledgerFunc) SpentSince(ctx context.Context, t time.Time) (warden.USD, error) {
	return f(ctx, t)
}

var errLedger = errors.New("disk I/O error")

func check(t *testing.T, s warden.Stage, r *warden.Request) (warden.Decision, error) {
	t.Helper()
	return s.Check(context.Background(), r)
}
