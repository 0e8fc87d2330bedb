package config

import (
	"slices"
	"strings"

	"github.com/agentwarden/warden"
)

// sizingFile is the sizing section as written in warden.yaml.
type sizingFile struct {
	Strategy        string  `yaml:"strategy" want:"one of fixed_usd, fixed_fraction, half_kelly"`
	FixedAmountUSD  float64 `yaml:"fixedAmountUsd" want:"a USD amount above 0"`
	Fraction        float64 `yaml:"fraction" want:"a fraction of the portfolio above 0 and at most 1, e.g. 0.02"`
	KellyMultiplier float64 `yaml:"kellyMultiplier" want:"a multiplier above 0 and at most 1, e.g. 0.5"`
}

// Sizing says how large a position the trade tools size an order at (the
// sizing section). The zero value has no strategy and sizes nothing; build
// one with Load, Parse or Default.
type Sizing struct {
	// Strategy is one of SizingStrategies: fixed_usd spends FixedAmount per
	// order, fixed_fraction spends Fraction of the portfolio's value, and
	// half_kelly spends the Kelly fraction times KellyMultiplier.
	Strategy string
	// FixedAmount is the size of an order under fixed_usd; above 0.
	FixedAmount warden.USD
	// Fraction is the share of the portfolio under fixed_fraction; 0 < f <= 1.
	Fraction float64
	// KellyMultiplier scales the Kelly fraction under half_kelly; 0 < k <= 1.
	KellyMultiplier float64
}

// SizingStrategies are the values of sizing.strategy.
var SizingStrategies = []string{"fixed_usd", "fixed_fraction", "half_kelly"}

var (
	fractionBounds = bounds[float64]{lo: 0, hi: 1, loOpen: true, want: "a fraction above 0 and at most 1, e.g. 0.02 for 2%"}
	kellyBounds    = bounds[float64]{lo: 0, hi: 1, loOpen: true, want: "a multiplier above 0 and at most 1, e.g. 0.5 for half Kelly"}
)

var sizingSection = &sectionDef[sizingFile]{
	key: "sizing",
	defaultsOf: func() *sizingFile {
		return &sizingFile{Strategy: "fixed_usd", FixedAmountUSD: 500, Fraction: 0.02, KellyMultiplier: 0.5}
	},
	check:     checkSizing,
	toRuntime: sizingToRuntime,
}

func checkSizing(f *sizingFile, c *checker) {
	f.Strategy = strings.ToLower(strings.TrimSpace(f.Strategy))
	if !slices.Contains(SizingStrategies, f.Strategy) {
		c.reportf([]any{"strategy"}, "%s is not a sizing strategy; want one of %s", quote(f.Strategy), strings.Join(SizingStrategies, ", "))
	}
	c.checkPositiveUSD(f.FixedAmountUSD, "it would size every order at nothing", "fixedAmountUsd")
	fractionBounds.check(c, f.Fraction, "fraction")
	kellyBounds.check(c, f.KellyMultiplier, "kellyMultiplier")
}

func sizingToRuntime(f *sizingFile, p *Policy) {
	p.Sizing = Sizing{
		Strategy:        f.Strategy,
		FixedAmount:     usdOf(f.FixedAmountUSD),
		Fraction:        f.Fraction,
		KellyMultiplier: f.KellyMultiplier,
	}
}
