package config

import (
	"testing"

	"github.com/agentwarden/warden"
)

func TestSizingSection(t *testing.T) {
	d := mustParse(t, "version: 1\n").Policy.Sizing
	if want := (Sizing{Strategy: "fixed_usd", FixedAmount: 500 * warden.MicrosPerDollar, Fraction: 0.02, KellyMultiplier: 0.5}); d != want {
		t.Fatalf("defaults = %+v, want %+v", d, want)
	}
	l := mustParse(t, "version: 1\nsizing:\n  strategy: Fixed_Fraction\n  fraction: 1\n  kellyMultiplier: 0.000001\n")
	if len(l.Problems) != 0 {
		t.Fatalf("problems: %v", l.Problems)
	}
	if s := l.Policy.Sizing; s.Strategy != "fixed_fraction" || s.Fraction != 1 || s.KellyMultiplier != 0.000001 {
		t.Errorf("sizing = %+v", s)
	}
}

func TestSizingSectionProblems(t *testing.T) {
	testRefusals(t, "sizing", []badBody{
		{"unknown strategy", "strategy: martingale", "sizing.strategy", 3, `"martingale" is not a sizing strategy; want one of fixed_usd, fixed_fraction, half_kelly`},
		{"empty strategy", `strategy: ""`, "sizing.strategy", 3, "is not a sizing strategy"},
		{"zero amount", "fixedAmountUsd: 0", "sizing.fixedAmountUsd", 3, "0 is not allowed: it would size every order at nothing"},
		{"negative amount", "fixedAmountUsd: -1", "sizing.fixedAmountUsd", 3, "-1 is negative"},
		{"zero fraction", "fraction: 0", "sizing.fraction", 3, "0 is too small; want a fraction above 0 and at most 1"},
		{"fraction above 1", "fraction: 1.5", "sizing.fraction", 3, "1.5 is too large"},
		{"nan fraction", "fraction: .nan", "sizing.fraction", 3, "NaN is not a finite number"},
		{"full Kelly and more", "strategy: half_kelly\nkellyMultiplier: 2", "sizing.kellyMultiplier", 4, "2 is too large; want a multiplier above 0 and at most 1"},
		{"wrong type", "fraction: two", "sizing.fraction", 3, `got "two" (a string); want a fraction of the portfolio`},
		{"unknown key", "fixedAmountUSD: 5", "sizing.fixedAmountUSD", 3, "unknown key; did you mean sizing.fixedAmountUsd?"},
	}, func(p *Policy) any { return p.Sizing })
}
