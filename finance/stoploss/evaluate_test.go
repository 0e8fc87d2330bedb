package stoploss_test

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/finance"
	"github.com/agentwarden/warden/finance/stoploss"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// fresh is an observation of a long, entered at 100 an hour ago, priced
// 5 s ago.
func fresh(current float64) stoploss.Observation {
	return stoploss.Observation{Entry: 100, Current: current, Now: t0, PriceAt: t0.Add(-5 * time.Second),
		OpenedAt: t0.Add(-time.Hour), MaxPriceAge: 120 * time.Second}
}

func sim(ratio float64) *finance.Simulation {
	return &finance.Simulation{InputValueUSD: 1000 * warden.MicrosPerDollar, OutputValueUSD: warden.USD(ratio * 1000 * warden.MicrosPerDollar)}
}

func TestEvaluate(t *testing.T) {
	fixed := stoploss.Rule{Target: "pos-1", Kind: stoploss.FixedPercent, ThresholdPct: 0.10}
	trailing := stoploss.Rule{Target: "pos-1", Kind: stoploss.Trailing, ThresholdPct: 0.05}
	takeProfit := stoploss.Rule{Target: "pos-1", Kind: stoploss.FixedPercent, ThresholdPct: 1, TakeProfitPct: 0.20}
	timed := stoploss.Rule{Target: "pos-1", Kind: stoploss.TimeBased, MaxAge: 24 * time.Hour}
	margin := fixed
	margin.Basis = stoploss.BasisMargin
	with := func(ob stoploss.Observation, edit func(*stoploss.Observation)) stoploss.Observation {
		edit(&ob)
		return ob
	}
	for _, tc := range []struct {
		name      string
		rule      stoploss.Rule
		ob        stoploss.Observation
		action    stoploss.Action
		trigger   string
		stop      float64 // checked when above 0
		highWater float64 // checked when above 0
	}{
		{name: "fixed above the stop holds", rule: fixed, ob: fresh(90.5), action: stoploss.Hold, stop: 90, highWater: 100},
		{name: "fixed exactly at the stop exits", rule: fixed, ob: fresh(90), action: stoploss.Exit, trigger: stoploss.TriggerStopLoss, stop: 90},
		{name: "fixed below the stop exits", rule: fixed, ob: fresh(89.9), action: stoploss.Exit, trigger: stoploss.TriggerStopLoss},
		{name: "fixed short below the stop holds", rule: fixed, ob: with(fresh(109.9), func(o *stoploss.Observation) { o.Side = finance.Short }),
			action: stoploss.Hold, stop: 110, highWater: 100},
		{name: "fixed short at the stop exits", rule: fixed, ob: with(fresh(110), func(o *stoploss.Observation) { o.Side = finance.Short }),
			action: stoploss.Exit, trigger: stoploss.TriggerStopLoss, stop: 110},
		{name: "trailing above the stop holds", rule: trailing, ob: with(fresh(114.1), func(o *stoploss.Observation) { o.HighWater = 120 }),
			action: stoploss.Hold, stop: 114, highWater: 120},
		{name: "trailing at the stop exits", rule: trailing, ob: with(fresh(114), func(o *stoploss.Observation) { o.HighWater = 120 }),
			action: stoploss.Exit, trigger: stoploss.TriggerTrailingStop, stop: 114},
		{name: "trailing below the stop exits", rule: trailing, ob: with(fresh(113.9), func(o *stoploss.Observation) { o.HighWater = 120 }),
			action: stoploss.Exit, trigger: stoploss.TriggerTrailingStop, stop: 114},
		{name: "trailing peak rises with the price", rule: trailing, ob: with(fresh(130), func(o *stoploss.Observation) { o.HighWater = 120 }),
			action: stoploss.Hold, stop: 123.5, highWater: 130},
		{name: "trailing peak starts at the entry", rule: trailing, ob: fresh(96), action: stoploss.Hold, stop: 95, highWater: 100},
		{name: "trailing without an entry starts at the price", rule: trailing, ob: with(fresh(50), func(o *stoploss.Observation) { o.Entry = 0 }),
			action: stoploss.Hold, stop: 47.5, highWater: 50},
		{name: "trailing short trough falls", rule: trailing, ob: with(fresh(78), func(o *stoploss.Observation) { o.Side = finance.Short; o.HighWater = 80 }),
			action: stoploss.Hold, stop: 81.9, highWater: 78},
		{name: "trailing short at the stop exits", rule: trailing, ob: with(fresh(84), func(o *stoploss.Observation) { o.Side = finance.Short; o.HighWater = 80 }),
			action: stoploss.Exit, trigger: stoploss.TriggerTrailingStop, stop: 84, highWater: 80},
		{name: "take profit reached", rule: takeProfit, ob: fresh(120), action: stoploss.Exit, trigger: stoploss.TriggerTakeProfit},
		{name: "take profit not reached", rule: takeProfit, ob: fresh(119.99), action: stoploss.Hold},
		{name: "take profit short", rule: takeProfit, ob: with(fresh(80), func(o *stoploss.Observation) { o.Side = finance.Short }),
			action: stoploss.Exit, trigger: stoploss.TriggerTakeProfit},
		{name: "a 100 % stop on a short fires when the price doubles", rule: takeProfit, ob: with(fresh(200), func(o *stoploss.Observation) { o.Side = finance.Short }),
			action: stoploss.Exit, trigger: stoploss.TriggerStopLoss, stop: 200},
		{name: "time limit reached exactly", rule: timed, ob: with(fresh(99), func(o *stoploss.Observation) { o.OpenedAt = t0.Add(-24 * time.Hour) }),
			action: stoploss.Exit, trigger: stoploss.TriggerTimeLimit},
		{name: "time limit not reached", rule: timed, ob: with(fresh(99), func(o *stoploss.Observation) { o.OpenedAt = t0.Add(-24*time.Hour + time.Second) }),
			action: stoploss.Hold},
		{name: "time limit on a trailing rule", rule: stoploss.Rule{Target: "pos-1", Kind: stoploss.Trailing, ThresholdPct: 0.05, MaxAge: time.Hour},
			ob: fresh(101), action: stoploss.Exit, trigger: stoploss.TriggerTimeLimit},
		{name: "time-based rule with a stop", rule: stoploss.Rule{Target: "pos-1", Kind: stoploss.TimeBased, ThresholdPct: 0.1, MaxAge: 48 * time.Hour},
			ob: fresh(89), action: stoploss.Exit, trigger: stoploss.TriggerStopLoss, stop: 90},
		{name: "time limit without an opening time escalates", rule: timed, ob: with(fresh(99), func(o *stoploss.Observation) { o.OpenedAt = time.Time{} }),
			action: stoploss.Escalate, trigger: stoploss.TriggerBadData},
		{name: "margin stop at 10x fires on a 1 % move", rule: margin, ob: with(fresh(99), func(o *stoploss.Observation) { o.Leverage = 10 }),
			action: stoploss.Exit, trigger: stoploss.TriggerStopLoss, stop: 99},
		{name: "margin stop at 10x holds above it", rule: margin, ob: with(fresh(99.1), func(o *stoploss.Observation) { o.Leverage = 10 }),
			action: stoploss.Hold, stop: 99},
		{name: "margin stop short at 5x", rule: margin, ob: with(fresh(102), func(o *stoploss.Observation) { o.Leverage = 5; o.Side = finance.Short }),
			action: stoploss.Exit, trigger: stoploss.TriggerStopLoss, stop: 102},
		{name: "price basis ignores leverage", rule: fixed, ob: with(fresh(99), func(o *stoploss.Observation) { o.Leverage = 10 }),
			action: stoploss.Hold, stop: 90},
		{name: "margin without leverage is the price", rule: margin, ob: fresh(91), action: stoploss.Hold, stop: 90},
		{name: "margin with NaN leverage escalates", rule: margin, ob: with(fresh(91), func(o *stoploss.Observation) { o.Leverage = math.NaN() }),
			action: stoploss.Escalate, trigger: stoploss.TriggerBadData},
		{name: "stale price escalates", rule: fixed, ob: with(fresh(50), func(o *stoploss.Observation) { o.PriceAt = t0.Add(-121 * time.Second) }),
			action: stoploss.Escalate, trigger: stoploss.TriggerStalePrice},
		{name: "price exactly at the age limit is fresh", rule: fixed, ob: with(fresh(50), func(o *stoploss.Observation) { o.PriceAt = t0.Add(-120 * time.Second) }),
			action: stoploss.Exit, trigger: stoploss.TriggerStopLoss},
		{name: "stale price leaves the peak", rule: trailing, ob: with(fresh(150), func(o *stoploss.Observation) { o.HighWater = 120; o.PriceAt = t0.Add(-time.Hour) }),
			action: stoploss.Escalate, trigger: stoploss.TriggerStalePrice, highWater: 120},
		{name: "default max age", rule: fixed, ob: with(fresh(95), func(o *stoploss.Observation) { o.MaxPriceAge = 0; o.PriceAt = t0.Add(-119 * time.Second) }),
			action: stoploss.Hold},
		{name: "default max age exceeded", rule: fixed, ob: with(fresh(95), func(o *stoploss.Observation) { o.MaxPriceAge = 0; o.PriceAt = t0.Add(-121 * time.Second) }),
			action: stoploss.Escalate, trigger: stoploss.TriggerStalePrice},
		{name: "price without a time escalates", rule: fixed, ob: with(fresh(50), func(o *stoploss.Observation) { o.PriceAt = time.Time{} }),
			action: stoploss.Escalate, trigger: stoploss.TriggerStalePrice},
		{name: "evaluation without a time escalates", rule: fixed, ob: with(fresh(50), func(o *stoploss.Observation) { o.Now = time.Time{} }),
			action: stoploss.Escalate, trigger: stoploss.TriggerStalePrice},
		{name: "zero price escalates", rule: fixed, ob: fresh(0), action: stoploss.Escalate, trigger: stoploss.TriggerBadData},
		{name: "negative price escalates", rule: fixed, ob: fresh(-5), action: stoploss.Escalate, trigger: stoploss.TriggerBadData},
		{name: "NaN price escalates", rule: fixed, ob: fresh(math.NaN()), action: stoploss.Escalate, trigger: stoploss.TriggerBadData},
		{name: "infinite price escalates", rule: fixed, ob: fresh(math.Inf(1)), action: stoploss.Escalate, trigger: stoploss.TriggerBadData},
		{name: "NaN entry escalates", rule: fixed, ob: with(fresh(80), func(o *stoploss.Observation) { o.Entry = math.NaN() }),
			action: stoploss.Escalate, trigger: stoploss.TriggerBadData},
		{name: "fixed without an entry escalates", rule: fixed, ob: with(fresh(80), func(o *stoploss.Observation) { o.Entry = 0 }),
			action: stoploss.Escalate, trigger: stoploss.TriggerBadData},
		{name: "NaN peak is ignored", rule: trailing, ob: with(fresh(110), func(o *stoploss.Observation) { o.HighWater = math.NaN() }),
			action: stoploss.Hold, highWater: 110},
		{name: "invalid rule escalates", rule: stoploss.Rule{Target: "pos-1", Kind: stoploss.FixedPercent, ThresholdPct: 10}, ob: fresh(50),
			action: stoploss.Escalate, trigger: stoploss.TriggerBadData},
		{name: "unknown side escalates", rule: fixed, ob: with(fresh(50), func(o *stoploss.Observation) { o.Side = "sideways" }),
			action: stoploss.Escalate, trigger: stoploss.TriggerBadData},
		{name: "bad exit fill escalates", rule: fixed, ob: with(fresh(70), func(o *stoploss.Observation) { o.ExitSim = sim(0.90) }),
			action: stoploss.Escalate, trigger: stoploss.TriggerBadFill},
		{name: "exit fill at the minimum exits", rule: fixed, ob: with(fresh(70), func(o *stoploss.Observation) { o.ExitSim = sim(0.95) }),
			action: stoploss.Exit, trigger: stoploss.TriggerStopLoss},
		{name: "stricter minimum", rule: fixed, ob: with(fresh(70), func(o *stoploss.Observation) { o.ExitSim = sim(0.97); o.MinOutputRatio = 0.98 }),
			action: stoploss.Escalate, trigger: stoploss.TriggerBadFill},
		{name: "empty simulation escalates", rule: fixed, ob: with(fresh(70), func(o *stoploss.Observation) { o.ExitSim = &finance.Simulation{} }),
			action: stoploss.Escalate, trigger: stoploss.TriggerBadFill},
		{name: "a bad fill does not matter to a hold", rule: fixed, ob: with(fresh(95), func(o *stoploss.Observation) { o.ExitSim = sim(0.5) }),
			action: stoploss.Hold},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := stoploss.Evaluate(tc.rule, tc.ob)
			if got.Action != tc.action || got.Trigger != tc.trigger {
				t.Fatalf("Evaluate = %s/%s (%s), want %s/%s", got.Action, got.Trigger, got.Reason, tc.action, tc.trigger)
			}
			if got.Reason == "" {
				t.Errorf("Evaluate gave no reason")
			}
			if tc.stop > 0 && math.Abs(got.Stop-tc.stop) > 1e-9 {
				t.Errorf("Evaluate stop = %v, want %v", got.Stop, tc.stop)
			}
			if tc.highWater > 0 && got.HighWater != tc.highWater {
				t.Errorf("Evaluate high water = %v, want %v", got.HighWater, tc.highWater)
			}
		})
	}
}

