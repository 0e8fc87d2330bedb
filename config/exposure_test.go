package config

import (
	"strings"
	"testing"

	"github.com/agentwarden/warden"
)

func TestExposureSection(t *testing.T) {
	d := mustParse(t, "version: 1\n").Policy.Exposure
	want := Exposure{MaxPerToken: 5000 * warden.MicrosPerDollar, MaxPerChain: 15000 * warden.MicrosPerDollar, MaxPerAssetClassFraction: 0.4, MaxTotal: 50000 * warden.MicrosPerDollar}
	if d != want {
		t.Fatalf("defaults = %+v, want %+v", d, want)
	}
}

func TestExposureSectionProblems(t *testing.T) {
	testRefusals(t, "exposure", []badBody{
		{"negative token cap", "maxPerTokenUsd: -1", "exposure.maxPerTokenUsd", 3, "-1 is negative; want a USD amount >= 0"},
		{"negative chain cap", "maxPerChainUsd: -0.5", "exposure.maxPerChainUsd", 3, "-0.5 is negative"},
		{"negative total", "maxTotalExposureUsd: -100", "exposure.maxTotalExposureUsd", 3, "-100 is negative"},
		{"infinite total", "maxTotalExposureUsd: .inf", "exposure.maxTotalExposureUsd", 3, "+Inf is not a finite number"},
		{"class fraction 0", "maxPerAssetClassFraction: 0", "exposure.maxPerAssetClassFraction", 3, "0 is too small; want a fraction of the portfolio above 0 and at most 1"},
		{"class fraction negative", "maxPerAssetClassFraction: -0.1", "exposure.maxPerAssetClassFraction", 3, "-0.1 is negative"},
		{"class fraction above 1", "maxPerAssetClassFraction: 40", "exposure.maxPerAssetClassFraction", 3, "40 is too large"},
		{"unknown key", "maxPerToken: 5", "exposure.maxPerToken", 3, "unknown key; did you mean exposure.maxPerTokenUsd?"},
	}, func(p *Policy) any { return p.Exposure })
}

// An invalid exposure section never loosens a cap the file tightened.
func TestExposureFallbackKeepsStricterCaps(t *testing.T) {
	l := mustParse(t, `version: 1
exposure:
  maxPerTokenUsd: 100
  maxPerChainUsd: 99999999
  maxPerAssetClassFraction: 0.1
  maxTotalExposureUsd: -1
  maxTotalExposureUsd: 20
`)
	want := Default().Exposure
	want.MaxPerToken = 100 * warden.MicrosPerDollar
	want.MaxPerAssetClassFraction = 0.1
	want.MaxTotal = 20 * warden.MicrosPerDollar
	if got := l.Policy.Exposure; got != want {
		t.Errorf("exposure = %+v, want %+v", got, want)
	}
	p := problemAt(t, l, "exposure")
	if !strings.Contains(p.Message, "the stricter values the file gives maxPerTokenUsd, maxPerAssetClassFraction, maxTotalExposureUsd are kept") {
		t.Errorf("fallback problem = %q", p.Message)
	}
	checkPolicy(t, l.Policy)
}
