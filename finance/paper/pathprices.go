package paper

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	"github.com/agentwarden/warden/finance"
)

// PathPrices is a deterministic price path per asset, for demos and tests:
// the same fields always give the same prices at the same moments.
//
// Time is cut into ticks of Step from Epoch; at time t the tick is
// n = floor((t−Epoch)/Step) (0 before Epoch) and the price's At is the start
// of tick n. An asset with Ticks is scripted: tick n's price is Ticks[n], held
// at the last value after the end. Any other asset follows a geometric random
// walk: Start[asset]·exp(Volatility·(z₁+…+zₙ)), where the zᵢ are standard
// normal draws from a PCG generator seeded by Seed and the asset id, so each
// asset has its own path and adding an asset does not change the others.
//
// Zero values: Start nil means DefaultStartPrices(); Step 0 means one minute;
// Volatility 0 keeps every price at its start. Epoch is required. Keys of
// Start and Ticks are asset ids (ETH, BTC…); an asset in neither is an error
// wrapping ErrUnknownAsset.
//
// Use a *PathPrices, safe for concurrent use: it remembers how far each path
// was walked, so a clock that moves forward costs only the new steps. Do not
// change its fields or copy it after first use.
type PathPrices struct {
	Seed       int64
	Start      map[string]float64
	Step       time.Duration
	Volatility float64
	Epoch      time.Time
	Ticks      map[string][]float64

	mu    sync.Mutex
	walks map[string]*walk
}

var _ PriceSource = (*PathPrices)(nil)

// walk is how far one asset's random path has been drawn.
type walk struct {
	rng *rand.Rand
	n   int64   // steps drawn
	sum float64 // their sum, unscaled
}

// Price returns assetID's price at tick n of at.
func (p *PathPrices) Price(ctx context.Context, assetID string, at time.Time) (finance.Price, error) {
	if err := ctx.Err(); err != nil {
		return finance.Price{}, err
	}
	if p.Epoch.IsZero() {
		return finance.Price{}, errors.New("price path: no epoch configured")
	}
	if v := p.Volatility; math.IsNaN(v) || math.IsInf(v, 0) {
		return finance.Price{}, fmt.Errorf("price path: volatility %v is not a finite number", v)
	}
	step := p.Step
	if step <= 0 {
		step = time.Minute
	}
	var n int64
	if at.After(p.Epoch) {
		n = int64(at.Sub(p.Epoch) / step)
	}
	tickAt := p.Epoch.Add(time.Duration(n) * step)
	if ticks, asset, ok := lookup(p.Ticks, assetID); ok {
		if len(ticks) == 0 {
			return finance.Price{}, fmt.Errorf("price path: asset %q: the scripted path has no ticks", asset)
		}
		usd := ticks[min(n, int64(len(ticks)-1))]
		if !validPrice(usd) {
			return finance.Price{}, fmt.Errorf("price path: asset %q: tick %d is %v, not a positive price", asset, min(n, int64(len(ticks)-1)), usd)
		}
		return finance.Price{USD: usd, At: tickAt}, nil
	}
	start := p.Start
	if start == nil {
		start = defaultStart
	}
	s0, asset, ok := lookup(start, assetID)
	if !ok {
		return finance.Price{}, fmt.Errorf("price path: asset %q: %w", assetID, ErrUnknownAsset)
	}
	if !validPrice(s0) {
		return finance.Price{}, fmt.Errorf("price path: asset %q: the start price %v is not a positive price", asset, s0)
	}
	sum := p.sum(asset, n)
	usd := s0 * math.Exp(p.Volatility*sum)
	if !validPrice(usd) {
		return finance.Price{}, fmt.Errorf("price path: asset %q: the path left the range of prices at tick %d", asset, n)
	}
	return finance.Price{USD: usd, At: tickAt}, nil
}

// sum returns the sum of the first n normal draws of asset's path.
func (p *PathPrices) sum(asset string, n int64) float64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	w := p.walks[asset]
	if w == nil || w.n > n {
		h := fnv.New64a()
		h.Write([]byte(asset))
		w = &walk{rng: rand.New(rand.NewPCG(uint64(p.Seed), h.Sum64()))}
		if p.walks == nil {
			p.walks = map[string]*walk{}
		}
		p.walks[asset] = w
	}
	for ; w.n < n; w.n++ {
		w.sum += w.rng.NormFloat64()
	}
	return w.sum
}

// lookup finds asset in m as given, else in upper case.
func lookup[V any](m map[string]V, asset string) (V, string, bool) {
	if v, ok := m[asset]; ok {
		return v, asset, true
	}
	up := strings.ToUpper(asset)
	v, ok := m[up]
	return v, up, ok
}
