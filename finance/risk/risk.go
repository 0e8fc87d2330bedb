// Package risk composes the trade capability: FullRiskManager is the
// ordered list of the six stages a trade must pass — token safety,
// recipients, position sizing, exposure limits, slippage, and the risk
// floor — and the gate runs it after the global stages (kill switch,
// daily spend cap, per-transaction max, tier gate), which are the floor's
// money limits for every request. The daily cap's authoritative check is
// the ledger's atomic check-and-debit when the decision is recorded.
//
// Nothing executes a trade except finance.Trader, and the Trader executes
// only what the gate, running these stages, allowed.
package risk

import (
	"context"
	"fmt"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/finance"
	"github.com/agentwarden/warden/finance/exposure"
	"github.com/agentwarden/warden/finance/recipients"
	"github.com/agentwarden/warden/finance/sizing"
	"github.com/agentwarden/warden/finance/slippage"
	"github.com/agentwarden/warden/finance/tokensafety"
)

// FullRiskManager holds the trade capability's stages. Stages returns them
// in the order they run; token safety runs first.
type FullRiskManager struct {
	TokenSafety tokensafety.Stage
	Recipients  recipients.Stage
	Sizing      sizing.Stage
	Exposure    exposure.Stage
	Slippage    slippage.Stage
	Floor       Floor
}

// Stages returns the stages in order.
func (m *FullRiskManager) Stages() []warden.Stage {
	return []warden.Stage{m.TokenSafety, m.Recipients, m.Sizing, m.Exposure, m.Slippage, m.Floor}
}

// Floor is the stage that always runs last on a trade: it refuses a trade
// the money limits could not hold — one that moves funds without stating
// its amount (the global per-transaction max and daily cap only see
// amount_usd), a close that names no position, or a protective exit that
// is not an exit.
type Floor struct{}

// Name implements warden.Stage.
func (Floor) Name() string { return "risk-floor" }

// Check implements warden.Stage.
func (Floor) Check(_ context.Context, req *warden.Request) (warden.Decision, error) {
	if req.Capability != warden.CapTrade {
		return warden.Allowf("risk.not_trade", "not a trade"), nil
	}
	o, err := finance.ParseOrder(req)
	if err != nil {
		return warden.Denyf("trade.invalid", err.Error()), nil
	}
	if req.Protective && o.Action != finance.Sell && o.Action != finance.PerpClose {
		return warden.Denyf("risk.protective_not_exit", "a protective order must be a sell or a perp close, not a "+o.Action), nil
	}
	if o.Action == finance.PerpClose {
		if o.Position == "" {
			return warden.Denyf("risk.no_position", "a perp_close names no position; add --param position=ID"), nil
		}
		return warden.Allowf("risk.floor", "closing position "+o.Position+" moves no new funds"), nil
	}
	if !o.HasAmount || o.AmountUSD <= 0 {
		return warden.Denyf("risk.no_amount", fmt.Sprintf("a %s must state its amount_usd above $0, or the per-transaction max and the daily cap cannot hold it", o.Action)), nil
	}
	if req.Protective {
		return warden.Allowf("risk.floor", fmt.Sprintf("a protective %s of $%s: exempt from the per-transaction max and the daily cap, held by every other stage", o.Action, o.AmountUSD)), nil
	}
	return warden.Allowf("risk.floor", fmt.Sprintf("$%s is held by the kill switch, the per-transaction max and the daily cap (reserved atomically when recorded)", o.AmountUSD)), nil
}
