package stoploss

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/agentwarden/warden/finance"
	"github.com/agentwarden/warden/internal/clip"
)

// Action is what Evaluate says to do with a target. The zero value is
// Escalate, so an outcome never filled in asks a human rather than exiting
// or holding.
type Action uint8

// Actions.
const (
	Escalate Action = iota // a human decides: the data is stale or unusable, or the exit fill is bad
	Hold                   // keep the target
	Exit                   // close the target through the gate
)

var actionNames = [...]string{Escalate: "escalate", Hold: "hold", Exit: "exit"}

// String returns the action's lower-case name.
func (a Action) String() string {
	if int(a) < len(actionNames) {
		return actionNames[a]
	}
	return "action(" + strconv.Itoa(int(a)) + ")"
}

// MarshalText encodes the action by name.
func (a Action) MarshalText() ([]byte, error) {
	if int(a) >= len(actionNames) {
		return nil, fmt.Errorf("marshal stop-loss action: invalid value %d", uint8(a))
	}
	return []byte(a.String()), nil
}

// Triggers: why an outcome exits or escalates. An exit's trigger is the
// exit_reason of the order the Monitor sends.
const (
	TriggerStopLoss     = "stop_loss"     // exit: at or past the fixed stop
	TriggerTrailingStop = "trailing_stop" // exit: at or past the trailing stop
	TriggerTakeProfit   = "take_profit"   // exit: at or past the take profit
	TriggerTimeLimit    = "time_limit"    // exit: held at least MaxAge
	TriggerStalePrice   = "stale_price"   // escalate: the price is older than MaxPriceAge, or missing
	TriggerBadFill      = "bad_fill"      // escalate: the exit would fill below MinOutputRatio, or could not be quoted
	TriggerBadData      = "bad_data"      // escalate: a zero, negative or non-finite price, or an invalid rule
)

// Defaults of an Observation's zero fields.
const (
	DefaultMaxPriceAge    = 120 * time.Second
	DefaultMinOutputRatio = 0.95
)

// Observation is what Evaluate knows about a target at one moment.
type Observation struct {
	// Entry is the entry price; Current the price now. Both in USD.
	Entry, Current float64
	// HighWater is the peak since entry, as last recorded (the trough, for a
	// short); 0 when none is recorded yet.
	HighWater float64
	// Side is finance.Long (also when empty) or finance.Short.
	Side string
	// Leverage of a position; 0 is unleveraged. It matters only to a rule
	// with BasisMargin.
	Leverage float64
	// OpenedAt is when the target was entered: a position's OpenedAt, a
	// holding's rule's CreatedAt. Now is the time of the evaluation;
	// PriceAt when Current was observed.
	OpenedAt, Now, PriceAt time.Time
	// MaxPriceAge is how old Current may be; 0 takes DefaultMaxPriceAge.
	MaxPriceAge time.Duration
	// ExitSim is the quote of the exit, when the caller has one; nil skips
	// the fill check.
	ExitSim *finance.Simulation
	// MinOutputRatio is the least an exit's output may be worth relative to
	// its input; 0 takes DefaultMinOutputRatio.
	MinOutputRatio float64
}

// Outcome is Evaluate's answer.
type Outcome struct {
	Action Action `json:"action"`
	// Trigger is why it exits or escalates; empty for Hold.
	Trigger string `json:"trigger,omitempty"`
	// Reason is one sentence a person can act on.
	Reason string `json:"reason"`
	// Stop is the stop price in force; 0 when the rule has none (a time
	// limit) or it could not be computed.
	Stop float64 `json:"stop,omitempty"`
	// HighWater is the peak since entry after this observation (the trough,
	// for a short). It only ever moves toward the price's extreme: never
	// below the observation's HighWater for a long, never above it for a
	// short, and unchanged when the price is stale or unusable.
	HighWater float64 `json:"high_water,omitempty"`
}

