package safety

import (
	"context"
	"fmt"

	"github.com/agentwarden/warden"
)

// TxMax denies a fund-moving request above the per-transaction maximum; the
// boundary is inclusive ($500 passes a $500 max). The zero value allows $0 only.
type TxMax struct {
	Max warden.USD
}

// Name implements warden.Stage.
func (TxMax) Name() string { return "per-transaction-max" }

// Check implements warden.Stage.
func (t TxMax) Check(_ context.Context, req *warden.Request) (warden.Decision, error) {
	const rule = "safety.max_transaction"
	amount, ok, bad := fundAmount(req, rule)
	if bad != nil {
		return *bad, nil
	}
	if !ok {
		return warden.Allowf(rule, "not fund-moving"), nil
	}
	if req.Protective {
		return warden.Allowf(rule, "a protective exit of $"+amount.String()+" returns funds to the own wallet; the per-transaction max does not apply"), nil
	}
	if amount > t.Max {
		return warden.Denyf(rule, fmt.Sprintf("$%s is above the per-transaction maximum of $%s; split it or ask the owner to raise safety.maxTransactionAmount", amount, t.Max)), nil
	}
	return warden.Allowf(rule, fmt.Sprintf("$%s is within the per-transaction maximum of $%s", amount, t.Max)), nil
}
