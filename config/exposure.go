package config

import (
	"github.com/agentwarden/warden"
	yaml "go.yaml.in/yaml/v3"
)

// exposureFile is the exposure section as written in warden.yaml.
type exposureFile struct {
	MaxPerTokenUSD           float64 `yaml:"maxPerTokenUsd" want:"a USD amount (a number >= 0)"`
	MaxPerChainUSD           float64 `yaml:"maxPerChainUsd" want:"a USD amount (a number >= 0)"`
	MaxPerAssetClassFraction float64 `yaml:"maxPerAssetClassFraction" want:"a fraction above 0 and at most 1, e.g. 0.4"`
	MaxTotalExposureUSD      float64 `yaml:"maxTotalExposureUsd" want:"a USD amount (a number >= 0)"`
}

// Exposure caps how much of the portfolio may be at risk in non-stable
// assets (the exposure section); stablecoins do not count, perp positions
// count at their notional. The zero value allows no exposure at all.
type Exposure struct {
	// MaxPerToken caps the exposure to one asset, across chains; 0 means none.
	MaxPerToken warden.USD
	// MaxPerChain caps the exposure on one chain; 0 means none.
	MaxPerChain warden.USD
	// MaxPerAssetClassFraction is the largest share of the portfolio's value
	// one asset class may hold; 0 < f <= 1 once loaded.
	MaxPerAssetClassFraction float64
	// MaxTotal caps the exposure across everything; 0 means none.
	MaxTotal warden.USD
}

var exposureSection = &sectionDef[exposureFile]{
	key: "exposure",
	defaultsOf: func() *exposureFile {
		return &exposureFile{MaxPerTokenUSD: 5000, MaxPerChainUSD: 15000, MaxPerAssetClassFraction: 0.40, MaxTotalExposureUSD: 50000}
	},
	check:      checkExposure,
	toRuntime:  exposureToRuntime,
	failClosed: exposureFailClosed,
}

var classFractionBounds = bounds[float64]{lo: 0, hi: 1, loOpen: true, want: "a fraction of the portfolio above 0 and at most 1, e.g. 0.4 for 40%"}

func checkExposure(f *exposureFile, c *checker) {
	c.checkUSD(f.MaxPerTokenUSD, "maxPerTokenUsd")
	c.checkUSD(f.MaxPerChainUSD, "maxPerChainUsd")
	classFractionBounds.check(c, f.MaxPerAssetClassFraction, "maxPerAssetClassFraction")
	c.checkUSD(f.MaxTotalExposureUSD, "maxTotalExposureUsd")
}

// exposureFailClosed keeps, in an invalid section, every cap the file sets
// lower than its default.
func exposureFailClosed(raw []*yaml.Node, f *exposureFile) string {
	return keepStricterLimits(raw, []limit{
		{"maxPerTokenUsd", &f.MaxPerTokenUSD, usdBounds, true},
		{"maxPerChainUsd", &f.MaxPerChainUSD, usdBounds, true},
		{"maxPerAssetClassFraction", &f.MaxPerAssetClassFraction, classFractionBounds, true},
		{"maxTotalExposureUsd", &f.MaxTotalExposureUSD, usdBounds, true},
	})
}

func exposureToRuntime(f *exposureFile, p *Policy) {
	p.Exposure = Exposure{
		MaxPerToken:              usdOf(f.MaxPerTokenUSD),
		MaxPerChain:              usdOf(f.MaxPerChainUSD),
		MaxPerAssetClassFraction: f.MaxPerAssetClassFraction,
		MaxTotal:                 usdOf(f.MaxTotalExposureUSD),
	}
}
