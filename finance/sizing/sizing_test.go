package sizing

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"testing"

	"github.com/agentwarden/warden"
)

const d = warden.MicrosPerDollar

func order(amount string, extra map[string]string) *warden.Request {
	r := &warden.Request{Capability: warden.CapTrade, Action: "buy", Resource: "ETH",
		Params: map[string]json.RawMessage{"chain": json.RawMessage(`"base"`)}}
	if amount != "" {
		r.Params["amount_usd"] = json.RawMessage(amount)
	}
	for k, v := range extra {
		r.Params[k] = json.RawMessage(v)
	}
	return r
}

func TestSize(t *testing.T) {
	nan := math.NaN()
	cases := []struct {
		name     string
		pol      Policy
		equity   warden.USD
		p, b     float64
		want     warden.USD
		clipped  bool
		strategy string
		wantErr  bool
	}{
		{name: "fixed usd", pol: Policy{Strategy: FixedUSD, FixedAmount: 200 * d, PerTxMax: 500 * d}, p: nan, b: nan, want: 200 * d, strategy: FixedUSD},
		{name: "fixed usd clipped", pol: Policy{Strategy: FixedUSD, FixedAmount: 900 * d, PerTxMax: 500 * d}, p: nan, b: nan, want: 500 * d, clipped: true, strategy: FixedUSD},
		{name: "fixed fraction 2%", pol: Policy{Strategy: FixedFraction, Fraction: 0.02, PerTxMax: 500 * d}, equity: 20000 * d, p: nan, b: nan, want: 400 * d, strategy: FixedFraction},
		{name: "fixed fraction 5% clipped", pol: Policy{Strategy: FixedFraction, Fraction: 0.05, PerTxMax: 500 * d}, equity: 20000 * d, p: nan, b: nan, want: 500 * d, clipped: true, strategy: FixedFraction},
		{name: "half kelly", pol: Policy{Strategy: HalfKelly, KellyMultiplier: 0.5, PerTxMax: 500 * d}, equity: 2000 * d, p: 0.55, b: 1.5, want: 250 * d, strategy: HalfKelly},
		{name: "half kelly clipped", pol: Policy{Strategy: HalfKelly, KellyMultiplier: 0.5, PerTxMax: 500 * d}, equity: 20000 * d, p: 0.55, b: 1.5, want: 500 * d, clipped: true, strategy: HalfKelly},
		{name: "half kelly no edge", pol: Policy{Strategy: HalfKelly, KellyMultiplier: 0.5, PerTxMax: 500 * d}, equity: 20000 * d, p: 0.4, b: 1, want: 0, strategy: HalfKelly},
		{name: "half kelly falls back without p", pol: Policy{Strategy: HalfKelly, KellyMultiplier: 0.5, Fraction: 0.01, PerTxMax: 500 * d}, equity: 20000 * d, p: nan, b: 1.5, want: 200 * d, strategy: FixedFraction},
		{name: "half kelly probability above 1", pol: Policy{Strategy: HalfKelly, KellyMultiplier: 0.5, PerTxMax: 500 * d}, equity: 20000 * d, p: 1.2, b: 1.5, wantErr: true},
		{name: "half kelly zero payoff", pol: Policy{Strategy: HalfKelly, KellyMultiplier: 0.5, PerTxMax: 500 * d}, equity: 20000 * d, p: 0.5, b: 0, wantErr: true},
		{name: "unknown strategy", pol: Policy{Strategy: "martingale", PerTxMax: 500 * d}, p: nan, b: nan, wantErr: true},
		{name: "zero policy sizes nothing", p: nan, b: nan, wantErr: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, err := c.pol.Size(c.equity, c.p, c.b)
			if (err != nil) != c.wantErr {
				t.Fatalf("Size = %+v, %v; want error %v", s, err, c.wantErr)
			}
			if err != nil {
				return
			}
			if s.Amount != c.want || s.Clipped != c.clipped || s.Strategy != c.strategy {
				t.Errorf("Size = $%s clipped %v by %s; want $%s clipped %v by %s", s.Amount, s.Clipped, s.Strategy, c.want, c.clipped, c.strategy)
			}
		})
	}
}

func TestStage(t *testing.T) {
	equity := func(context.Context) (warden.USD, error) { return 20000 * d, nil }
	fraction := Stage{Policy: Policy{Strategy: FixedFraction, Fraction: 0.05, PerTxMax: 500 * d}, Equity: equity}
	cases := []struct {
		name  string
		stage Stage
		req   *warden.Request
		want  warden.Verdict
		rule  string
	}{
		{"within, cap binding", fraction, order(`"500"`, nil), warden.Allow, "sizing.clipped"},
		{"above the clipped size", fraction, order(`"1000"`, nil), warden.Deny, "sizing.clipped"},
		{"within, cap not binding", Stage{Policy: Policy{Strategy: FixedUSD, FixedAmount: 200 * d, PerTxMax: 500 * d}}, order(`"150"`, nil), warden.Allow, "sizing.within"},
		{"above a fixed size", Stage{Policy: Policy{Strategy: FixedUSD, FixedAmount: 200 * d, PerTxMax: 500 * d}}, order(`"201"`, nil), warden.Deny, "sizing.within"},
		{"no amount says the size", fraction, order("", nil), warden.Deny, "sizing.no_amount"},
		{"no edge", Stage{Policy: Policy{Strategy: HalfKelly, KellyMultiplier: 0.5, PerTxMax: 500 * d}, Equity: equity},
			order(`"100"`, map[string]string{"win_probability": "0.4", "payoff_ratio": "1"}), warden.Deny, "sizing.no_edge"},
		{"invalid probability", Stage{Policy: Policy{Strategy: HalfKelly, KellyMultiplier: 0.5, PerTxMax: 500 * d}, Equity: equity},
			order(`"100"`, map[string]string{"win_probability": "1.2", "payoff_ratio": "1.5"}), warden.Deny, "sizing.invalid"},
		{"malformed probability", fraction, order(`"100"`, map[string]string{"win_probability": `"NaN"`}), warden.Deny, "trade.invalid"},
		{"sell is not an entry", fraction, func() *warden.Request { r := order(`"5000"`, nil); r.Action = "sell"; return r }(), warden.Allow, "sizing.not_entry"},
		{"not a trade", fraction, &warden.Request{Capability: warden.CapShell, Action: "exec", Resource: "ls"}, warden.Allow, "sizing.not_trade"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := c.stage.Check(context.Background(), c.req)
			if err != nil || got.Verdict != c.want || got.Rule != c.rule {
				t.Fatalf("Check = %v %s (%s), %v; want %v %s", got.Verdict, got.Rule, got.Reason, err, c.want, c.rule)
			}
		})
	}
}

// A portfolio that cannot be read is an error (the pipeline denies), never
// a size of zero or an unbounded one.
func TestStageWithoutPortfolioFails(t *testing.T) {
	st := Stage{Policy: Policy{Strategy: FixedFraction, Fraction: 0.02, PerTxMax: 500 * d},
		Equity: func(context.Context) (warden.USD, error) { return 0, errors.New("backend down") }}
	if _, err := st.Check(context.Background(), order(`"100"`, nil)); err == nil {
		t.Fatal("Check with an unreadable portfolio returned no error")
	}
}
