package stoploss_test

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/finance/stoploss"
	"github.com/agentwarden/warden/finance/stoploss/stoplosstest"
)

func TestValidate(t *testing.T) {
	fixed := stoploss.Rule{Target: "base:WETH", Kind: stoploss.FixedPercent, ThresholdPct: 0.1}
	for _, tc := range []struct {
		name string
		edit func(r *stoploss.Rule)
		want string // a fragment of the message; "" for valid
	}{
		{"fixed", func(*stoploss.Rule) {}, ""},
		{"fixed at 100 %", func(r *stoploss.Rule) { r.ThresholdPct = 1 }, ""},
		{"trailing", func(r *stoploss.Rule) { r.Kind = stoploss.Trailing; r.ThresholdPct = 0.05 }, ""},
		{"trailing with a time limit", func(r *stoploss.Rule) { r.Kind = stoploss.Trailing; r.MaxAge = time.Hour }, ""},
		{"time", func(r *stoploss.Rule) { r.Kind = stoploss.TimeBased; r.ThresholdPct = 0; r.MaxAge = 24 * time.Hour }, ""},
		{"time with a stop", func(r *stoploss.Rule) { r.Kind = stoploss.TimeBased; r.MaxAge = 24 * time.Hour }, ""},
		{"take profit", func(r *stoploss.Rule) { r.TakeProfitPct = 0.2 }, ""},
		{"take profit at the limit", func(r *stoploss.Rule) { r.TakeProfitPct = 100 }, ""},
		{"margin basis", func(r *stoploss.Rule) { r.Basis = stoploss.BasisMargin }, ""},
		{"price basis", func(r *stoploss.Rule) { r.Basis = stoploss.BasisPrice }, ""},
		{"no target", func(r *stoploss.Rule) { r.Target = " " }, "target is empty"},
		{"control character in target", func(r *stoploss.Rule) { r.Target = "base:WETH\n" }, "control characters"},
		{"no kind", func(r *stoploss.Rule) { r.Kind = "" }, "kind is empty"},
		{"unknown kind", func(r *stoploss.Rule) { r.Kind = "fixed_pct" }, `unknown kind "fixed_pct"`},
		{"zero threshold", func(r *stoploss.Rule) { r.ThresholdPct = 0 }, "threshold_pct above 0"},
		{"negative threshold", func(r *stoploss.Rule) { r.ThresholdPct = -0.1 }, "threshold_pct above 0"},
		{"threshold in percent", func(r *stoploss.Rule) { r.ThresholdPct = 10 }, "threshold_pct > 1.0 rejected"},
		{"threshold just above 1", func(r *stoploss.Rule) { r.ThresholdPct = 1.0000001 }, "threshold_pct > 1.0 rejected"},
		{"NaN threshold", func(r *stoploss.Rule) { r.ThresholdPct = math.NaN() }, "threshold_pct is NaN"},
		{"infinite threshold", func(r *stoploss.Rule) { r.ThresholdPct = math.Inf(1) }, "threshold_pct is +Inf"},
		{"NaN take profit", func(r *stoploss.Rule) { r.TakeProfitPct = math.NaN() }, "take_profit_pct is NaN"},
		{"negative take profit", func(r *stoploss.Rule) { r.TakeProfitPct = -0.1 }, "take_profit_pct is -0.1"},
		{"take profit above 100", func(r *stoploss.Rule) { r.TakeProfitPct = 100.5 }, "take_profit_pct is 100.5"},
		{"time without max age", func(r *stoploss.Rule) { r.Kind = stoploss.TimeBased; r.ThresholdPct = 0 }, "needs max_age_ms above 0"},
		{"time with a negative threshold", func(r *stoploss.Rule) { r.Kind = stoploss.TimeBased; r.MaxAge = time.Hour; r.ThresholdPct = -1 }, "threshold_pct is -1"},
		{"time with threshold above 1", func(r *stoploss.Rule) { r.Kind = stoploss.TimeBased; r.MaxAge = time.Hour; r.ThresholdPct = 2 }, "threshold_pct > 1.0 rejected"},
		{"negative max age", func(r *stoploss.Rule) { r.MaxAge = -time.Hour }, "max_age is -1h0m0s"},
		{"sub-millisecond max age", func(r *stoploss.Rule) { r.MaxAge = time.Microsecond }, "whole number of milliseconds"},
		{"unknown basis", func(r *stoploss.Rule) { r.Basis = "notional" }, `unknown basis "notional"`},
		{"negative entry", func(r *stoploss.Rule) { r.Entry = -1 }, "entry is -1"},
		{"NaN entry", func(r *stoploss.Rule) { r.Entry = math.NaN() }, "entry is NaN"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := fixed
			tc.edit(&r)
			err := r.Validate()
			if tc.want == "" {
				if err != nil {
					t.Errorf("Validate(%+v) = %v, want nil", r, err)
				}
				return
			}
			var we *warden.Error
			if err == nil || !asError(err, &we) || we.Code != warden.EInvalid || !strings.Contains(we.Message, tc.want) {
				t.Errorf("Validate(%+v) = %v, want an EInvalid *warden.Error containing %q", r, err, tc.want)
			}
		})
	}
}

func asError(err error, we **warden.Error) bool { return errors.As(err, we) }

func TestRuleJSON(t *testing.T) {
	for _, r := range stoplosstest.Rules() {
		t.Run(r.ID, func(t *testing.T) {
			b, err := json.Marshal(r)
			if err != nil {
				t.Fatal(err)
			}
			var back stoploss.Rule
			if err := json.Unmarshal(b, &back); err != nil {
				t.Fatalf("Unmarshal(%s): %v", b, err)
			}
			if back.MaxAge != r.MaxAge || back.ThresholdPct != r.ThresholdPct || back.Entry != r.Entry ||
				!back.CreatedAt.Equal(r.CreatedAt) || back.Kind != r.Kind || back.Target != r.Target || back.Basis != r.Basis {
				t.Errorf("round trip of %s = %+v, want %+v", b, back, r)
			}
		})
	}
	b, _ := json.Marshal(stoploss.Rule{Target: "pos-1", Kind: stoploss.TimeBased, MaxAge: 24 * time.Hour})
	if !strings.Contains(string(b), `"max_age_ms":86400000`) {
		t.Errorf("Marshal = %s, want max_age_ms in milliseconds", b)
	}
}

func TestRuleJSONStrict(t *testing.T) {
	for _, in := range []string{
		`{"target":"pos-1","kind":"fixed_percent","treshold_pct":0.1,"created_at":"2026-01-01T00:00:00Z"}`,
		`{"target":"pos-1","kind":"time_based","max_age_ms":-5,"created_at":"2026-01-01T00:00:00Z"}`,
		`{"target":"pos-1","kind":"fixed_percent","threshold_pct":"0.1"}`,
	} {
		var r stoploss.Rule
		if err := json.Unmarshal([]byte(in), &r); err == nil {
			t.Errorf("Unmarshal(%s) = %+v, nil; want an error", in, r)
		}
	}
}

func TestNewID(t *testing.T) {
	a, b := stoploss.NewID(), stoploss.NewID()
	if a == b || !strings.HasPrefix(a, "sl_") || len(a) != 19 {
		t.Errorf("NewID() = %q, %q; want two different sl_ ids of 19 bytes", a, b)
	}
}
