package finance

import "github.com/agentwarden/warden"

// Exposure is how much of a portfolio is at risk in non-stable assets: by
// asset (across chains), by chain, by asset class, and in total. Holdings
// count at their value, perp positions at their notional.
type Exposure struct {
	ByAsset map[string]warden.USD     `json:"by_asset"`
	ByChain map[string]warden.USD     `json:"by_chain"`
	ByClass map[AssetClass]warden.USD `json:"by_class"`
	Total   warden.USD                `json:"total"`
}

// Exposure sums the portfolio's non-stable holdings and positions.
func (p *Portfolio) Exposure() Exposure {
	e := Exposure{ByAsset: map[string]warden.USD{}, ByChain: map[string]warden.USD{}, ByClass: map[AssetClass]warden.USD{}}
	for _, h := range p.Holdings {
		e.Add(h.Token, h.ValueUSD)
	}
	for _, pos := range p.Positions {
		e.Add(pos.Token, pos.NotionalUSD())
	}
	return e
}

// Add counts v of token t; stablecoins are not exposure and are skipped.
func (e *Exposure) Add(t Token, v warden.USD) {
	if t.Class == ClassStablecoin {
		return
	}
	e.ByAsset[t.AssetID] += v
	e.ByChain[t.Chain.Name] += v
	e.ByClass[t.Class] += v
	e.Total += v
}
