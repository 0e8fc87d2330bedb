package app

import (
	"context"
	"testing"
	"time"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/gate"
)

// BenchmarkTradeCheck decides a $250 WETH buy through the gate: every
// stage, the paper exchange's book read from SQLite (twice: sizing and
// exposure) and its simulation, and the durable audit append. It is a dry
// run, so the ledger does not fill up.
func BenchmarkTradeCheck(b *testing.B) {
	clk := &clock{t: time.Now()}
	a, _ := tradingHome(b, clk)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		req := tradeReq("buy", "WETH", map[string]string{"chain": "base", "amount_usd": "250"})
		d, err := a.Gate.CheckWith(ctx, req, gateDryRun)
		if err != nil || d.Verdict != warden.Allow {
			b.Fatalf("%v %s: %v", d.Verdict, d.Reason, err)
		}
	}
}

var gateDryRun = gate.CheckOptions{DryRun: true}
