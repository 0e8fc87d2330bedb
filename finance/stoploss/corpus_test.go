package stoploss_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"math"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/finance"
	"github.com/agentwarden/warden/finance/stoploss"
)

// corpusPath is the shared research corpus, relative to this package.
const corpusPath = "../../../shared/corpus/finance-signing-cases.jsonl"

// exitCase is a corpus case of action monitor.evaluate_exit, decoded
// strictly: a field this mapping does not know fails the test rather than
// being ignored.
type exitCase struct {
	Module string `json:"module"`
	Action string `json:"action"`
	Rule   struct {
		Type     string   `json:"type"`
		StopPct  *float64 `json:"stop_pct"`
		TrailPct *float64 `json:"trail_pct"`
		TPPct    *float64 `json:"tp_pct"`
		MaxHoldH *float64 `json:"max_hold_h"`
		Basis    string   `json:"basis"`
	} `json:"rule"`
	Position struct {
		Entry      float64   `json:"entry"`
		Current    float64   `json:"current"`
		HighWater  float64   `json:"high_water"`
		PricePath  []float64 `json:"price_path"`
		Leverage   float64   `json:"leverage"`
		Side       string    `json:"side"`
		OpenedHAgo *float64  `json:"opened_h_ago"`
		SizeUSD    float64   `json:"size_usd"`
	} `json:"position"`
	Price struct {
		AgeS    float64 `json:"age_s"`
		MaxAgeS float64 `json:"max_age_s"`
	} `json:"price"`
	KillSwitch     bool `json:"kill_switch"`
	ExitSimulation *struct {
		OK                bool    `json:"ok"`
		SlippageTolerance float64 `json:"slippage_tolerance"`
		OutputValueRatio  float64 `json:"output_value_ratio"`
	} `json:"exit_simulation"`
}

type corpusCase struct {
	Name   string
	Expect string
	Why    string
	Input  exitCase
}

// loadExitCases reads the corpus's monitor.evaluate_exit cases; a missing
// corpus fails the test.
func loadExitCases(t testing.TB) []corpusCase {
	t.Helper()
	data, err := os.ReadFile(corpusPath)
	if err != nil {
		t.Fatalf("read the stop-loss corpus: %v (the cases live in the shared research corpus next to the repository)", err)
	}
	var out []corpusCase
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for line := 1; sc.Scan(); line++ {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var raw struct {
			Case   string          `json:"case"`
			Input  json.RawMessage `json:"input"`
			Expect string          `json:"expect"`
			Why    string          `json:"why"`
		}
		if err := json.Unmarshal(sc.Bytes(), &raw); err != nil {
			t.Fatalf("%s:%d: %v", corpusPath, line, err)
		}
		var head struct {
			Action string `json:"action"`
		}
		if err := json.Unmarshal(raw.Input, &head); err != nil || head.Action != "monitor.evaluate_exit" {
			continue
		}
		c := corpusCase{Name: raw.Case, Expect: raw.Expect, Why: raw.Why}
		dec := json.NewDecoder(bytes.NewReader(raw.Input))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&c.Input); err != nil {
			t.Fatalf("%s:%d (%s): the case has input this test does not map: %v", corpusPath, line, raw.Case, err)
		}
		out = append(out, c)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(out) == 0 {
		t.Fatalf("%s holds no monitor.evaluate_exit case", corpusPath)
	}
	return out
}

