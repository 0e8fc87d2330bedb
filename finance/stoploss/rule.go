// Package stoploss is warden's stop-loss monitor: rules that say when a
// holding or an open position must be closed (a fixed stop under the entry,
// a trailing stop under the peak since entry, a take profit, a time limit),
// the pure Evaluate that applies one rule to one observation, the Store that
// keeps rules and high-water marks, and the Monitor that watches the
// portfolio and sends every exit through the same gate as the agent's own
// orders (finance.Trader.Execute), marked warden.Request.Protective.
//
// The monitor follows freqtrade and hummingbot where they agree: stops only
// ratchet toward the price (a trailing stop never moves down), triggers are
// inclusive (a price exactly at the stop exits), and with a margin basis a
// leveraged position's threshold is risk on the margin (a 10 % stop at 10x
// fires on a 1 % move). Where a periodic local stop cannot know, it asks: a
// stale or unusable price, or an exit whose simulated fill is worth less than
// MinOutputRatio of its input, escalates to a human rather than exiting or
// holding silently.
package stoploss

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/internal/clip"
)

// Kind is what a rule watches.
type Kind string

// Rule kinds.
const (
	// FixedPercent exits once the price has fallen ThresholdPct below the
	// entry (risen above it, for a short).
	FixedPercent Kind = "fixed_percent"
	// Trailing exits once the price has fallen ThresholdPct below the peak
	// since entry (risen above the trough, for a short).
	Trailing Kind = "trailing"
	// TimeBased exits once the position has been held MaxAge, whatever its
	// profit or loss. A ThresholdPct above 0 adds a fixed stop.
	TimeBased Kind = "time_based"
)

// Bases of a rule's thresholds.
const (
	// BasisPrice applies thresholds to the price move (the default).
	BasisPrice = "price"
	// BasisMargin applies thresholds to the move times the leverage: the
	// return on the margin of a leveraged position.
	BasisMargin = "margin"
)

// Rule is one stop-loss rule on one target. Its zero value is invalid
// (Validate says why); it is stored as JSON.
type Rule struct {
	// ID names the rule in its Store; Monitor.AddRule assigns one when empty.
	// A Monitor's Default has none.
	ID string
	// Target is a position id, or a holding as "chain:SYMBOL" ("base:WETH");
	// see HoldingTarget.
	Target string
	Kind   Kind
	// ThresholdPct is a fraction (0.10 is 10 %): from the entry for
	// FixedPercent, from the peak since entry for Trailing. For TimeBased it
	// is optional (0 is none) and, when set, a fixed stop from the entry.
	ThresholdPct float64
	// TakeProfitPct, when above 0, also exits once the price is this
	// fraction above the entry (below it, for a short). 0 is no take profit.
	TakeProfitPct float64
	// MaxAge is how long the target may be held: required for TimeBased;
	// on the other kinds, when above 0, a time limit besides the stop.
	MaxAge time.Duration
	// Basis is BasisPrice (also when empty) or BasisMargin.
	Basis string
	// Entry is the entry price of a holding: a holding has no entry of its
	// own, so Monitor.AddRule records the current price when it is 0. A
	// position's EntryPrice takes precedence over it.
	Entry float64
	// CreatedAt is when the rule was added; for a holding it is also the
	// start of a TimeBased rule's clock.
	CreatedAt time.Time
	// By is who added the rule.
	By string
}

// ruleJSON is Rule's stored form; MaxAge is whole milliseconds.
type ruleJSON struct {
	ID            string    `json:"id,omitempty"`
	Target        string    `json:"target"`
	Kind          Kind      `json:"kind"`
	ThresholdPct  float64   `json:"threshold_pct,omitempty"`
	TakeProfitPct float64   `json:"take_profit_pct,omitempty"`
	MaxAgeMS      int64     `json:"max_age_ms,omitempty"`
	Basis         string    `json:"basis,omitempty"`
	Entry         float64   `json:"entry,omitempty"`
	CreatedAt     time.Time `json:"created_at"`
	By            string    `json:"by,omitempty"`
}

// MarshalJSON encodes the rule with snake_case keys and max_age_ms in
// milliseconds. A NaN or infinite field is an error.
func (r Rule) MarshalJSON() ([]byte, error) {
	return json.Marshal(ruleJSON{ID: r.ID, Target: r.Target, Kind: r.Kind, ThresholdPct: r.ThresholdPct,
		TakeProfitPct: r.TakeProfitPct, MaxAgeMS: r.MaxAge.Milliseconds(), Basis: r.Basis, Entry: r.Entry,
		CreatedAt: r.CreatedAt, By: r.By})
}

