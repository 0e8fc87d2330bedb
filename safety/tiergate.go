package safety

import (
	"context"

	"github.com/agentwarden/warden"
)

// TierGate governs autonomous turns (no human in the loop): tier 3 runs only
// when Autopilot is on, tier 4 never. Turns with a human pass; later stages ask.
// The zero value has autopilot off.
type TierGate struct {
	Autopilot bool
}

// Name implements warden.Stage.
func (TierGate) Name() string { return "tier-gate" }

// Check implements warden.Stage.
func (g TierGate) Check(_ context.Context, req *warden.Request) (warden.Decision, error) {
	const rule = "safety.tier_gate"
	if !req.Autonomous {
		return warden.Allowf(rule, "a human is in the loop this turn"), nil
	}
	if req.Protective {
		return warden.Allowf(rule, "a protective exit carries out a stop-loss rule a human set"), nil
	}
	switch t := req.Tier.OrDefault(); {
	case t >= warden.TierManualOnly:
		return warden.Denyf(rule, "tier 4 (manual only) actions never run on an autonomous turn; a human must start this one"), nil
	case t >= warden.TierAlwaysConfirm && !g.Autopilot:
		return warden.Denyf(rule, "tier 3 actions are blocked on autonomous turns while autopilot is off (safety.autopilotEnabled)"), nil
	case t >= warden.TierAlwaysConfirm:
		return warden.Allowf(rule, "autopilot is on: tier 3 may run on an autonomous turn, within the caps"), nil
	}
	return warden.Allowf(rule, "tiers 1 and 2 may run on autonomous turns"), nil
}