// Evaluate applies rule r to observation ob. It never exits on data it
// cannot trust: a stale price, a zero, negative or non-finite price or
// entry, an invalid rule or an unknown side escalate, and so does an exit
// whose simulated fill (ob.ExitSim) is worth less than MinOutputRatio of
// its input. Comparisons are inclusive: a price exactly at the stop exits.
//
// The checks, in order: the rule and the side; the price's age; the
// prices; the stop (fixed from the entry, trailing from the peak); the take
// profit; the time limit; and, for an exit, the fill.
func Evaluate(r Rule, ob Observation) Outcome {
	out := Outcome{Action: Escalate}
	short := ob.Side == finance.Short
	if usableMark(ob.HighWater) {
		out.HighWater = ob.HighWater
	}
	escalate := func(trigger, format string, args ...any) Outcome {
		out.Action, out.Trigger, out.Reason = Escalate, trigger, fmt.Sprintf(format, args...)
		return out
	}
	if err := r.Validate(); err != nil {
		return escalate(TriggerBadData, "the rule cannot be applied: %v", err)
	}
	if ob.Side != "" && ob.Side != finance.Long && !short {
		return escalate(TriggerBadData, "the side is %q; want long or short", clip.String(ob.Side, 40))
	}

	// A stale price neither exits nor holds: it asks.
	maxAge := ob.MaxPriceAge
	if maxAge <= 0 {
		maxAge = DefaultMaxPriceAge
	}
	switch {
	case ob.Now.IsZero():
		return escalate(TriggerStalePrice, "the evaluation has no time, so the price's age is unknown")
	case ob.PriceAt.IsZero():
		return escalate(TriggerStalePrice, "the price has no observation time, so it may be stale; re-fetch it before deciding")
	case ob.Now.Sub(ob.PriceAt) > maxAge:
		return escalate(TriggerStalePrice, "the price is %s old, older than the %s limit: neither exiting nor holding on stale data; re-fetch it",
			ob.Now.Sub(ob.PriceAt).Round(time.Second), maxAge)
	}

	cur, entry := ob.Current, ob.Entry
	if !(cur > 0) || math.IsInf(cur, 0) {
		return escalate(TriggerBadData, "the current price is %v; a usable price is above 0 and finite", cur)
	}
	if math.IsNaN(entry) || math.IsInf(entry, 0) || entry < 0 {
		return escalate(TriggerBadData, "the entry price is %v; a usable price is above 0 and finite", entry)
	}
	if entry == 0 && (r.Kind != Trailing && r.ThresholdPct > 0 || r.TakeProfitPct > 0) {
		return escalate(TriggerBadData, "the %s needs an entry price and none is known", r.describe())
	}
	lev := 1.0
	if r.Basis == BasisMargin {
		switch l := ob.Leverage; {
		case l == 0:
		case l > 0 && !math.IsInf(l, 0):
			lev = l
		default:
			return escalate(TriggerBadData, "the leverage is %v; want a finite number above 0", l)
		}
	}

	// The peak only ratchets: up for a long, down (the trough) for a short.
	hw := cur
	for _, v := range []float64{out.HighWater, entry} {
		if v > 0 && (!short && v > hw || short && v < hw) {
			hw = v
		}
	}
	out.HighWater = hw

	// A move of m in price is a move of m×lev on margin, so a threshold t
	// on margin is a price move of t/lev.
	var trigger, why string
	stopMove := r.ThresholdPct / lev
	switch {
	case r.Kind != Trailing && r.ThresholdPct > 0:
		out.Stop = beyond(entry, stopMove, short)
		trigger = TriggerStopLoss
		why = fmt.Sprintf("%s the entry %s", side(short, "under", "over"), num(entry))
	case r.Kind == Trailing:
		out.Stop = beyond(hw, stopMove, short)
		trigger = TriggerTrailingStop
		why = fmt.Sprintf("%s the %s %s since entry", side(short, "under", "over"), side(short, "peak", "trough"), num(hw))
	}
	if out.Stop > 0 && atOrPast(cur, out.Stop, short) {
		out.Action, out.Trigger = Exit, trigger
		out.Reason = fmt.Sprintf("%s: the price %s is at or %s the stop %s (%s %s%s)", trigger, num(cur),
			side(short, "below", "above"), num(out.Stop), pct(r.ThresholdPct), why, marginNote(r, lev, r.ThresholdPct))
		return checkFill(out, ob)
	}
	if r.TakeProfitPct > 0 {
		tp := beyond(entry, -r.TakeProfitPct/lev, short)
		if tp > 0 && atOrPast(cur, tp, !short) {
			out.Action, out.Trigger = Exit, TriggerTakeProfit
			out.Reason = fmt.Sprintf("take_profit: the price %s is at or %s the take profit %s (%s %s the entry %s%s)", num(cur),
				side(short, "above", "below"), num(tp), pct(r.TakeProfitPct), side(short, "over", "under"), num(entry), marginNote(r, lev, r.TakeProfitPct))
			return checkFill(out, ob)
		}
	}
	if r.MaxAge > 0 {
		if ob.OpenedAt.IsZero() {
			return escalate(TriggerBadData, "the %s needs the time the target was entered and none is known", r.describe())
		}
		if held := ob.Now.Sub(ob.OpenedAt); held >= r.MaxAge {
			out.Action, out.Trigger = Exit, TriggerTimeLimit
			out.Reason = fmt.Sprintf("time_limit: held %s, at or past the %s limit, whatever the profit or loss", held.Round(time.Second), r.MaxAge)
			return checkFill(out, ob)
		}
	}
	out.Action, out.Trigger = Hold, ""
	switch {
	case out.Stop > 0:
		out.Reason = fmt.Sprintf("hold: the price %s is %s the stop %s (%s %s%s)", num(cur), side(short, "above", "below"),
			num(out.Stop), pct(r.ThresholdPct), why, marginNote(r, lev, r.ThresholdPct))
	default:
		out.Reason = fmt.Sprintf("hold: the price %s has not reached the %s", num(cur), r.describe())
	}
	if r.MaxAge > 0 {
		out.Reason += fmt.Sprintf("; held %s of the %s limit", ob.Now.Sub(ob.OpenedAt).Round(time.Second), r.MaxAge)
	}
	return out
}