// mapCase turns a corpus case into a rule and the observations to evaluate
// in turn: the price path, if any, then the current price.
func mapCase(t testing.TB, c corpusCase) (stoploss.Rule, []stoploss.Observation) {
	t.Helper()
	in := c.Input
	r := stoploss.Rule{Target: "corpus:" + c.Name, Basis: in.Rule.Basis}
	need := func(p *float64, name string) float64 {
		if p == nil {
			t.Fatalf("case %s: a %s rule without %s", c.Name, in.Rule.Type, name)
		}
		return *p
	}
	switch in.Rule.Type {
	case "fixed_pct":
		r.Kind, r.ThresholdPct = stoploss.FixedPercent, need(in.Rule.StopPct, "stop_pct")
	case "trailing_pct":
		r.Kind, r.ThresholdPct = stoploss.Trailing, need(in.Rule.TrailPct, "trail_pct")
	case "time":
		r.Kind, r.MaxAge = stoploss.TimeBased, time.Duration(need(in.Rule.MaxHoldH, "max_hold_h")*float64(time.Hour))
	case "take_profit":
		// A take profit only: a fixed rule whose stop is a total loss (for a
		// long, a price of 0, which never comes).
		r.Kind, r.ThresholdPct, r.TakeProfitPct = stoploss.FixedPercent, 1, need(in.Rule.TPPct, "tp_pct")
	default:
		t.Fatalf("case %s: rule type %q has no mapping", c.Name, in.Rule.Type)
	}
	if in.KillSwitch {
		t.Fatalf("case %s: the kill switch is the gate's, not the monitor's evaluation; this case needs the gate", c.Name)
	}
	now := t0
	ob := stoploss.Observation{
		Entry: in.Position.Entry, HighWater: in.Position.HighWater, Side: in.Position.Side, Leverage: in.Position.Leverage,
		Now: now, OpenedAt: now.Add(-time.Hour),
		PriceAt:     now.Add(-time.Duration(in.Price.AgeS * float64(time.Second))),
		MaxPriceAge: time.Duration(in.Price.MaxAgeS * float64(time.Second)),
	}
	if in.Position.OpenedHAgo != nil {
		ob.OpenedAt = now.Add(-time.Duration(*in.Position.OpenedHAgo * float64(time.Hour)))
	}
	var obs []stoploss.Observation
	for _, p := range in.Position.PricePath {
		step := ob
		step.Current = p
		obs = append(obs, step)
	}
	final := ob
	final.Current = in.Position.Current
	if s := in.ExitSimulation; s != nil {
		if !s.OK {
			t.Fatalf("case %s: a failed exit simulation has no mapping", c.Name)
		}
		size := in.Position.SizeUSD
		if size == 0 {
			size = 1000
		}
		final.ExitSim = &finance.Simulation{InputValueUSD: finance.USDOf(size), OutputValueUSD: finance.USDOf(size * s.OutputValueRatio)}
	}
	return r, append(obs, final)
}

// TestCorpus evaluates every monitor.evaluate_exit case of the research
// corpus: allow is Exit, deny is Hold, ask is Escalate.
func TestCorpus(t *testing.T) {
	want := map[string]stoploss.Action{"allow": stoploss.Exit, "deny": stoploss.Hold, "ask": stoploss.Escalate}
	for _, c := range loadExitCases(t) {
		t.Run(c.Name, func(t *testing.T) {
			action, ok := want[c.Expect]
			if !ok {
				t.Fatalf("expect %q has no mapping", c.Expect)
			}
			r, obs := mapCase(t, c)
			var out stoploss.Outcome
			hw := obs[0].HighWater
			for _, ob := range obs {
				ob.HighWater = hw
				out = stoploss.Evaluate(r, ob)
				hw = out.HighWater
			}
			if out.Action != action {
				t.Errorf("Evaluate = %s (%s: %s), want %s (%s): %s", out.Action, out.Trigger, out.Reason, action, c.Expect, c.Why)
			}
		})
	}
}

