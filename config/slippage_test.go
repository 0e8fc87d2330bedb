package config

import (
	"strings"
	"testing"

	"github.com/agentwarden/warden"
)

func TestSlippageSection(t *testing.T) {
	d := mustParse(t, "version: 1\n").Policy.Slippage
	want := Slippage{SmallMax: 0.02, MidMax: 0.01, LargeMax: 0.005, SmallBelow: 1000 * warden.MicrosPerDollar, LargeAbove: 10000 * warden.MicrosPerDollar, MinOutputRatio: 0.95, MaxLeverage: 10}
	if d != want {
		t.Fatalf("defaults = %+v, want %+v", d, want)
	}
}

func TestSlippageMax(t *testing.T) {
	s := Default().Slippage
	tests := []struct {
		amount warden.USD
		want   float64
	}{
		{0, 0.02},
		{999 * warden.MicrosPerDollar, 0.02},
		{1000 * warden.MicrosPerDollar, 0.01},
		{10000 * warden.MicrosPerDollar, 0.01},
		{10000*warden.MicrosPerDollar + 1, 0.005},
	}
	for _, tt := range tests {
		if got := s.Max(tt.amount); got != tt.want {
			t.Errorf("Max(%v) = %v, want %v", tt.amount, got, tt.want)
		}
	}
}

func TestSlippageSectionProblems(t *testing.T) {
	testRefusals(t, "slippage", []badBody{
		{"leverage above 100", "maxLeverage: 150", "slippage.maxLeverage", 3, "150 is too large; want a leverage from 1 to 100"},
		{"leverage below 1", "maxLeverage: 0.5", "slippage.maxLeverage", 3, "0.5 is too small; want a leverage from 1 to 100"},
		{"slippage 1", "maxSlippageSmall: 1", "slippage.maxSlippageSmall", 3, "1 is too large; want a fraction from 0 to below 1"},
		{"negative slippage", "maxSlippageMid: -0.01", "slippage.maxSlippageMid", 3, "-0.01 is negative"},
		{"slippage as percent", "maxSlippageLarge: 5", "slippage.maxSlippageLarge", 3, "5 is too large"},
		{"small above large", "smallTradeBelowUsd: 20000", "slippage.smallTradeBelowUsd", 3, "20000 is above largeTradeAboveUsd (10000)"},
		{"large below small", "smallTradeBelowUsd: 20000\nlargeTradeAboveUsd: 5000", "slippage.largeTradeAboveUsd", 4, "5000 is below smallTradeBelowUsd (20000)"},
		{"negative threshold", "largeTradeAboveUsd: -1", "slippage.largeTradeAboveUsd", 3, "-1 is negative"},
		{"output ratio 0", "minOutputRatio: 0", "slippage.minOutputRatio", 3, "0 is too small; want a ratio above 0 and at most 1"},
		{"output ratio above 1", "minOutputRatio: 1.05", "slippage.minOutputRatio", 3, "1.05 is too large"},
		{"unknown key", "maxSlippage: 0.1", "slippage.maxSlippage", 3, "unknown key; did you mean slippage.maxSlippageSmall?"},
	}, func(p *Policy) any { return p.Slippage })
}

// An invalid slippage section never loosens a limit the file tightened.
func TestSlippageFallbackKeepsStricterLimits(t *testing.T) {
	l := mustParse(t, "version: 1\nslippage:\n  maxLeverage: 2\n  minOutputRatio: 0.99\n  maxSlippageSmall: 0.5\n  maxSlippageMid: 0.001\n  smallTradeBelowUsd: -1\n")
	want := Default().Slippage
	want.MaxLeverage, want.MinOutputRatio, want.MidMax = 2, 0.99, 0.001
	if got := l.Policy.Slippage; got != want {
		t.Errorf("slippage = %+v, want %+v", got, want)
	}
	if p := problemAt(t, l, "slippage"); !strings.Contains(p.Message, "maxSlippageMid, minOutputRatio, maxLeverage are kept") {
		t.Errorf("fallback problem = %q", p.Message)
	}
}
