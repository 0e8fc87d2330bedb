// Package slippage is the slippage stage of the trade capability: it
// simulates a swap through the backend and refuses one whose tolerance or
// price impact is above the tier for its size, or whose output is worth too
// little of its input at oracle prices; for perps it caps the leverage. A
// simulation that fails denies: no evidence, no trade.
package slippage

import (
	"context"
	"fmt"
	"math"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/finance"
)

// Simulator quotes a swap; finance.Backend implements it.
type Simulator interface {
	Simulate(ctx context.Context, q finance.SwapQuote) (finance.Simulation, error)
}

// Stage is the slippage stage.
type Stage struct {
	Policy    finance.SlippagePolicy
	Simulator Simulator
	Resolver  finance.Resolver
}

// Name implements warden.Stage.
func (Stage) Name() string { return "slippage" }

// Check implements warden.Stage.
func (st Stage) Check(ctx context.Context, req *warden.Request) (warden.Decision, error) {
	if req.Capability != warden.CapTrade {
		return warden.Allowf("slippage.not_trade", "not a trade"), nil
	}
	o, err := finance.ParseOrder(req)
	if err != nil {
		return warden.Denyf("trade.invalid", err.Error()), nil
	}
	switch {
	case o.Action == finance.PerpOpen:
		return st.leverage(o), nil
	case !o.IsSwap():
		return warden.Allowf("slippage.not_swap", "a "+o.Action+" is not a swap"), nil
	}
	tier := st.Policy.Tolerance(o.AmountUSD)
	tolerance := o.MaxSlippage
	if math.IsNaN(tolerance) {
		tolerance = tier
	}
	if tolerance < 0 || tolerance > 1 {
		return warden.Denyf("slippage.invalid", fmt.Sprintf("max_slippage %v is not a fraction between 0 and 1", tolerance)), nil
	}
	if tolerance > tier {
		return warden.Denyf("slippage.tolerance", fmt.Sprintf("the order accepts up to %s below the expected output; a $%s order may accept at most %s",
			pct(tolerance), o.AmountUSD, pct(tier))), nil
	}
	q, err := st.Resolver.Quote(o)
	if err != nil {
		return warden.Denyf("slippage.unresolved", "cannot simulate: "+err.Error()), nil
	}
	q.MaxSlippage = tolerance
	if st.Simulator == nil {
		return warden.Denyf("slippage.no_simulation", "no backend can simulate this swap, and without a simulation there is no evidence of its price"), nil
	}
	sim, err := st.Simulator.Simulate(ctx, q)
	if err != nil {
		return warden.Denyf("slippage.no_simulation", "the simulation failed ("+err.Error()+"), and without it there is no evidence of the swap's price"), nil
	}
	if !(sim.PriceImpact >= 0) || sim.ExpectedOut <= 0 {
		return warden.Denyf("slippage.no_simulation", fmt.Sprintf("the simulation returned no usable quote (expected output %v, price impact %v)", sim.ExpectedOut, sim.PriceImpact)), nil
	}
	if sim.PriceImpact > tier {
		return warden.Denyf("slippage.price_impact", fmt.Sprintf("the swap would move the price %s; a $%s order may move it at most %s", pct(sim.PriceImpact), o.AmountUSD, pct(tier))), nil
	}
	if r := sim.OutputRatio(); r < st.Policy.MinOutputRatio {
		return warden.Denyf("slippage.min_output", fmt.Sprintf("the output is worth $%s for $%s in (%.4f), below the minimum output ratio of %.4f: price impact, a transfer fee or a honeypot tax",
			sim.OutputValueUSD, sim.InputValueUSD, r, st.Policy.MinOutputRatio)), nil
	}
	return warden.Allowf("slippage.within", fmt.Sprintf("tolerance %s and price impact %s within the %s tier for $%s; output worth %.4f of the input",
		pct(tolerance), pct(sim.PriceImpact), pct(tier), o.AmountUSD, sim.OutputRatio())), nil
}

// leverage checks a perp's leverage: a finite number from 1 to the cap.
func (st Stage) leverage(o *finance.Order) warden.Decision {
	l := o.Leverage
	if math.IsNaN(l) || math.IsInf(l, 0) || l < 1 {
		return warden.Denyf("slippage.leverage_invalid", fmt.Sprintf("leverage %v is not a number from 1 to %v", l, st.Policy.MaxLeverage))
	}
	if l > st.Policy.MaxLeverage {
		return warden.Denyf("slippage.leverage_exceeds_cap", fmt.Sprintf("leverage_exceeds_cap: %vx is above the %vx maximum", l, st.Policy.MaxLeverage))
	}
	return warden.Allowf("slippage.leverage", fmt.Sprintf("leverage %vx is within the %vx maximum", l, st.Policy.MaxLeverage))
}

func pct(f float64) string { return fmt.Sprintf("%.2f%%", f*100) }
