package exposure

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/finance"
)

const d = warden.MicrosPerDollar

var defaults = Limits{MaxPerToken: 5000 * d, MaxPerChain: 15000 * d, MaxClassFraction: 0.40, MaxTotal: 50000 * d}

func trade(action, token string, amount string, params map[string]string) *warden.Request {
	r := &warden.Request{Capability: warden.CapTrade, Action: action, Resource: token,
		Params: map[string]json.RawMessage{"chain": json.RawMessage(`"base"`), "amount_usd": json.RawMessage(amount)}}
	for k, v := range params {
		r.Params[k] = json.RawMessage(v)
	}
	return r
}

func snapshot(value warden.USD, assets map[string]warden.USD, chains map[string]warden.USD, classes map[finance.AssetClass]warden.USD, total warden.USD) func(context.Context) (Snapshot, error) {
	return func(context.Context) (Snapshot, error) {
		return Snapshot{Value: value, Exposure: finance.Exposure{ByAsset: assets, ByChain: chains, ByClass: classes, Total: total}}, nil
	}
}

func TestLimits(t *testing.T) {
	cases := []struct {
		name  string
		req   *warden.Request
		state func(context.Context) (Snapshot, error)
		want  warden.Verdict
		rule  string
	}{
		{"token at the ceiling", trade("buy", "WETH", `"500"`, nil),
			snapshot(20000*d, map[string]warden.USD{"ETH": 4500 * d}, map[string]warden.USD{"base": 4500 * d}, map[finance.AssetClass]warden.USD{"major": 4500 * d}, 4500*d), warden.Allow, "exposure.within"},
		{"token over the ceiling", trade("buy", "WETH", `"300"`, nil),
			snapshot(20000*d, map[string]warden.USD{"ETH": 4800 * d}, nil, nil, 4800*d), warden.Deny, "exposure.per_token"},
		{"chain over the ceiling", trade("buy", "cbBTC", `"200"`, nil),
			snapshot(40000*d, map[string]warden.USD{"BTC": 1000 * d}, map[string]warden.USD{"base": 14900 * d}, map[finance.AssetClass]warden.USD{"major": 6000 * d}, 30000*d), warden.Deny, "exposure.per_chain"},
		{"class over its share", trade("buy", "BNKR", `"300"`, nil),
			snapshot(20000*d, map[string]warden.USD{"BNKR": 1000 * d}, map[string]warden.USD{"base": 9000 * d}, map[finance.AssetClass]warden.USD{finance.ClassMeme: 7800 * d}, 12000*d), warden.Deny, "exposure.asset_class"},
		{"total over the ceiling", trade("buy", "WETH", `"300"`, nil),
			snapshot(60000*d, map[string]warden.USD{"ETH": 3000 * d}, map[string]warden.USD{"base": 12000 * d}, map[finance.AssetClass]warden.USD{"major": 20000 * d}, 49800*d), warden.Deny, "exposure.total"},
		{"perp counts its notional", trade("perp_open", "ETH-PERP", `"300"`, map[string]string{"leverage": "10"}),
			snapshot(20000*d, map[string]warden.USD{"ETH": 2500 * d}, nil, nil, 2500*d), warden.Deny, "exposure.per_token"},
		{"selling above a ceiling reduces it", trade("sell", "WETH", `"400"`, nil),
			snapshot(20000*d, map[string]warden.USD{"ETH": 5600 * d}, nil, nil, 5600*d), warden.Allow, "exposure.reducing"},
		{"swapping ETH into BTC moves exposure", trade("swap", "cbBTC", `"400"`, map[string]string{"token_in": `"WETH"`}),
			snapshot(20000*d, map[string]warden.USD{"ETH": 4000 * d, "BTC": 100 * d}, map[string]warden.USD{"base": 14900 * d}, map[finance.AssetClass]warden.USD{"major": 7900 * d}, 49900*d), warden.Allow, "exposure.within"},
		{"buying a stablecoin adds nothing", trade("swap", "USDC", `"400"`, map[string]string{"token_in": `"WETH"`}), nil, warden.Allow, "exposure.reducing"},
		{"unknown chain", trade("buy", "WETH", `"100"`, map[string]string{"chain": `"basee"`}), nil, warden.Deny, "exposure.unresolved"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st := Stage{Limits: defaults, State: c.state}
			got, err := st.Check(context.Background(), c.req)
			if err != nil || got.Verdict != c.want || got.Rule != c.rule {
				t.Fatalf("Check = %v %s (%s), %v; want %v %s", got.Verdict, got.Rule, got.Reason, err, c.want, c.rule)
			}
		})
	}
}

// Exposure is keyed by asset id across chains: ETH held on base and WETH
// on arbitrum are one ETH position.
func TestPortfolioExposureKeysByAsset(t *testing.T) {
	var r finance.Resolver
	base, _ := r.Chain("base")
	arb, _ := r.Chain("arbitrum")
	weth, _ := r.Token(arb, finance.TokenRef{Symbol: "WETH"})
	eth, _ := r.Token(base, finance.TokenRef{Symbol: "ETH"})
	usdc, _ := r.Token(base, finance.TokenRef{Symbol: "USDC"})
	p := finance.Portfolio{Holdings: []finance.Holding{{Token: eth, ValueUSD: 3000 * d}, {Token: weth, ValueUSD: 1900 * d}, {Token: usdc, ValueUSD: 10000 * d}}}
	e := p.Exposure()
	if e.ByAsset["ETH"] != 4900*d || e.Total != 4900*d || e.ByChain["base"] != 3000*d || e.ByClass[finance.ClassMajor] != 4900*d {
		t.Fatalf("Exposure = %+v; want ETH $4900 across chains, stablecoins excluded", e)
	}
	st := Stage{Limits: defaults, State: func(context.Context) (Snapshot, error) { return FromPortfolio(&p), nil }}
	req := trade("buy", "WETH", `"300"`, map[string]string{"chain": `"optimism"`})
	if got, _ := st.Check(context.Background(), req); got.Verdict != warden.Deny || got.Rule != "exposure.per_token" {
		t.Fatalf("buying $300 more ETH on optimism = %v %s; want deny exposure.per_token", got.Verdict, got.Rule)
	}
}
