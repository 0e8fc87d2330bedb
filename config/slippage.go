package config

import (
	"github.com/agentwarden/warden"
	yaml "go.yaml.in/yaml/v3"
)

// slippageFile is the slippage section as written in warden.yaml.
type slippageFile struct {
	MaxSlippageSmall   float64 `yaml:"maxSlippageSmall" want:"a fraction from 0 to below 1, e.g. 0.02 for 2%"`
	MaxSlippageMid     float64 `yaml:"maxSlippageMid" want:"a fraction from 0 to below 1, e.g. 0.01 for 1%"`
	MaxSlippageLarge   float64 `yaml:"maxSlippageLarge" want:"a fraction from 0 to below 1, e.g. 0.005 for 0.5%"`
	SmallTradeBelowUSD float64 `yaml:"smallTradeBelowUsd" want:"a USD amount (a number >= 0)"`
	LargeTradeAboveUSD float64 `yaml:"largeTradeAboveUsd" want:"a USD amount (a number >= 0)"`
	MinOutputRatio     float64 `yaml:"minOutputRatio" want:"a ratio above 0 and at most 1, e.g. 0.95"`
	MaxLeverage        float64 `yaml:"maxLeverage" want:"a leverage from 1 to 100"`
}

// Slippage bounds how far a fill may be from its quote, by trade size, and
// how much leverage a perp may use (the slippage section). The zero value
// allows no slippage and no leverage, but its MinOutputRatio of 0 checks no
// output: build one with Load, Parse or Default.
type Slippage struct {
	// SmallMax, MidMax and LargeMax are the largest price move against a
	// swap, as a fraction (0.01 = 1%), for small, mid and large trades; see
	// Max. Each is 0 <= x < 1.
	SmallMax, MidMax, LargeMax float64
	// A trade below SmallBelow is small, one above LargeAbove is large, and
	// the rest are mid; SmallBelow <= LargeAbove.
	SmallBelow, LargeAbove warden.USD
	// MinOutputRatio is the least share of a quote's output a swap must
	// deliver; 0 < r <= 1 once loaded.
	MinOutputRatio float64
	// MaxLeverage is the highest leverage of a perp position; 1 to 100 once
	// loaded.
	MaxLeverage float64
}

// Max returns the largest slippage allowed for a trade of amount.
func (s Slippage) Max(amount warden.USD) float64 {
	switch {
	case amount < s.SmallBelow:
		return s.SmallMax
	case amount > s.LargeAbove:
		return s.LargeMax
	}
	return s.MidMax
}

var slippageSection = &sectionDef[slippageFile]{
	key: "slippage",
	defaultsOf: func() *slippageFile {
		return &slippageFile{
			MaxSlippageSmall: 0.02, MaxSlippageMid: 0.01, MaxSlippageLarge: 0.005,
			SmallTradeBelowUSD: 1000, LargeTradeAboveUSD: 10000,
			MinOutputRatio: 0.95, MaxLeverage: 10,
		}
	},
	check:      checkSlippage,
	toRuntime:  slippageToRuntime,
	failClosed: slippageFailClosed,
}

var (
	slippageBounds    = bounds[float64]{lo: 0, hi: 1, hiOpen: true, want: "a fraction from 0 to below 1, e.g. 0.01 for 1%"}
	outputRatioBounds = bounds[float64]{lo: 0, hi: 1, loOpen: true, want: "a ratio above 0 and at most 1, e.g. 0.95"}
	leverageBounds    = bounds[float64]{lo: 1, hi: 100, want: "a leverage from 1 to 100"}
)

func checkSlippage(f *slippageFile, c *checker) {
	slippageBounds.check(c, f.MaxSlippageSmall, "maxSlippageSmall")
	slippageBounds.check(c, f.MaxSlippageMid, "maxSlippageMid")
	slippageBounds.check(c, f.MaxSlippageLarge, "maxSlippageLarge")
	c.checkUSD(f.SmallTradeBelowUSD, "smallTradeBelowUsd")
	c.checkUSD(f.LargeTradeAboveUSD, "largeTradeAboveUsd")
	if usdBounds.contains(f.SmallTradeBelowUSD) && usdBounds.contains(f.LargeTradeAboveUSD) && f.SmallTradeBelowUSD > f.LargeTradeAboveUSD {
		// Report it at the key the file sets, the large one if both.
		if mappingValue(c.node, "largeTradeAboveUsd") == nil {
			c.reportf([]any{"smallTradeBelowUsd"}, "%s is above largeTradeAboveUsd (%s); want an amount at most largeTradeAboveUsd",
				formatFloat(f.SmallTradeBelowUSD), formatFloat(f.LargeTradeAboveUSD))
		} else {
			c.reportf([]any{"largeTradeAboveUsd"}, "%s is below smallTradeBelowUsd (%s); want an amount at least smallTradeBelowUsd",
				formatFloat(f.LargeTradeAboveUSD), formatFloat(f.SmallTradeBelowUSD))
		}
	}
	outputRatioBounds.check(c, f.MinOutputRatio, "minOutputRatio")
	leverageBounds.check(c, f.MaxLeverage, "maxLeverage")
}

// slippageFailClosed keeps, in an invalid section, every limit the file sets
// stricter than its default: lower slippage and leverage, a higher output
// ratio. The trade size thresholds take their defaults.
func slippageFailClosed(raw []*yaml.Node, f *slippageFile) string {
	return keepStricterLimits(raw, []limit{
		{"maxSlippageSmall", &f.MaxSlippageSmall, slippageBounds, true},
		{"maxSlippageMid", &f.MaxSlippageMid, slippageBounds, true},
		{"maxSlippageLarge", &f.MaxSlippageLarge, slippageBounds, true},
		{"minOutputRatio", &f.MinOutputRatio, outputRatioBounds, false},
		{"maxLeverage", &f.MaxLeverage, leverageBounds, true},
	})
}

func slippageToRuntime(f *slippageFile, p *Policy) {
	p.Slippage = Slippage{
		SmallMax: f.MaxSlippageSmall, MidMax: f.MaxSlippageMid, LargeMax: f.MaxSlippageLarge,
		SmallBelow: usdOf(f.SmallTradeBelowUSD), LargeAbove: usdOf(f.LargeTradeAboveUSD),
		MinOutputRatio: f.MinOutputRatio, MaxLeverage: f.MaxLeverage,
	}
}
