package safety

import (
	"context"
	"fmt"

	"github.com/agentwarden/warden"
)

// PolicyIntegrity fails closed on a broken safety section. When the policy
// file's safety section is invalid, warden runs on that section's defaults,
// which may be looser than what the owner wrote (a typo next to
// `dailySpendCap: 50` would otherwise let $2000 a day through). So while it is
// invalid, fund-moving requests are denied until the file is fixed. The zero
// value (no problem) allows everything.
type PolicyIntegrity struct {
	// SafetyProblem describes why the safety section is invalid; empty when it
	// is valid.
	SafetyProblem string
}

// Name implements warden.Stage.
func (PolicyIntegrity) Name() string { return "policy-integrity" }

// Check implements warden.Stage.
func (p PolicyIntegrity) Check(_ context.Context, req *warden.Request) (warden.Decision, error) {
	const rule = "safety.policy_invalid"
	if p.SafetyProblem == "" {
		return warden.Allowf(rule, "the safety section of the policy file is valid"), nil
	}
	if _, moves, _ := req.AmountUSD(); !moves {
		return warden.Allowf(rule, "the safety section is invalid, but this request moves no funds"), nil
	}
	return warden.Denyf(rule, fmt.Sprintf("no funds move while the safety section of warden.yaml is invalid (%s); fix it, `warden config validate` shows how", p.SafetyProblem)), nil
}
