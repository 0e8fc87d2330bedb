package app_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/app"
	"github.com/agentwarden/warden/gate"
)

// BenchmarkFundMovingLedger is a fund-moving decision (its daily-cap stage
// reads the 24-hour spend) with 10 and with 10,000 debits in the window, in
// a one-shot process (open the home, decide, close) and through a running
// daemon's /v1/check. The cap check reads running totals, so the two ledger
// sizes should cost the same (issue 26: at most 1.2x).
//
//	go test -run XXX -bench FundMovingLedger -count 3 ./app/
func BenchmarkFundMovingLedger(b *testing.B) {
	for _, debits := range []int{10, 10_000} {
		dm := startDaemon(b)
		fillHomeLedger(b, dm.home, debits)
		req := func() *warden.Request {
			return &warden.Request{Capability: warden.CapTool, Action: "call", Resource: "get_price",
				Params: map[string]json.RawMessage{"amount_usd": json.RawMessage("0.000001")}}
		}
		check := func(b *testing.B, d warden.Decision, err error) {
			if err != nil || d.Verdict != warden.Allow {
				b.Fatalf("fund-moving check = %v %s (%s), %v", d.Verdict, d.Reason, d.Rule, err)
			}
		}
		b.Run(fmt.Sprintf("debits=%d/one-shot", debits), func(b *testing.B) {
			for b.Loop() {
				a, err := app.Open(ctx, dm.home, app.Options{})
				if err != nil {
					b.Fatal(err)
				}
				d, err := a.Gate.CheckWith(ctx, req(), gate.CheckOptions{DryRun: true})
				check(b, d, err)
				if err := a.Close(); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("debits=%d/daemon", debits), func(b *testing.B) {
			for b.Loop() {
				d, err := dm.agent.Check(ctx, req())
				check(b, d, err)
			}
		})
	}
}

// fillHomeLedger debits the home's ledger n times, $0.01 each, spread over
// the last 23 hours, and releases every tenth debit.
func fillHomeLedger(tb testing.TB, home app.Home, n int) {
	tb.Helper()
	s, err := app.OpenStore(ctx, home)
	if err != nil {
		tb.Fatal(err)
	}
	defer s.Close()
	now := time.Now()
	step := 23 * time.Hour / time.Duration(n)
	for i := range n {
		at := now.Add(-23*time.Hour + time.Duration(i)*step)
		e := &warden.AuditEntry{TraceID: fmt.Sprintf("fill-%d", i), CreatedAt: at, Capability: warden.CapTrade,
			Action: "buy", Resource: "WETH", Verdict: warden.Allow, Reason: "benchmark ledger", Rule: "bench"}
		if err := s.Record(ctx, e, &warden.Debit{Amount: warden.MicrosPerDollar / 100, Cap: 1 << 60, Since: at.Add(-warden.SpendWindow)}); err != nil {
			tb.Fatal(err)
		}
		if i%10 == 0 {
			if err := s.Release(ctx, e.TraceID, "benchmark", at); err != nil {
				tb.Fatal(err)
			}
		}
	}
}