// FuzzEvaluate checks, for any rule and observation, that Evaluate never
// panics, never exits on a stale price, bad data or a bad fill, and never
// lowers a long's peak nor raises a short's trough.
func FuzzEvaluate(f *testing.F) {
	f.Add(uint8(0), 0.1, 0.0, int64(0), false, 100.0, 89.9, 0.0, 0.0, false, int64(5), int64(120), int64(60), 0.0, false)
	f.Add(uint8(1), 0.05, 0.0, int64(0), false, 100.0, 113.9, 120.0, 0.0, false, int64(5), int64(120), int64(60), 0.0, false)
	f.Add(uint8(2), 0.0, 0.0, int64(24*60), false, 100.0, 99.0, 0.0, 0.0, false, int64(5), int64(120), int64(25*60), 0.0, false)
	f.Add(uint8(0), 1.0, 0.2, int64(0), false, 100.0, 121.0, 0.0, 0.0, false, int64(5), int64(120), int64(60), 0.0, false)
	f.Add(uint8(0), 0.1, 0.0, int64(0), true, 100.0, 98.9, 0.0, 10.0, false, int64(5), int64(120), int64(60), 0.0, false)
	f.Add(uint8(0), 0.1, 0.0, int64(0), false, 100.0, 85.0, 0.0, 0.0, false, int64(600), int64(120), int64(60), 0.0, false)
	f.Add(uint8(0), 0.1, 0.0, int64(0), false, 100.0, 70.0, 0.0, 0.0, false, int64(5), int64(120), int64(60), 0.9, true)
	f.Add(uint8(1), 0.05, 0.3, int64(60), true, 100.0, 84.0, 80.0, 3.0, true, int64(1), int64(0), int64(0), 1.0, true)
	f.Add(uint8(3), math.NaN(), math.Inf(1), int64(-1), true, math.NaN(), 0.0, math.Inf(-1), math.NaN(), true, int64(-5), int64(-1), int64(-7), math.NaN(), true)
	f.Fuzz(func(t *testing.T, kind uint8, threshold, tp float64, maxAgeMin int64, margin bool, entry, current, highWater, leverage float64,
		short bool, priceAgeS, maxPriceAgeS, openedAgoMin int64, ratio float64, hasSim bool) {
		kinds := []stoploss.Kind{stoploss.FixedPercent, stoploss.Trailing, stoploss.TimeBased, "bogus"}
		r := stoploss.Rule{Target: "pos-fuzz", Kind: kinds[int(kind)%len(kinds)], ThresholdPct: threshold, TakeProfitPct: tp,
			MaxAge: time.Duration(maxAgeMin%(1<<20)) * time.Minute}
		if margin {
			r.Basis = stoploss.BasisMargin
		}
		ob := stoploss.Observation{Entry: entry, Current: current, HighWater: highWater, Leverage: leverage,
			Now: t0, PriceAt: t0.Add(-time.Duration(priceAgeS%(1<<30)) * time.Second), MaxPriceAge: time.Duration(maxPriceAgeS%(1<<30)) * time.Second,
			OpenedAt: t0.Add(-time.Duration(openedAgoMin%(1<<20)) * time.Minute)}
		if short {
			ob.Side = finance.Short
		}
		if hasSim {
			in := warden.USD(1000 * warden.MicrosPerDollar)
			ob.ExitSim = &finance.Simulation{InputValueUSD: in, OutputValueUSD: finance.USDOf(ratio * 1000)}
		}
		out := stoploss.Evaluate(r, ob)

		if !slices.Contains([]stoploss.Action{stoploss.Escalate, stoploss.Hold, stoploss.Exit}, out.Action) {
			t.Fatalf("Evaluate = action %d", out.Action)
		}
		if out.Reason == "" {
			t.Errorf("Evaluate gave no reason")
		}
		maxAge := ob.MaxPriceAge
		if maxAge <= 0 {
			maxAge = stoploss.DefaultMaxPriceAge
		}
		stale := t0.Sub(ob.PriceAt) > maxAge
		if out.Action == stoploss.Exit {
			switch {
			case stale:
				t.Errorf("Evaluate exits on a price %s old (limit %s): %s", t0.Sub(ob.PriceAt), maxAge, out.Reason)
			case !(current > 0) || math.IsInf(current, 0):
				t.Errorf("Evaluate exits at the price %v: %s", current, out.Reason)
			case r.Validate() != nil:
				t.Errorf("Evaluate exits on an invalid rule (%v): %s", r.Validate(), out.Reason)
			case hasSim && ob.ExitSim.OutputRatio() < stoploss.DefaultMinOutputRatio:
				t.Errorf("Evaluate exits with an output ratio of %v: %s", ob.ExitSim.OutputRatio(), out.Reason)
			case !slices.Contains([]string{stoploss.TriggerStopLoss, stoploss.TriggerTrailingStop, stoploss.TriggerTakeProfit, stoploss.TriggerTimeLimit}, out.Trigger):
				t.Errorf("Evaluate exits with trigger %q", out.Trigger)
			}
		}
		if stale && out.Action != stoploss.Escalate {
			t.Errorf("Evaluate on a stale price = %s, want escalate", out.Action)
		}
		if highWater > 0 && !math.IsInf(highWater, 0) {
			if !short && out.HighWater < highWater {
				t.Errorf("the peak fell from %v to %v", highWater, out.HighWater)
			}
			if short && out.HighWater > highWater {
				t.Errorf("the trough rose from %v to %v", highWater, out.HighWater)
			}
		}
		if math.IsNaN(out.HighWater) || math.IsInf(out.HighWater, 0) || out.HighWater < 0 {
			t.Errorf("Evaluate high water = %v", out.HighWater)
		}
	})
}
