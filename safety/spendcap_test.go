package safety

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/agentwarden/warden"
)

func TestSpendCap(t *testing.T) {
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	spent := func(s string) SpendReader {
		return ledgerFunc(func(_ context.Context, since time.Time) (warden.USD, error) {
			if want := now.Add(-24 * time.Hour); !since.Equal(want) {
				t.Errorf("ledger asked since %v, want %v (rolling 24 h)", since, want)
			}
			return usd(t, s), nil
		})
	}
	cases := []struct {
		name   string
		cap    string
		ledger SpendReader
		amount string // JSON; empty: not fund-moving
		want   warden.Verdict
		reason string
	}{
		{name: "not fund-moving", cap: "2000", ledger: spent("1999"), want: warden.Allow, reason: "not fund-moving"},
		{name: "fits", cap: "2000", ledger: spent("1000"), amount: "500", want: warden.Allow, reason: "fits"},
		{name: "exactly at the cap", cap: "2000", ledger: spent("1500"), amount: "500", want: warden.Allow},
		{name: "one cent over", cap: "2000", ledger: spent("1500"), amount: "500.01", want: warden.Deny, reason: "would exceed"},
		{name: "amount as string", cap: "2000", ledger: spent("0"), amount: `"12.5"`, want: warden.Allow},
		{name: "more than the whole cap", cap: "2000", ledger: nil, amount: "2000.000001", want: warden.Deny, reason: "whole daily spend cap"},
		{name: "zero cap", cap: "0", ledger: spent("0"), amount: "0.01", want: warden.Deny},
		{name: "negative amount", cap: "2000", ledger: spent("0"), amount: "-5", want: warden.Deny, reason: "not a valid amount"},
		{name: "garbage amount", cap: "2000", ledger: spent("0"), amount: `"lots"`, want: warden.Deny, reason: "not a valid amount"},
		{name: "exponent amount", cap: "2000", ledger: spent("0"), amount: `1e3`, want: warden.Deny, reason: "not a valid amount"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var params map[string]string
			if c.amount != "" {
				params = map[string]string{"amount_usd": c.amount}
			}
			s := SpendCap{Cap: usd(t, c.cap), Ledger: c.ledger, Now: func() time.Time { return now }}
			d, err := check(t, s, req(3, false, params))
			if err != nil || d.Verdict != c.want {
				t.Fatalf("SpendCap.Check(%s) = %v, %v (%s); want %v", c.amount, d.Verdict, err, d.Reason, c.want)
			}
			if !strings.Contains(d.Reason, c.reason) {
				t.Errorf("reason %q does not contain %q", d.Reason, c.reason)
			}
		})
	}
}

func TestSpendCapLedgerFailureIsAnError(t *testing.T) {
	broken := ledgerFunc(func(context.Context, time.Time) (warden.USD, error) { return 0, errLedger })
	for name, s := range map[string]SpendCap{
		"ledger error": {Cap: usd(t, "2000"), Ledger: broken},
		"no ledger":    {Cap: usd(t, "2000")},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := check(t, s, req(3, false, map[string]string{"amount_usd": "5"})); err == nil {
				t.Fatal("want an error (which the pipeline turns into deny), got none")
			}
		})
	}
}

func TestSpendCapDebit(t *testing.T) {
	at := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	s := SpendCap{Cap: usd(t, "2000")}
	if d := s.Debit(req(3, false, nil), at); d != nil {
		t.Fatalf("Debit of a request that moves no funds = %+v, want nil", d)
	}
	d := s.Debit(req(3, false, map[string]string{"amount_usd": "12.34"}), at)
	if d == nil || d.Amount != usd(t, "12.34") || d.Cap != usd(t, "2000") || !d.Since.Equal(at.Add(-24*time.Hour)) {
		t.Fatalf("Debit = %+v, want 12.34 against 2000 since %v", d, at.Add(-24*time.Hour))
	}
}
