// Package safety holds the global stages that run first for every request,
// whatever its capability, in this order:
//
//  0. PolicyIntegrity: while the policy's safety section is invalid, no funds move.
//  1. KillSwitch: while the emergency stop is on, tier ≥ 2 is blocked.
//  2. SpendCap: a fund-moving request must fit the rolling 24-hour spend cap.
//  3. TxMax: a fund-moving request must not exceed the per-transaction max.
//  4. TierGate: on autonomous turns tier ≥ 3 is blocked unless autopilot is on;
//     tier 4 never runs on an autonomous turn.
//  5. ManualOnly: tier 4 always asks a human, and no standing grant satisfies it.
//
// Each stage is independent: it decides from the request and its own settings.
// The zero value of every stage is its strictest form (a zero cap allows no
// spending; a zero KillSwitch is off, like the policy file's default).
package safety

import "github.com/agentwarden/warden"

// Stages returns the global stages in their fixed order.
func Stages(integrity PolicyIntegrity, kill KillSwitch, spend SpendCap, txMax TxMax, gate TierGate) []warden.Stage {
	return []warden.Stage{integrity, kill, spend, txMax, gate, ManualOnly{}}
}
