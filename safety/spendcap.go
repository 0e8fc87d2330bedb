package safety

import (
	"context"
	"fmt"
	"time"

	"github.com/agentwarden/warden"
)

// SpendCap checks a fund-moving request against the rolling 24-hour spend cap.
// It reads the ledger only; the authoritative check-and-debit happens atomically
// when the decision is recorded (warden.AuditStore.Record with a Debit), so two
// processes racing past this stage still cannot exceed the cap. The zero value
// has a cap of $0 and no ledger: it denies every fund-moving request.
type SpendCap struct {
	Cap    warden.USD
	Ledger SpendReader
	Now    func() time.Time // defaults to time.Now
}

// SpendReader is the part of warden.Ledger the stage reads.
type SpendReader interface {
	SpentSince(ctx context.Context, t time.Time) (warden.USD, error)
}

// Name implements warden.Stage.
func (SpendCap) Name() string { return "daily-spend-cap" }

// Check implements warden.Stage.
func (s SpendCap) Check(ctx context.Context, req *warden.Request) (warden.Decision, error) {
	const rule = "safety.daily_cap"
	amount, ok, bad := fundAmount(req, rule)
	if bad != nil {
		return *bad, nil
	}
	if !ok {
		return warden.Allowf(rule, "not fund-moving"), nil
	}
	if req.Protective {
		return warden.Allowf(rule, "a protective exit spends nothing: it returns funds to the own wallet"), nil
	}
	if amount > s.Cap {
		return warden.Denyf(rule, fmt.Sprintf("$%s is more than the whole daily spend cap of $%s", amount, s.Cap)), nil
	}
	if s.Ledger == nil {
		return warden.Decision{}, fmt.Errorf("no spend ledger configured")
	}
	now := time.Now
	if s.Now != nil {
		now = s.Now
	}
	spent, err := s.Ledger.SpentSince(ctx, now().Add(-warden.SpendWindow))
	if err != nil {
		return warden.Decision{}, fmt.Errorf("read spend ledger: %w", err)
	}
	if spent+amount > s.Cap {
		return warden.Denyf(rule, fmt.Sprintf("$%s already spent in the last 24 hours; $%s more would exceed the daily cap of $%s",
			spent, amount, s.Cap)), nil
	}
	return warden.Allowf(rule, fmt.Sprintf("$%s fits the daily cap: $%s of $%s spent in the last 24 hours", amount, spent, s.Cap)), nil
}

// Debit returns the atomic check-and-debit that must accompany the recording of
// an allowed fund-moving request, or nil when req moves no funds.
func (s SpendCap) Debit(req *warden.Request, at time.Time) *warden.Debit {
	amount, ok, err := req.AmountUSD()
	if !ok || err != nil || req.Protective {
		return nil
	}
	return &warden.Debit{Amount: amount, Cap: s.Cap, Since: at.Add(-warden.SpendWindow)}
}