func TestEvaluateReasons(t *testing.T) {
	r := stoploss.Rule{Target: "pos-1", Kind: stoploss.Trailing, ThresholdPct: 0.05}
	ob := fresh(113.9)
	ob.HighWater = 120
	got := stoploss.Evaluate(r, ob)
	for _, want := range []string{"trailing_stop", "113.9", "114", "5 %", "peak 120"} {
		if !strings.Contains(got.Reason, want) {
			t.Errorf("reason %q lacks %q", got.Reason, want)
		}
	}
	ob = fresh(70)
	ob.ExitSim = sim(0.9)
	got = stoploss.Evaluate(stoploss.Rule{Target: "pos-1", Kind: stoploss.FixedPercent, ThresholdPct: 0.1}, ob)
	for _, want := range []string{"stop_loss", "90 %", "95 %", "human"} {
		if !strings.Contains(got.Reason, want) {
			t.Errorf("reason %q lacks %q", got.Reason, want)
		}
	}
}

// TestTrailingPath walks a price path: the stop follows the peak up, never
// down, and fires at exactly the tick that reaches it.
func TestTrailingPath(t *testing.T) {
	r := stoploss.Rule{Target: "pos-1", Kind: stoploss.Trailing, ThresholdPct: 0.05}
	var peak float64
	for i, step := range []struct {
		price  float64
		action stoploss.Action
		peak   float64
	}{
		{100, stoploss.Hold, 100},
		{110, stoploss.Hold, 110},
		{120, stoploss.Hold, 120},
		{116, stoploss.Hold, 120},
		{114.1, stoploss.Hold, 120},
		{113.9, stoploss.Exit, 120},
	} {
		ob := fresh(step.price)
		ob.HighWater = peak
		got := stoploss.Evaluate(r, ob)
		if got.Action != step.action || got.HighWater != step.peak {
			t.Fatalf("tick %d at %v: %s with peak %v (%s), want %s with peak %v", i, step.price, got.Action, got.HighWater, got.Reason, step.action, step.peak)
		}
		peak = got.HighWater
	}
}

func TestActionText(t *testing.T) {
	for a, want := range map[stoploss.Action]string{stoploss.Escalate: "escalate", stoploss.Hold: "hold", stoploss.Exit: "exit"} {
		if b, err := a.MarshalText(); err != nil || string(b) != want || a.String() != want {
			t.Errorf("Action(%d) text = %q, %v; want %q", a, b, err, want)
		}
	}
	if _, err := stoploss.Action(9).MarshalText(); err == nil {
		t.Errorf("MarshalText of an unknown action = nil error, want one")
	}
	var zero stoploss.Outcome
	if zero.Action != stoploss.Escalate {
		t.Errorf("the zero Outcome's action is %s, want escalate", zero.Action)
	}
}

func BenchmarkEvaluate(b *testing.B) {
	r := stoploss.Rule{Target: "pos-1", Kind: stoploss.Trailing, ThresholdPct: 0.05, TakeProfitPct: 0.5, MaxAge: 48 * time.Hour}
	ob := fresh(118)
	ob.HighWater = 120
	for b.Loop() {
		stoploss.Evaluate(r, ob)
	}
}
