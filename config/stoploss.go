package config

import (
	"slices"
	"strings"
	"time"
)

// stopLossFile is the stopLoss section as written in warden.yaml.
type stopLossFile struct {
	Enabled         bool          `yaml:"enabled"`
	PollIntervalMs  int64         `yaml:"pollIntervalMs" want:"a whole number of milliseconds from 1000 (1s) to 3600000 (1h)"`
	MaxPriceAgeMs   int64         `yaml:"maxPriceAgeMs" want:"a whole number of milliseconds from 1 to 86400000 (24h)"`
	KillSwitchExits string        `yaml:"killSwitchExits" want:"ask or deny"`
	DefaultRule     *stopRuleFile `yaml:"defaultRule" want:"a mapping such as {type: trailing, threshold_pct: 0.1}"`
}

// stopRuleFile is a stop rule as written in warden.yaml.
type stopRuleFile struct {
	Type          string  `yaml:"type" want:"one of fixed_percent, trailing, time_based"`
	ThresholdPct  float64 `yaml:"threshold_pct" want:"a fraction above 0 and at most 1, e.g. 0.1 for 10%"`
	TakeProfitPct float64 `yaml:"take_profit_pct" want:"a fraction from 0 to 100, e.g. 0.25 for 25% (0 for none)"`
	MaxAgeMs      int64   `yaml:"max_age_ms" want:"a whole number of milliseconds (0 for none)"`
}

// StopLoss is the stop-loss monitor's part of the policy (the stopLoss
// section). The zero value has the monitor off.
type StopLoss struct {
	// Enabled runs the monitor in `warden serve`.
	Enabled bool
	// PollInterval is how often the monitor checks prices; at least 1s once
	// loaded.
	PollInterval time.Duration
	// MaxPriceAge is the age past which a price is stale and not acted on;
	// above 0 once loaded.
	MaxPriceAge time.Duration
	// KillSwitchExits is one of KillSwitchExitModes: what becomes of a
	// protective exit while the kill switch is on. With ask it waits for a
	// human; with deny it is refused.
	KillSwitchExits string
	// Default is the rule for positions opened without one; nil means such
	// positions have none.
	Default *StopRule
}

// StopRule says when the monitor closes a position. The zero value has no
// type and never triggers.
type StopRule struct {
	// Type is one of StopRuleTypes: fixed_percent exits on a fall of
	// ThresholdPct from the entry price, trailing on a fall of ThresholdPct
	// from the highest price since entry, time_based once the position is
	// MaxAge old.
	Type string
	// ThresholdPct is a fraction of the price, 0 < t <= 1 (0.1 = 10%); 0 in a
	// time_based rule means no price threshold.
	ThresholdPct float64
	// TakeProfitPct, when above 0, also exits on a rise of this fraction
	// from the entry price.
	TakeProfitPct float64
	// MaxAge, when above 0, also exits a position this old; a time_based
	// rule always has one.
	MaxAge time.Duration
}

// Values of stopLoss.killSwitchExits and stopLoss.defaultRule.type.
var (
	KillSwitchExitModes = []string{"ask", "deny"}
	StopRuleTypes       = []string{"fixed_percent", "trailing", "time_based"}
)

var (
	pollBounds       = bounds[int64]{lo: 1000, hi: 3_600_000, want: "a whole number of milliseconds from 1000 (1s) to 3600000 (1h)"}
	priceAgeBounds   = bounds[int64]{lo: 0, hi: 86_400_000, loOpen: true, want: "a whole number of milliseconds from 1 to 86400000 (24h)"}
	thresholdBounds  = bounds[float64]{lo: 0, hi: 1, loOpen: true, want: "a fraction of the price above 0 and at most 1.0, e.g. 0.1 for 10%"}
	takeProfitBounds = bounds[float64]{lo: 0, hi: 100, want: "a fraction from 0 to 100, e.g. 0.25 for 25% (0 for none)"}
	maxAgeBounds     = bounds[int64]{lo: 0, hi: 365 * 86_400_000, want: "a whole number of milliseconds up to 31536000000 (365 days), 0 for none"}
)

var stopLossSection = &sectionDef[stopLossFile]{
	key: "stopLoss",
	defaultsOf: func() *stopLossFile {
		return &stopLossFile{Enabled: true, PollIntervalMs: 10_000, MaxPriceAgeMs: 120_000, KillSwitchExits: "ask"}
	},
	check:     checkStopLoss,
	toRuntime: stopLossToRuntime,
}

func checkStopLoss(f *stopLossFile, c *checker) {
	pollBounds.check(c, f.PollIntervalMs, "pollIntervalMs")
	priceAgeBounds.check(c, f.MaxPriceAgeMs, "maxPriceAgeMs")
	f.KillSwitchExits = strings.ToLower(strings.TrimSpace(f.KillSwitchExits))
	if !slices.Contains(KillSwitchExitModes, f.KillSwitchExits) {
		c.reportf([]any{"killSwitchExits"}, "%s is not allowed; want ask (a protective exit waits for a human while the kill switch is on) or deny", quote(f.KillSwitchExits))
	}
	if r := f.DefaultRule; r != nil {
		checkStopRule(r, c, "defaultRule")
	}
}

// checkStopRule checks and normalises the rule r found at key.
func checkStopRule(r *stopRuleFile, c *checker, key string) {
	r.Type = strings.ToLower(strings.TrimSpace(r.Type))
	switch {
	case r.Type == "":
		c.reportf([]any{key, "type"}, "type is missing; want one of %s", strings.Join(StopRuleTypes, ", "))
	case !slices.Contains(StopRuleTypes, r.Type):
		c.reportf([]any{key, "type"}, "%s is not a stop rule type; want one of %s", quote(r.Type), strings.Join(StopRuleTypes, ", "))
	}
	if r.Type != "time_based" || r.ThresholdPct != 0 {
		thresholdBounds.check(c, r.ThresholdPct, key, "threshold_pct")
	}
	takeProfitBounds.check(c, r.TakeProfitPct, key, "take_profit_pct")
	maxAgeBounds.check(c, r.MaxAgeMs, key, "max_age_ms")
	if r.Type == "time_based" && r.MaxAgeMs == 0 {
		c.reportf([]any{key, "max_age_ms"}, "a time_based rule needs max_age_ms above 0, e.g. 86400000 (1 day)")
	}
}

func stopLossToRuntime(f *stopLossFile, p *Policy) {
	s := StopLoss{
		Enabled:         f.Enabled,
		PollInterval:    millis(f.PollIntervalMs),
		MaxPriceAge:     millis(f.MaxPriceAgeMs),
		KillSwitchExits: f.KillSwitchExits,
	}
	if r := f.DefaultRule; r != nil {
		s.Default = &StopRule{Type: r.Type, ThresholdPct: r.ThresholdPct, TakeProfitPct: r.TakeProfitPct, MaxAge: millis(r.MaxAgeMs)}
	}
	p.StopLoss = s
}