// checkFill turns an exit whose quoted fill is worth too little into an
// escalation: dumping at a bad price or holding on is a human's call.
func checkFill(out Outcome, ob Observation) Outcome {
	if ob.ExitSim == nil {
		return out
	}
	least := ob.MinOutputRatio
	if !(least > 0) || math.IsInf(least, 0) {
		least = DefaultMinOutputRatio
	}
	if ratio := ob.ExitSim.OutputRatio(); ratio < least {
		out.Action, out.Trigger = Escalate, TriggerBadFill
		out.Reason = fmt.Sprintf("%s, but the exit would return only %s of its value at oracle prices (the least accepted is %s): a human decides whether to sell at that price or hold",
			out.Reason, pct(ratio), pct(least))
	}
	return out
}

// beyond is the price move fraction f from p against the holder: below p
// for a long, above it for a short. A negative f moves in the holder's
// favour.
func beyond(p, f float64, short bool) float64 {
	if short {
		return p * (1 + f)
	}
	return p * (1 - f)
}

// atOrPast reports whether cur has reached level going down (up when up is
// true), counting a price within a rounding error of level as reached.
func atOrPast(cur, level float64, up bool) bool {
	if nearly(cur, level) {
		return true
	}
	if up {
		return cur >= level
	}
	return cur <= level
}

// nearly reports whether a and b differ by no more than float64 rounding in
// the few operations that produced them (1e-9 relative).
func nearly(a, b float64) bool {
	return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b))
}

// usableMark reports whether a recorded high-water mark can be used.
func usableMark(v float64) bool { return v > 0 && !math.IsInf(v, 0) }

func side(short bool, long, shortWord string) string {
	if short {
		return shortWord
	}
	return long
}

// marginNote explains a margin-basis fraction f as the price move it is.
func marginNote(r Rule, lev, f float64) string {
	if r.Basis != BasisMargin || lev == 1 {
		return ""
	}
	return fmt.Sprintf(", on margin at %sx: a %s price move", num(lev), pct(f/lev))
}

func num(f float64) string { return strconv.FormatFloat(f, 'g', 8, 64) }

func pct(f float64) string { return strconv.FormatFloat(f*100, 'g', 4, 64) + " %" }