// UnmarshalJSON decodes a rule strictly: an unknown key is an error naming
// it, so a misspelled threshold is never silently dropped. It does not
// validate; call Validate.
func (r *Rule) UnmarshalJSON(b []byte) error {
	var j ruleJSON
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&j); err != nil {
		return warden.Errorf(warden.EInvalid, "stop-loss rule: %v", err)
	}
	if j.MaxAgeMS > math.MaxInt64/int64(time.Millisecond) || j.MaxAgeMS < 0 {
		return warden.Errorf(warden.EInvalid, "stop-loss rule: max_age_ms %d is out of range", j.MaxAgeMS)
	}
	*r = Rule{ID: j.ID, Target: j.Target, Kind: j.Kind, ThresholdPct: j.ThresholdPct, TakeProfitPct: j.TakeProfitPct,
		MaxAge: time.Duration(j.MaxAgeMS) * time.Millisecond, Basis: j.Basis, Entry: j.Entry, CreatedAt: j.CreatedAt, By: j.By}
	return nil
}

// MaxTakeProfitPct is the largest take profit a rule may set (10,000 %).
const MaxTakeProfitPct = 100

// Validate reports the first problem with the rule as a *warden.Error
// (EInvalid) whose message names the field; nil when the rule is usable.
func (r Rule) Validate() error {
	bad := func(format string, args ...any) *warden.Error {
		return warden.Errorf(warden.EInvalid, "stop-loss rule: "+format, args...)
	}
	if strings.TrimSpace(r.Target) == "" {
		return bad("the target is empty").WithHint(`name a position id, or a holding as "chain:SYMBOL" such as "base:WETH"`)
	}
	if err := checkText("target", r.Target, 256); err != nil {
		return err
	}
	if err := checkText("id", r.ID, 128); err != nil {
		return err
	}
	if err := checkText("by", r.By, 256); err != nil {
		return err
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"threshold_pct", r.ThresholdPct}, {"take_profit_pct", r.TakeProfitPct}, {"entry", r.Entry}} {
		if math.IsNaN(f.v) || math.IsInf(f.v, 0) {
			return bad("%s is %v; want a finite number", f.name, f.v)
		}
	}
	switch r.Kind {
	case FixedPercent, Trailing:
		if r.ThresholdPct <= 0 {
			return bad("a %s rule needs threshold_pct above 0, got %v", r.Kind, r.ThresholdPct).WithHint("give it as a fraction: 0.10 is a 10 % stop")
		}
	case TimeBased:
		if r.MaxAge <= 0 {
			return bad("a time_based rule needs max_age_ms above 0, got %d", r.MaxAge.Milliseconds()).WithHint("86400000 is 24 hours")
		}
		if r.ThresholdPct < 0 {
			return bad("threshold_pct is %v; want 0 (none) or a fraction above 0", r.ThresholdPct).WithHint("give it as a fraction: 0.10 is a 10 % stop")
		}
	case "":
		return bad("the kind is empty").WithHint("use fixed_percent, trailing or time_based")
	default:
		return bad("unknown kind %q", clip.String(string(r.Kind), 40)).WithHint("use fixed_percent, trailing or time_based")
	}
	if r.ThresholdPct > 1 {
		return bad("threshold_pct > 1.0 rejected (got %v): a stop is a fraction of the price, at most 1.0 (100 %%)", r.ThresholdPct).
			WithHint("give it as a fraction: 0.10 is a 10 % stop")
	}
	if r.MaxAge < 0 || r.MaxAge%time.Millisecond != 0 {
		return bad("max_age is %s; want 0 (none) or a whole number of milliseconds above 0", r.MaxAge)
	}
	if r.TakeProfitPct < 0 || r.TakeProfitPct > MaxTakeProfitPct {
		return bad("take_profit_pct is %v; want 0 (none) up to %d", r.TakeProfitPct, MaxTakeProfitPct).WithHint("give it as a fraction: 0.20 takes profit 20 % above the entry")
	}
	switch r.Basis {
	case "", BasisPrice, BasisMargin:
	default:
		return bad("unknown basis %q", clip.String(r.Basis, 40)).WithHint("use price (the default) or margin")
	}
	if r.Entry < 0 {
		return bad("entry is %v; want a price above 0, or 0 for none", r.Entry)
	}
	return nil
}

func checkText(name, s string, max int) error {
	if len(s) > max || strings.ContainsFunc(s, func(c rune) bool { return c < 0x20 || c == 0x7f }) {
		return warden.Errorf(warden.EInvalid, "stop-loss rule: %s is longer than %d bytes or holds control characters", name, max)
	}
	return nil
}

// NewID returns a new random rule id, "sl_" and 16 hex digits.
func NewID() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return "sl_" + hex.EncodeToString(b[:])
}

// describe names the rule for messages: "trailing 5 % stop".
func (r Rule) describe() string {
	var parts []string
	switch {
	case r.Kind == Trailing:
		parts = append(parts, fmt.Sprintf("trailing %s stop", pct(r.ThresholdPct)))
	case r.ThresholdPct > 0:
		parts = append(parts, fmt.Sprintf("fixed %s stop", pct(r.ThresholdPct)))
	}
	if r.MaxAge > 0 {
		parts = append(parts, fmt.Sprintf("%s time limit", r.MaxAge))
	}
	s := strings.Join(parts, " and ")
	if r.TakeProfitPct > 0 {
		s += fmt.Sprintf(" with a %s take profit", pct(r.TakeProfitPct))
	}
	if r.Basis == BasisMargin {
		s += " on margin"
	}
	return s
}
