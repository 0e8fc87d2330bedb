package paper

import (
	"context"
	"errors"
	"math"
	"time"

	"github.com/agentwarden/warden/finance"
)

// PriceSource is the paper exchange's oracle: the USD price of an asset (a
// finance.Token's AssetID: ETH, BTC…) as of a moment.
//
// An error means there is no usable price, and the exchange then neither
// values nor trades the asset; a source that does not know the asset returns
// an error wrapping ErrUnknownAsset. A returned price is positive and finite,
// and its At says when it was observed, which may be long before at (a stale
// price is still returned; judging staleness is the caller's business).
type PriceSource interface {
	Price(ctx context.Context, assetID string, at time.Time) (finance.Price, error)
}

// ErrUnknownAsset is wrapped by a PriceSource's error for an asset it has no
// price for.
var ErrUnknownAsset = errors.New("no price for the asset")

// DefaultStartPrices returns the demo start prices, in USD by asset id, a
// PathPrices without Start uses. The map is the caller's to change.
func DefaultStartPrices() map[string]float64 {
	return map[string]float64{
		"ETH":  3000,
		"BTC":  60000,
		"SOL":  150,
		"BNB":  600,
		"POL":  0.5,
		"LINK": 15,
		"UNI":  8,
		"AAVE": 150,
		"ARB":  0.8,
		"OP":   1.8,
		"PEPE": 0.00001,
		"BONK": 0.00002,
		"BNKR": 0.0005,
	}
}

// defaultStart is DefaultStartPrices(), read only.
var defaultStart = DefaultStartPrices()

// validPrice reports whether p is usable as a price: positive and finite.
func validPrice(p float64) bool {
	return p > 0 && !math.IsInf(p, 1)
}
