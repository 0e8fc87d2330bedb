// Package exposure is the exposure-limits stage of the trade capability: it
// refuses an order that would take the portfolio past a ceiling — per asset
// (keyed by asset id across chains, so splitting a position over chains does
// not split its limit), per chain, per asset class as a fraction of the
// portfolio, and in total. Limits bound increases only: an order that
// reduces exposure passes even when a ceiling is already exceeded.
package exposure

import (
	"context"
	"fmt"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/finance"
)

// Limits are the exposure section. Caps are inclusive. The zero value allows
// no exposure at all.
type Limits struct {
	MaxPerToken, MaxPerChain warden.USD
	// MaxClassFraction is the most of the portfolio's value one asset class
	// may be, after the trade.
	MaxClassFraction float64
	MaxTotal         warden.USD
}

// Snapshot is the portfolio as the stage judges it.
type Snapshot struct {
	Exposure finance.Exposure
	// Value is the portfolio's total value (stablecoins included).
	Value warden.USD
}

// FromPortfolio takes a snapshot of a portfolio.
func FromPortfolio(p *finance.Portfolio) Snapshot {
	return Snapshot{Exposure: p.Exposure(), Value: p.ValueUSD()}
}

// Stage is the exposure-limits stage.
type Stage struct {
	Limits   Limits
	State    func(ctx context.Context) (Snapshot, error)
	Resolver finance.Resolver
}

// Name implements warden.Stage.
func (Stage) Name() string { return "exposure-limits" }

// Check implements warden.Stage.
func (st Stage) Check(ctx context.Context, req *warden.Request) (warden.Decision, error) {
	if req.Capability != warden.CapTrade {
		return warden.Allowf("exposure.not_trade", "not a trade"), nil
	}
	o, err := finance.ParseOrder(req)
	if err != nil {
		return warden.Denyf("trade.invalid", err.Error()), nil
	}
	if !o.Increases() || req.Protective {
		return warden.Allowf("exposure.reducing", "a "+o.Action+" does not add exposure, so the limits (which bound increases) do not apply"), nil
	}
	in, out, err := st.tokens(o)
	if err != nil {
		return warden.Denyf("exposure.unresolved", "cannot judge exposure: "+err.Error()), nil
	}
	if out.Class == finance.ClassStablecoin {
		return warden.Allowf("exposure.reducing", fmt.Sprintf("buying %s, a stablecoin, adds no exposure", out.Symbol)), nil
	}
	if st.State == nil {
		return warden.Decision{}, fmt.Errorf("no portfolio to judge exposure against")
	}
	snap, err := st.State(ctx)
	if err != nil {
		return warden.Decision{}, fmt.Errorf("read the portfolio: %w", err)
	}
	return st.Limits.judge(snap, o, in, out), nil
}

// tokens resolves what the order pays with (zero for a perp, whose margin
// is cash) and what it adds.
func (st Stage) tokens(o *finance.Order) (in, out finance.Token, err error) {
	chain, err := st.Resolver.Chain(o.Chain)
	if err != nil {
		return in, out, err
	}
	resolve := func(ref string) (finance.Token, error) {
		t, err := st.Resolver.Token(chain, finance.ParseTokenRef(ref))
		if err != nil && !finance.IsUnlisted(err) {
			return t, err
		}
		return t, nil
	}
	if o.Action == finance.PerpOpen {
		out, err = resolve(finance.PerpAsset(o.Token))
		return in, out, err
	}
	if in, err = resolve(o.TokenIn); err != nil {
		return in, out, err
	}
	out, err = resolve(o.TokenOut)
	return in, out, err
}

// judge checks each ceiling the order raises; the first one passed names
// the deny. What the order pays with leaves the portfolio when it is not
// cash (a perp's margin always is), so a swap between two assets of one
// class, chain or asset moves exposure without raising it.
func (l Limits) judge(s Snapshot, o *finance.Order, in, out finance.Token) warden.Decision {
	add := o.Notional()
	paying := o.Action != finance.PerpOpen && in.Class != finance.ClassStablecoin
	less := func(same bool) warden.USD {
		if paying && same {
			return o.AmountUSD
		}
		return 0
	}
	e := s.Exposure
	assetLess, chainLess, classLess, totalLess := less(in.AssetID == out.AssetID), less(in.Chain.Name == out.Chain.Name), less(in.Class == out.Class), less(true)

	asset := e.ByAsset[out.AssetID] + add - assetLess
	if asset > l.MaxPerToken && add > assetLess {
		return warden.Denyf("exposure.per_token", fmt.Sprintf("%s exposure would be $%s (now $%s across all chains, plus $%s), above the per-token ceiling of $%s",
			out.AssetID, asset, e.ByAsset[out.AssetID], add, l.MaxPerToken))
	}
	chain := e.ByChain[out.Chain.Name] + add - chainLess
	if chain > l.MaxPerChain && add > chainLess {
		return warden.Denyf("exposure.per_chain", fmt.Sprintf("exposure on %s would be $%s (now $%s, plus $%s), above the per-chain ceiling of $%s",
			out.Chain.Name, chain, e.ByChain[out.Chain.Name], add, l.MaxPerChain))
	}
	class := e.ByClass[out.Class] + add - classLess
	if add > classLess {
		if s.Value <= 0 {
			return warden.Denyf("exposure.asset_class", "the portfolio has no value to measure the "+string(out.Class)+" share against")
		}
		if sh := share(class, s.Value); sh > l.MaxClassFraction {
			return warden.Denyf("exposure.asset_class", fmt.Sprintf("%s would be %.2f%% of the $%s portfolio ($%s), above the %.2f%% ceiling for an asset class",
				out.Class, sh*100, s.Value, class, l.MaxClassFraction*100))
		}
	}
	total := e.Total + add - totalLess
	if total > l.MaxTotal && add > totalLess {
		return warden.Denyf("exposure.total", fmt.Sprintf("total exposure would be $%s (now $%s, plus $%s), above the ceiling of $%s",
			total, e.Total, add, l.MaxTotal))
	}
	return warden.Allowf("exposure.within", fmt.Sprintf("after $%s more %s: %s $%s of $%s, %s $%s of $%s, %s %.2f%% of %.2f%%, total $%s of $%s",
		add, out.AssetID, out.AssetID, asset, l.MaxPerToken, out.Chain.Name, chain, l.MaxPerChain,
		out.Class, share(class, s.Value)*100, l.MaxClassFraction*100, total, l.MaxTotal))
}

func share(part, whole warden.USD) float64 {
	if whole <= 0 {
		return 0
	}
	return float64(part) / float64(whole)
}
