package policy

import (
	"context"
	"fmt"
	"math/big"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/finance"
	"github.com/agentwarden/warden/signing"
)

// Prices prices tokens in USD; finance.Backend is one.
type Prices interface {
	Price(ctx context.Context, t finance.Token) (finance.Price, error)
}

// Valuer prices what a signing request moves, so that the global
// per-transaction max and daily cap hold it: the native value at the chain
// coin's price, plus the token amount a transfer moves or an approval grants
// (at the registry token's decimals and price). The zero value has no prices
// and values nothing.
type Valuer struct {
	Prices Prices
}

// Value is the request's USD value. known is false when part of it cannot be
// priced (an unlisted token, no price): the caps cannot hold it, and the
// calls stage asks a human. A request that moves nothing is worth $0, known.
// An error means a price source failed: the caller must deny.
func (v Valuer) Value(ctx context.Context, r *signing.Request) (usd warden.USD, known bool, err error) {
	if r.Tx == nil {
		return 0, true, nil
	}
	var res finance.Resolver
	chain, cerr := chainOf(res, r.Tx.ChainID)
	known = true
	if r.Tx.Value != nil && r.Tx.Value.Sign() > 0 {
		native, ok := res.Native(chain)
		if cerr != nil || !ok {
			known = false
		} else {
			u, ok, err := v.price(ctx, native, r.Tx.Value)
			if err != nil {
				return 0, false, err
			}
			usd, known = usd+u, known && ok
		}
	}
	if len(r.Tx.Data) == 0 || r.Tx.To == nil {
		return usd, known, nil
	}
	call, err := signing.DecodeCall(r.Tx.Data)
	if err != nil || call == nil || call.Amount == nil || call.Name == signing.CallSetApprovalForAll {
		return usd, known, nil // the calls stage refuses what does not decode
	}
	tokenAt := *r.Tx.To
	if call.Token != nil { // Permit2 approve names its token
		tokenAt = *call.Token
	}
	token, ok := res.Listed(chain, tokenAt.Hex())
	if cerr != nil || !ok || signing.Unlimited(call.Amount) {
		return usd, false, nil
	}
	u, ok, err := v.price(ctx, token, call.Amount)
	if err != nil {
		return 0, false, err
	}
	return usd + u, known && ok, nil
}

// price values amount base units of t; ok is false without a price source.
func (v Valuer) price(ctx context.Context, t finance.Token, amount *big.Int) (warden.USD, bool, error) {
	if v.Prices == nil {
		return 0, false, nil
	}
	p, err := v.Prices.Price(ctx, t)
	if err != nil {
		return 0, false, fmt.Errorf("price %s: %w", t, err)
	}
	if p.USD <= 0 {
		return 0, false, nil
	}
	// micro-dollars = amount × price × 10^6 / 10^decimals, rounded up so a
	// value is never understated.
	units := new(big.Float).SetPrec(256).SetInt(amount)
	units.Mul(units, new(big.Float).SetPrec(256).SetFloat64(p.USD*float64(warden.MicrosPerDollar)))
	scale := new(big.Float).SetPrec(256).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(t.Decimals)), nil))
	units.Quo(units, scale)
	micros, acc := units.Int(nil)
	if acc == big.Below {
		micros.Add(micros, big.NewInt(1))
	}
	if !micros.IsInt64() {
		return warden.USD(1<<62 - 1), true, nil // beyond any cap
	}
	return warden.USD(micros.Int64()), true, nil
}

func chainOf(res finance.Resolver, id *big.Int) (finance.Chain, error) {
	if id == nil || !id.IsInt64() {
		return finance.Chain{}, fmt.Errorf("no chain id")
	}
	return res.Chain(fmt.Sprint(id.Int64()))
}
