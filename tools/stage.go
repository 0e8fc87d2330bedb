package tools

import (
	"context"
	"fmt"
	"path"

	"github.com/agentwarden/warden"
)

// ActionCall is the one action of the tool capability.
const ActionCall = "call"

// Stage decides a tool call by its tier: 1 allow; 2 ask (a session grant then
// answers it for the rest of the session); 3 ask on a turn with a human, and on an autonomous
// turn allow only under autopilot; 4 ask a human every time. The zero value has
// autopilot off.
type Stage struct {
	Autopilot bool
	// Denied are tool names or path.Match patterns whose calls are denied
	// whatever their tier (the policy's tools.denied).
	Denied []string
}

// DeniedBy returns the first of patterns that names tool, and whether one
// does. A malformed pattern (the policy check refuses them) matches
// nothing.
func DeniedBy(patterns []string, tool string) (string, bool) {
	for _, p := range patterns {
		if ok, err := path.Match(p, tool); ok && err == nil {
			return p, true
		}
	}
	return "", false
}

// Name implements warden.Stage.
func (Stage) Name() string { return "tool-tier" }

// Check implements warden.Stage.
func (s Stage) Check(_ context.Context, req *warden.Request) (warden.Decision, error) {
	if req.Action != ActionCall {
		return warden.Denyf("tools.unknown_action", fmt.Sprintf("the tool capability has one action, %q; got %q", ActionCall, req.Action)), nil
	}
	name := req.ToolName()
	if name == "" {
		return warden.Denyf("tools.no_name", "a tool call must name its tool"), nil
	}
	if p, ok := DeniedBy(s.Denied, name); ok {
		return warden.Denyf("tools.denied", fmt.Sprintf("%s is denied by the policy (tools.denied: %s)", name, p)), nil
	}
	switch t := req.Tier.OrDefault(); t {
	case warden.TierReadOnly:
		return warden.Allowf("tools.tier1", fmt.Sprintf("%s is tier 1 (read only)", name)), nil
	case warden.TierConfirmOnce:
		return warden.Askf("tools.tier2", fmt.Sprintf("%s is tier 2: confirm once for this session", name)), nil
	case warden.TierAlwaysConfirm:
		if req.Autonomous {
			if s.Autopilot {
				return warden.Allowf("tools.tier3_autopilot", fmt.Sprintf("%s is tier 3 and autopilot is on", name)), nil
			}
			return warden.Denyf("tools.tier3_autonomous", fmt.Sprintf("%s is tier 3 and autopilot is off, so it cannot run on an autonomous turn", name)), nil
		}
		return warden.Askf("tools.tier3", fmt.Sprintf("%s is tier 3: confirm every time", name)), nil
	default:
		d := warden.Askf("tools.tier4", fmt.Sprintf("%s is tier 4 (manual only): a human must confirm this exact call", name))
		d.ManualOnly = true
		return d, nil
	}
}
