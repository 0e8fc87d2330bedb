package slippage

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/finance"
)

const d = warden.MicrosPerDollar

type simFunc func(context.Context, finance.SwapQuote) (finance.Simulation, error)

func (f simFunc) Simulate(ctx context.Context, q finance.SwapQuote) (finance.Simulation, error) {
	return f(ctx, q)
}

// quote simulates an impact and an output ratio for any swap.
func quote(impact, ratio float64) simFunc {
	return func(_ context.Context, q finance.SwapQuote) (finance.Simulation, error) {
		return finance.Simulation{ExpectedOut: 1, PriceImpact: impact, InputValueUSD: q.AmountUSD,
			OutputValueUSD: finance.USDOf(q.AmountUSD.Dollars() * ratio)}, nil
	}
}

func trade(action, amount string, params map[string]string) *warden.Request {
	r := &warden.Request{Capability: warden.CapTrade, Action: action, Resource: "WETH",
		Params: map[string]json.RawMessage{"chain": json.RawMessage(`"base"`), "amount_usd": json.RawMessage(amount)}}
	for k, v := range params {
		r.Params[k] = json.RawMessage(v)
	}
	return r
}

func TestSlippage(t *testing.T) {
	ok := quote(0.001, 0.99)
	cases := []struct {
		name string
		req  *warden.Request
		sim  Simulator
		want warden.Verdict
		rule string
	}{
		{"small within 2%", trade("buy", `"400"`, map[string]string{"max_slippage": "0.015"}), ok, warden.Allow, "slippage.within"},
		{"small over 2%", trade("buy", `"400"`, map[string]string{"max_slippage": "0.025"}), ok, warden.Deny, "slippage.tolerance"},
		{"$1,000 is the middle tier", trade("sell", `"1000"`, map[string]string{"max_slippage": "0.009"}), ok, warden.Allow, "slippage.within"},
		{"middle over 1%", trade("sell", `"3000"`, map[string]string{"max_slippage": "0.015"}), ok, warden.Deny, "slippage.tolerance"},
		{"$10,000 is still the middle tier", trade("sell", `"10000"`, map[string]string{"max_slippage": "0.008"}), ok, warden.Allow, "slippage.within"},
		{"large over 0.5%", trade("sell", `"12000"`, map[string]string{"max_slippage": "0.008"}), ok, warden.Deny, "slippage.tolerance"},
		{"no tolerance takes the tier", trade("buy", `"400"`, nil), ok, warden.Allow, "slippage.within"},
		{"zero minimum output", trade("buy", `"200"`, map[string]string{"max_slippage": "1.0"}), ok, warden.Deny, "slippage.tolerance"},
		{"negative tolerance", trade("buy", `"200"`, map[string]string{"max_slippage": "-0.1"}), ok, warden.Deny, "slippage.invalid"},
		{"price impact over the tier", trade("buy", `"400"`, nil), quote(0.03, 0.99), warden.Deny, "slippage.price_impact"},
		{"output ratio low", trade("buy", `"400"`, nil), quote(0.001, 0.93), warden.Deny, "slippage.min_output"},
		{"output ratio at the boundary", trade("buy", `"400"`, nil), quote(0.001, 0.95), warden.Allow, "slippage.within"},
		{"simulation failed", trade("buy", `"200"`, nil), simFunc(func(context.Context, finance.SwapQuote) (finance.Simulation, error) {
			return finance.Simulation{}, errors.New("eth_call timeout")
		}), warden.Deny, "slippage.no_simulation"},
		{"no simulator", trade("buy", `"200"`, nil), nil, warden.Deny, "slippage.no_simulation"},
		{"leverage at the cap", trade("perp_open", `"300"`, map[string]string{"leverage": "10"}), nil, warden.Allow, "slippage.leverage"},
		{"leverage over the cap", trade("perp_open", `"300"`, map[string]string{"leverage": "12"}), nil, warden.Deny, "slippage.leverage_exceeds_cap"},
		{"leverage zero", trade("perp_open", `"300"`, map[string]string{"leverage": "0"}), nil, warden.Deny, "slippage.leverage_invalid"},
		{"leverage negative", trade("perp_open", `"300"`, map[string]string{"leverage": "-2"}), nil, warden.Deny, "slippage.leverage_invalid"},
		{"transfer is not a swap", func() *warden.Request {
			r := trade("transfer", `"50"`, map[string]string{"recipient": `"0x7a3F9e2b5C1d4E6f8A0b2C4d6E8f0A1b3C5d9E21"`})
			return r
		}(), nil, warden.Allow, "slippage.not_swap"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st := Stage{Policy: finance.DefaultSlippage(), Simulator: c.sim}
			got, err := st.Check(context.Background(), c.req)
			if err != nil || got.Verdict != c.want || got.Rule != c.rule {
				t.Fatalf("Check = %v %s (%s), %v; want %v %s", got.Verdict, got.Rule, got.Reason, err, c.want, c.rule)
			}
		})
	}
}

// The simulation is asked for the order's tolerance, resolved tokens and
// amount.
func TestSimulationGetsTheResolvedOrder(t *testing.T) {
	var got finance.SwapQuote
	st := Stage{Policy: finance.DefaultSlippage(), Simulator: simFunc(func(_ context.Context, q finance.SwapQuote) (finance.Simulation, error) {
		got = q
		return quote(0, 1)(context.Background(), q)
	})}
	if d, err := st.Check(context.Background(), trade("buy", `"400"`, nil)); err != nil || d.Verdict != warden.Allow {
		t.Fatalf("Check = %v (%s), %v", d.Verdict, d.Reason, err)
	}
	if got.In.Symbol != "USDC" || got.Out.AssetID != "ETH" || got.AmountUSD != 400*d || got.MaxSlippage != 0.02 {
		t.Fatalf("simulated %+v; want USDC→WETH on base, $400, tolerance 0.02", got)
	}
}
