package paper

import (
	"math"
	"testing"
	"time"
)

// FuzzParsePrices: the prices file parser never panics, and every price it
// accepts is positive and finite.
func FuzzParsePrices(f *testing.F) {
	for _, s := range []string{
		`{"ETH": 3000, "BTC": 60000}`,
		`{"ETH": {"usd": 3000, "at": "2025-01-02T15:04:05Z"}}`,
		`{"ETH": {"usd": 3000}, "eth": 1}`,
		`{"ETH": -0}`, `{"ETH": 1e-320}`, `[]`, `{`, `{"a":{}}`, `{"a":1}{}`,
	} {
		f.Add([]byte(s))
	}
	mod := time.Date(2025, 1, 2, 15, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, data []byte) {
		prices, err := parsePrices(data, mod)
		if err != nil {
			return
		}
		for asset, p := range prices {
			if !(p.USD > 0) || math.IsInf(p.USD, 0) || p.At.IsZero() {
				t.Errorf("parsePrices(%q) accepted %s = %+v", data, asset, p)
			}
		}
	})
}

// TestPoolConservesValue: without a fee, a trade never returns more than
// its input is worth at the oracle price, buying or selling.
func TestPoolConservesValue(t *testing.T) {
	for _, price := range []float64{0.00001, 1, 3000, 60000} {
		for _, usd := range []float64{0.01, 1, 1000, 1e6, 1e9} {
			if got := poolBuy(1e6, price, usd, 0) * price; got > usd*(1+1e-12) {
				t.Errorf("poolBuy(price %v, $%v) is worth $%v", price, usd, got)
			}
			if got := poolSell(1e6, price, usd/price, 0); got > usd*(1+1e-12) {
				t.Errorf("poolSell(price %v, $%v worth) returns $%v", price, usd, got)
			}
		}
	}
}
