// Package sizing is the position-sizing stage of the trade capability: it
// works out how large an entry may be under the policy's strategy
// (fixed_usd, fixed_fraction or half_kelly), always clipped by the
// per-transaction maximum, and refuses an order larger than that. When the
// cap binds, the stage's rule is sizing.clipped, so the audit log shows how
// often it does.
package sizing

import (
	"context"
	"fmt"
	"math"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/finance"
)

// Strategies.
const (
	FixedUSD      = "fixed_usd"
	FixedFraction = "fixed_fraction"
	HalfKelly     = "half_kelly"
)

// Policy is the sizing section plus the per-transaction cap it clips to. The
// zero value sizes every order at $0, so it refuses every entry.
type Policy struct {
	Strategy    string
	FixedAmount warden.USD
	// Fraction of the portfolio for fixed_fraction (and the half-Kelly
	// fallback).
	Fraction float64
	// KellyMultiplier scales the Kelly fraction: 0.5 is half-Kelly.
	KellyMultiplier float64
	PerTxMax        warden.USD
}

// Size is what the strategy allows for one order.
type Size struct {
	// Amount is the largest order the strategy allows, after clipping.
	Amount warden.USD
	// Unclipped is the strategy's figure before the per-transaction cap.
	Unclipped warden.USD
	Clipped   bool
	// Strategy is the one that sized it (half_kelly falls back to
	// fixed_fraction without a win probability and payoff ratio).
	Strategy string
	// Kelly is the full Kelly fraction f* when half_kelly sized it.
	Kelly float64
}

// Size computes the order size for a portfolio worth equity. p and b are
// the win probability and payoff ratio (NaN when not given); given ones must
// be valid: 0 ≤ p ≤ 1 and b > 0.
func (pol Policy) Size(equity warden.USD, p, b float64) (Size, error) {
	s := Size{Strategy: pol.Strategy}
	switch pol.Strategy {
	case FixedUSD:
		s.Unclipped = pol.FixedAmount
	case FixedFraction:
		s.Unclipped = fraction(equity, pol.Fraction)
	case HalfKelly:
		if math.IsNaN(p) || math.IsNaN(b) {
			s.Strategy = FixedFraction
			s.Unclipped = fraction(equity, pol.Fraction)
			break
		}
		if p < 0 || p > 1 || b <= 0 || math.IsInf(b, 0) {
			return Size{}, fmt.Errorf("win_probability must be within [0, 1] and payoff_ratio above 0 (got %v and %v)", p, b)
		}
		s.Kelly = (p*b - (1 - p)) / b
		if s.Kelly <= 0 {
			return s, nil // no edge: no trade
		}
		s.Unclipped = fraction(equity, s.Kelly*pol.KellyMultiplier)
	default:
		return Size{}, fmt.Errorf("unknown sizing strategy %q", pol.Strategy)
	}
	s.Amount = s.Unclipped
	if s.Amount > pol.PerTxMax {
		s.Amount, s.Clipped = pol.PerTxMax, true
	}
	return s, nil
}

func fraction(equity warden.USD, f float64) warden.USD {
	if !(f > 0) || equity <= 0 {
		return 0
	}
	return finance.USDOf(equity.Dollars() * f)
}

// Stage is the position-sizing stage. Equity returns the portfolio's value
// (read only by the fraction and Kelly strategies).
type Stage struct {
	Policy Policy
	Equity func(ctx context.Context) (warden.USD, error)
}

// Name implements warden.Stage.
func (Stage) Name() string { return "position-sizing" }

// Check implements warden.Stage. Only entries (buy, swap, perp_open) are
// sized; exits and transfers pass. An entry without an amount is refused
// with the size the strategy allows, so the caller can resubmit it.
func (st Stage) Check(ctx context.Context, req *warden.Request) (warden.Decision, error) {
	if req.Capability != warden.CapTrade {
		return warden.Allowf("sizing.not_trade", "not a trade"), nil
	}
	o, err := finance.ParseOrder(req)
	if err != nil {
		return warden.Denyf("trade.invalid", err.Error()), nil
	}
	if !o.Increases() || req.Protective {
		return warden.Allowf("sizing.not_entry", "sizing applies to entries; a "+o.Action+" is not one"), nil
	}
	var equity warden.USD
	if st.Policy.Strategy != FixedUSD {
		if st.Equity == nil {
			return warden.Decision{}, fmt.Errorf("no portfolio to size against")
		}
		if equity, err = st.Equity(ctx); err != nil {
			return warden.Decision{}, fmt.Errorf("read the portfolio's value: %w", err)
		}
	}
	size, err := st.Policy.Size(equity, o.WinProbability, o.PayoffRatio)
	if err != nil {
		return warden.Denyf("sizing.invalid", err.Error()+"; fix the parameters rather than guess"), nil
	}
	what := describe(size, equity)
	if size.Amount <= 0 {
		return warden.Denyf("sizing.no_edge", "the "+size.Strategy+" strategy sizes this at $0 ("+what+"): no edge, no trade"), nil
	}
	if !o.HasAmount {
		return warden.Denyf("sizing.no_amount", fmt.Sprintf("the %s names no amount_usd; the %s strategy sizes it at $%s (%s), so pass --param amount_usd=%s",
			o.Action, size.Strategy, size.Amount, what, size.Amount)), nil
	}
	rule := "sizing.within"
	if size.Clipped {
		rule = "sizing.clipped"
	}
	if o.AmountUSD > size.Amount {
		return warden.Denyf(rule, fmt.Sprintf("$%s is more than the $%s the %s strategy allows (%s)", o.AmountUSD, size.Amount, size.Strategy, what)), nil
	}
	return warden.Allowf(rule, fmt.Sprintf("$%s is within the $%s the %s strategy allows (%s)", o.AmountUSD, size.Amount, size.Strategy, what)), nil
}

// describe explains a size in a few words.
func describe(s Size, equity warden.USD) string {
	var why string
	switch s.Strategy {
	case FixedUSD:
		why = fmt.Sprintf("fixed $%s", s.Unclipped)
	case FixedFraction:
		why = fmt.Sprintf("$%s of a $%s portfolio", s.Unclipped, equity)
	case HalfKelly:
		why = fmt.Sprintf("Kelly f* = %.4f, scaled: $%s of a $%s portfolio", s.Kelly, s.Unclipped, equity)
	}
	if s.Clipped {
		why += fmt.Sprintf(", clipped to the $%s per-transaction max", s.Amount)
	}
	return why
}
