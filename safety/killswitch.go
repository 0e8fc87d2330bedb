package safety

import (
	"context"
	"fmt"

	"github.com/agentwarden/warden"
)

// ReleaseTool is the tool name of turning the emergency stop off (`warden
// unkill`). It is tier 4 and is the one tier ≥ 2 action the switch itself does
// not block, when a human (not an autonomous turn) asks for it.
const ReleaseTool = "unkill"

// KillSwitch is the emergency stop. While Active, or while Engaged says so,
// every request of tier 2 or above is denied. The zero value is off.
type KillSwitch struct {
	Active bool
	// Engaged reports the stop's own state, kept apart from the policy file
	// (warden's home's killswitch file), asked on every check so that every
	// process sees `warden kill` at once. Nil is off.
	Engaged func() bool
	// Unread, when set, reports that Engaged said on because the stop's
	// state could not be read (a fleet's database out of reach), which
	// counts as on; the denial then says so. Nil: never.
	Unread func() bool
	// ExitsDeny refuses the stop-loss monitor's protective exits too; by
	// default they ask a human (a fresh confirmation: no standing grant).
	ExitsDeny bool
}

// Name implements warden.Stage.
func (KillSwitch) Name() string { return "kill-switch" }

// Check implements warden.Stage.
func (k KillSwitch) Check(_ context.Context, req *warden.Request) (warden.Decision, error) {
	if !k.Active && (k.Engaged == nil || !k.Engaged()) {
		return warden.Allowf("safety.kill_switch", "the emergency stop is off"), nil
	}
	if req.Tier < warden.TierConfirmOnce && req.Tier.Valid() {
		return warden.Allowf("safety.kill_switch", "the emergency stop is on, but tier 1 (read-only) actions may still run"), nil
	}
	if req.Protective && !k.ExitsDeny {
		d := warden.Askf("safety.kill_switch", "the emergency stop is on; this protective exit from the stop-loss monitor waits for a human instead of trading on its own")
		d.ManualOnly = true
		return d, nil
	}
	if req.ToolName() == ReleaseTool && !req.Autonomous {
		return warden.Allowf("safety.kill_switch", "the emergency stop leaves its own release to a human"), nil
	}
	if !k.Active && k.Unread != nil && k.Unread() {
		return warden.Denyf("safety.kill_switch", fmt.Sprintf(
			"the fleet's emergency stop cannot be read (its database is out of reach), so it counts as on and tier %d actions are blocked; they run again once the database answers", req.Tier.OrDefault())), nil
	}
	return warden.Denyf("safety.kill_switch", fmt.Sprintf(
		"the emergency stop is on, so tier %d actions are blocked; a human can resume with `warden unkill` at a terminal", req.Tier.OrDefault())), nil
}
