package safety

import (
	"context"

	"github.com/agentwarden/warden"
)

// ManualOnly makes every tier 4 request ask a human, marked so that no
// remembered grant (session or always) can answer it.
type ManualOnly struct{}

// Name implements warden.Stage.
func (ManualOnly) Name() string { return "manual-only" }

// Check implements warden.Stage.
func (ManualOnly) Check(_ context.Context, req *warden.Request) (warden.Decision, error) {
	const rule = "safety.manual_only"
	if req.Tier.OrDefault() < warden.TierManualOnly {
		return warden.Allowf(rule, "below tier 4"), nil
	}
	d := warden.Askf(rule, "tier 4 (manual only): a human must confirm this exact request now; no standing grant applies")
	d.ManualOnly = true
	return d, nil
}
