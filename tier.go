package warden

import (
	"encoding/json"
	"fmt"
	"strconv"
)

// Tier is a tool's permission tier. The zero value means "not set"; the gate
// resolves it to TierAlwaysConfirm, the tier of a tool the policy does not name.
type Tier uint8

const (
	TierReadOnly      Tier = 1 // allowed without asking
	TierConfirmOnce   Tier = 2 // ask once per session; blocked by the kill switch
	TierAlwaysConfirm Tier = 3 // ask every time; on autonomous turns only with autopilot
	TierManualOnly    Tier = 4 // a fresh human confirmation every time; never on autopilot
)

// DefaultTier is the tier of a tool the policy file does not name.
const DefaultTier = TierAlwaysConfirm

// Valid reports whether t is one of the four tiers.
func (t Tier) Valid() bool { return t >= TierReadOnly && t <= TierManualOnly }

// OrDefault returns t, or DefaultTier when t is not a valid tier.
func (t Tier) OrDefault() Tier {
	if t.Valid() {
		return t
	}
	return DefaultTier
}

// String names the tier, e.g. "3 (always confirm)".
func (t Tier) String() string {
	switch t {
	case TierReadOnly:
		return "1 (read only)"
	case TierConfirmOnce:
		return "2 (confirm once)"
	case TierAlwaysConfirm:
		return "3 (always confirm)"
	case TierManualOnly:
		return "4 (manual only)"
	}
	return "unset"
}

// MarshalJSON encodes the tier as its number.
func (t Tier) MarshalJSON() ([]byte, error) { return strconv.AppendUint(nil, uint64(t), 10), nil }

// UnmarshalJSON accepts a number 1–4.
func (t *Tier) UnmarshalJSON(b []byte) error {
	var n int
	if err := json.Unmarshal(b, &n); err != nil {
		return fmt.Errorf("tier: want a number 1-4: %w", err)
	}
	if n < 1 || n > 4 {
		return fmt.Errorf("tier %d out of range (want 1-4)", n)
	}
	*t = Tier(n)
	return nil
}
