package config

import (
	"reflect"
	"testing"
	"time"

	"github.com/agentwarden/warden"
)

func TestStopLossSection(t *testing.T) {
	d := mustParse(t, "version: 1\n").Policy.StopLoss
	want := StopLoss{Enabled: true, PollInterval: 10 * time.Second, MaxPriceAge: 2 * time.Minute, KillSwitchExits: "ask"}
	if !reflect.DeepEqual(d, want) {
		t.Fatalf("defaults = %+v, want %+v", d, want)
	}
	tests := []struct {
		name, body string
		want       StopRule
	}{
		{"fixed percent", "{type: fixed_percent, threshold_pct: 0.05}", StopRule{Type: "fixed_percent", ThresholdPct: 0.05}},
		{"trailing with take profit", "{type: Trailing, threshold_pct: 1.0, take_profit_pct: 3}", StopRule{Type: "trailing", ThresholdPct: 1, TakeProfitPct: 3}},
		{"time based", "{type: time_based, max_age_ms: 86400000}", StopRule{Type: "time_based", MaxAge: 24 * time.Hour}},
		{"time based with threshold", "{type: time_based, threshold_pct: 0.2, max_age_ms: 1}", StopRule{Type: "time_based", ThresholdPct: 0.2, MaxAge: time.Millisecond}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := mustParse(t, "version: 1\nstopLoss:\n  defaultRule: "+tt.body+"\n")
			if len(l.Problems) != 0 {
				t.Fatalf("problems: %v", l.Problems)
			}
			if got := l.Policy.StopLoss.Default; got == nil || *got != tt.want {
				t.Errorf("defaultRule %s = %+v, want %+v", tt.body, got, tt.want)
			}
		})
	}
}

func TestStopLossSectionProblems(t *testing.T) {
	testRefusals(t, "stopLoss", []badBody{
		{"threshold above 1", "defaultRule: {type: fixed_percent, threshold_pct: 1.5}", "stopLoss.defaultRule.threshold_pct", 3, "1.5 is too large; want a fraction of the price above 0 and at most 1.0"},
		{"threshold missing", "defaultRule: {type: trailing}", "stopLoss.defaultRule.threshold_pct", 3, "0 is too small"},
		{"negative threshold", "defaultRule:\n  type: trailing\n  threshold_pct: -0.1", "stopLoss.defaultRule.threshold_pct", 5, "-0.1 is negative"},
		{"negative take profit", "defaultRule: {type: trailing, threshold_pct: 0.1, take_profit_pct: -1}", "stopLoss.defaultRule.take_profit_pct", 3, "-1 is negative"},
		{"time based without age", "defaultRule: {type: time_based}", "stopLoss.defaultRule.max_age_ms", 3, "a time_based rule needs max_age_ms above 0"},
		{"negative age", "defaultRule: {type: trailing, threshold_pct: 0.1, max_age_ms: -5}", "stopLoss.defaultRule.max_age_ms", 3, "-5 is negative"},
		{"unknown type", "defaultRule: {type: moonshot, threshold_pct: 0.1}", "stopLoss.defaultRule.type", 3, `"moonshot" is not a stop rule type; want one of fixed_percent, trailing, time_based`},
		{"type missing", "defaultRule: {threshold_pct: 0.1}", "stopLoss.defaultRule.type", 3, "type is missing"},
		{"null rule", "defaultRule:", "stopLoss.defaultRule", 3, "got an empty value; want a mapping such as {type: trailing, threshold_pct: 0.1}"},
		{"rule as a word", "defaultRule: trailing", "stopLoss.defaultRule", 3, `got "trailing" (a string); want a mapping`},
		{"unknown rule key", "defaultRule: {type: trailing, thresholdPct: 0.1}", "stopLoss.defaultRule.thresholdPct", 3, "unknown key; did you mean stopLoss.defaultRule.threshold_pct?"},
		{"poll too fast", "pollIntervalMs: 999", "stopLoss.pollIntervalMs", 3, "999 is too small; want a whole number of milliseconds from 1000 (1s)"},
		{"poll as a duration", "pollIntervalMs: 10s", "stopLoss.pollIntervalMs", 3, `got "10s" (a string); want a whole number of milliseconds`},
		{"price age 0", "maxPriceAgeMs: 0", "stopLoss.maxPriceAgeMs", 3, "0 is too small"},
		{"kill switch exits allow", "killSwitchExits: allow", "stopLoss.killSwitchExits", 3, `"allow" is not allowed; want ask`},
		{"enabled as a word", "enabled: yes", "stopLoss.enabled", 3, `got "yes" (a string); want true or false`},
		{"unknown key", "pollInterval: 1000", "stopLoss.pollInterval", 3, "unknown key; did you mean stopLoss.pollIntervalMs?"},
	}, func(p *Policy) any { return p.StopLoss })
}

func TestStopLossDefaultRuleGetAndSet(t *testing.T) {
	l := mustParse(t, string(DefaultFile()))
	if v, err := l.Get("stopLoss.defaultRule"); err != nil || v != nil {
		t.Errorf("Get(stopLoss.defaultRule) = %v, %v; want nil: not set", v, err)
	}
	_, err := l.Get("stopLoss.defaultRule.type")
	wantCode(t, err, warden.ENotFound, "stopLoss.defaultRule is not set")

	p := writeFile(t, DefaultFile())
	err = Set(p, "stopLoss.defaultRule.type", "trailing")
	wantCode(t, err, warden.EInvalid, "stopLoss.defaultRule.threshold_pct: 0 is too small")
	if err := Set(p, "stopLoss.defaultRule", `{"type": "trailing", "threshold_pct": 0.1}`); err != nil {
		t.Fatal(err)
	}
	if err := Set(p, "stopLoss.defaultRule.threshold_pct", "0.2"); err != nil {
		t.Fatal(err)
	}
	err = Set(p, "stopLoss.defaultRule.threshold_pct", "1.5")
	wantCode(t, err, warden.EInvalid, "cannot set stopLoss.defaultRule.threshold_pct: 1.5 is too large")
	l, err = Load(p)
	if err != nil || len(l.Problems) != 0 {
		t.Fatalf("Load = %v, %v", err, l.Problems)
	}
	if r := l.Policy.StopLoss.Default; r == nil || *r != (StopRule{Type: "trailing", ThresholdPct: 0.2}) {
		t.Errorf("defaultRule = %+v", r)
	}
	if v, err := l.Get("stopLoss.defaultRule.type"); err != nil || v != "trailing" {
		t.Errorf("Get(stopLoss.defaultRule.type) = %v, %v", v, err)
	}
}
