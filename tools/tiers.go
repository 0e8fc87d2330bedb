// Package tools resolves a request's permission tier from the policy file and
// decides the `tool` capability: a named tool call, judged by its tier alone
// (the global stages in package safety add the kill switch, caps and autopilot).
package tools

import (
	"encoding/json"
	"strings"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/config"
)

// ParamRecipient is the request parameter naming where funds go; tier overrides
// with a recipients list match on it.
const ParamRecipient = "recipient"

// Resolver maps a request to its tier. The zero value gives every request
// warden.DefaultTier.
type Resolver struct {
	Tiers     map[string]warden.Tier
	Overrides []config.TierOverride
}

// NewResolver builds a resolver from the policy's tools section.
func NewResolver(t config.Tools) Resolver {
	return Resolver{Tiers: t.Tiers, Overrides: t.Overrides}
}

// Tier returns the tier of req: the first override whose conditions all hold,
// else the tier of its tool name, else of "capability.action" (so a policy can
// tier e.g. trade.swap), else warden.DefaultTier.
func (r Resolver) Tier(req *warden.Request) warden.Tier {
	name := req.ToolName()
	for _, o := range r.Overrides {
		if o.Tool == name && name != "" && overrideHolds(o, req) && o.Tier.Valid() {
			return o.Tier
		}
	}
	if t, ok := r.Tiers[name]; ok && name != "" && t.Valid() {
		return t
	}
	if t, ok := r.Tiers[req.Capability+"."+req.Action]; ok && req.Capability != "" && t.Valid() {
		return t
	}
	return warden.DefaultTier
}

// overrideHolds reports whether every condition an override sets is met. A
// condition that cannot be evaluated (a missing or malformed amount or
// recipient) does not hold, so the stricter base tier applies.
func overrideHolds(o config.TierOverride, req *warden.Request) bool {
	if o.MaxAmount != nil {
		amount, ok, err := req.AmountUSD()
		if !ok || err != nil || amount > *o.MaxAmount {
			return false
		}
	}
	if o.Recipients != nil {
		raw, ok := req.Params[ParamRecipient]
		if !ok {
			return false
		}
		var to string
		if json.Unmarshal(raw, &to) != nil || to == "" {
			return false
		}
		found := false
		for _, r := range o.Recipients {
			if strings.EqualFold(r, to) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}
