package risk

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/finance"
	"github.com/agentwarden/warden/finance/exposure"
	"github.com/agentwarden/warden/finance/paper"
	"github.com/agentwarden/warden/finance/recipients"
	"github.com/agentwarden/warden/finance/sizing"
	"github.com/agentwarden/warden/finance/slippage"
	"github.com/agentwarden/warden/finance/tokensafety"
	"github.com/agentwarden/warden/pipeline"
	"github.com/agentwarden/warden/safety"
)

// BenchmarkFullRiskManager decides a $250 WETH buy through the global
// stages and the FullRiskManager, on the paper exchange in memory: the
// decision alone, without the audit log's durable append.
func BenchmarkFullRiskManager(b *testing.B) {
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	const wallet = "0x2c7536E3605D9C16a7a3D7b1898e529396a65c23"
	ex := &paper.Exchange{Store: &paper.MemStore{}, Wallet: wallet, Now: func() time.Time { return now },
		Prices: &paper.PathPrices{Seed: 1, Start: paper.DefaultStartPrices(), Step: time.Minute, Volatility: 0.001, Epoch: now}}
	var res finance.Resolver
	m := &FullRiskManager{
		TokenSafety: tokensafety.Stage{Resolver: res},
		Recipients:  recipients.Stage{Wallet: wallet, Resolver: res},
		Sizing: sizing.Stage{Policy: sizing.Policy{Strategy: sizing.FixedFraction, Fraction: 0.05, PerTxMax: dollars(500)},
			Equity: func(ctx context.Context) (warden.USD, error) { p, err := ex.Portfolio(ctx); return p.ValueUSD(), err }},
		Exposure: exposure.Stage{Limits: exposure.Limits{MaxPerToken: dollars(5000), MaxPerChain: dollars(15000), MaxClassFraction: 0.4, MaxTotal: dollars(50000)},
			State: func(ctx context.Context) (exposure.Snapshot, error) {
				p, err := ex.Portfolio(ctx)
				return exposure.FromPortfolio(&p), err
			}, Resolver: res},
		Slippage: slippage.Stage{Policy: finance.DefaultSlippage(), Simulator: ex, Resolver: res},
	}
	p := pipeline.New(pipeline.Config{
		Global: safety.Stages(safety.PolicyIntegrity{}, safety.KillSwitch{}, safety.SpendCap{Cap: dollars(2000), Ledger: spentLedger(0)},
			safety.TxMax{Max: dollars(500)}, safety.TierGate{}),
		Capabilities: map[string][]warden.Stage{warden.CapTrade: m.Stages()},
	})
	params := map[string]json.RawMessage{"chain": json.RawMessage(`"base"`), "amount_usd": json.RawMessage(`"250"`)}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		req := &warden.Request{Capability: warden.CapTrade, Action: finance.Buy, Resource: "WETH", Params: params}
		if d := p.Decide(ctx, req); d.Verdict != warden.Allow {
			b.Fatalf("%v: %s", d.Verdict, d.Reason)
		}
	}
}
