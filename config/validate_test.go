package config

import (
	"strings"
	"testing"

	"github.com/agentwarden/warden"
)

// Validation: each bad value is a problem that names its key and line and
// says what is allowed; the section falls back to its defaults.
func TestValidateValues(t *testing.T) {
	tests := []struct {
		name, src string
		key       string
		line      int
		want      string
	}{
		{"negative cap", "version: 1\nsafety:\n  dailySpendCap: -5\n", "safety.dailySpendCap", 3, "-5 is negative; want a USD amount >= 0"},
		{"negative max", "version: 1\nsafety:\n  maxTransactionAmount: -0.01\n", "safety.maxTransactionAmount", 3, "-0.01 is negative; want a USD amount >= 0"},
		{"nan cap", "version: 1\nsafety:\n  dailySpendCap: .nan\n", "safety.dailySpendCap", 3, "NaN is not a finite number; want a USD amount >= 0"},
		{"infinite cap", "version: 1\nsafety:\n  dailySpendCap: .inf\n", "safety.dailySpendCap", 3, "+Inf is not a finite number"},
		{"huge cap", "version: 1\nsafety:\n  dailySpendCap: 1e15\n", "safety.dailySpendCap", 3, "1000000000000000 is above the one trillion dollar limit"},
		{"empty token", "version: 1\nsafety:\n  blockedTokens: [SQUID, \"\"]\n", "safety.blockedTokens[1]", 3, "empty token symbol; want a token symbol without spaces"},
		{"token with space", "version: 1\nsafety:\n  allowedTokens:\n    - USDC\n    - \"ET H\"\n", "safety.allowedTokens[1]", 5, `"ET H" contains whitespace`},
		{"tier 7", "version: 1\ntools:\n  tiers:\n    foo: 7\n", "tools.tiers.foo", 4, "7 is not a tier; want 1, 2, 3 or 4"},
		{"tier 0", "version: 1\ntools:\n  tiers:\n    foo: 0\n", "tools.tiers.foo", 4, "0 is not a tier; want 1, 2, 3 or 4"},
		{"tier 260", "version: 1\ntools:\n  tiers:\n    foo: 260\n", "tools.tiers.foo", 4, "260 is not a tier"},
		{"tier negative", "version: 1\ntools:\n  tiers:\n    foo: -1\n", "tools.tiers.foo", 4, "-1 is not a tier"},
		{"empty tool name", "version: 1\ntools:\n  tiers:\n    \"\": 2\n", "tools.tiers.", 4, "empty tool name"},
		{"unkill lowered", "version: 1\ntools:\n  tiers:\n    unkill: 3\n", "tools.tiers.unkill", 4, "unkill (turning the emergency stop off) is tier 4 and cannot be lowered; want 4"},
		{"unkill lowered by override", "version: 1\ntools:\n  overrides:\n    - tool: unkill\n      tier: 1\n", "tools.overrides[0].tier", 5, "cannot be lowered"},
		{"override without tool", "version: 1\ntools:\n  overrides:\n    - tier: 2\n", "tools.overrides[0].tool", 4, "tool is missing; want the name of the tool"},
		{"override without tier", "version: 1\ntools:\n  overrides:\n    - tool: a\n", "tools.overrides[0].tier", 4, "tier is missing; want 1, 2, 3 or 4"},
		{"override tier 5", "version: 1\ntools:\n  overrides:\n    - tool: a\n      tier: 5\n", "tools.overrides[0].tier", 5, "5 is not a tier"},
		{"override negative amount", "version: 1\ntools:\n  overrides:\n    - tool: a\n      max_amount_usd: -1\n      tier: 2\n", "tools.overrides[0].max_amount_usd", 5, "-1 is negative; want a USD amount >= 0"},
		{"empty recipients", "version: 1\ntools:\n  overrides:\n    - tool: transfer_token\n      recipients: []\n      tier: 3\n", "tools.overrides[0].recipients", 5, "empty list; want at least one recipient"},
		{"null recipients", "version: 1\ntools:\n  overrides:\n    - tool: transfer_token\n      recipients:\n      tier: 3\n", "tools.overrides[0].recipients", 5, "got an empty value; want a list of recipient addresses"},
		{"blank recipient", "version: 1\ntools:\n  overrides:\n    - tool: transfer_token\n      recipients: [\" \"]\n      tier: 3\n", "tools.overrides[0].recipients[0]", 5, "contains whitespace"},
		{"second override", "version: 1\ntools:\n  overrides:\n    - tool: a\n      tier: 2\n    - tool: b\n      tier: 9\n", "tools.overrides[1].tier", 7, "9 is not a tier"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := mustParse(t, tt.src)
			p := problemAt(t, l, tt.key)
			if p.Line != tt.line || !strings.Contains(p.Message, tt.want) {
				t.Errorf("Parse(%q) problem = %v, want line %d and %q", tt.src, p, tt.line, tt.want)
			}
			sec, _, _ := strings.Cut(tt.key, ".")
			problemAt(t, l, sec) // the fallback note
			checkPolicy(t, l.Policy)
		})
	}
}

func TestValidValues(t *testing.T) {
	l := mustParse(t, `version: 1
safety:
  maxTransactionAmount: 0
  dailySpendCap: 0.000001
  allowedTokens: [usdc, wEth]
  blockedTokens: [squid]
tools:
  tiers:
    unkill: 4
    my_tool: 1
  overrides:
    - tool: transfer_token
      recipients: [0xAbC]
      max_amount_usd: 0
      tier: 3
`)
	if len(l.Problems) != 0 {
		t.Fatalf("problems: %v", l.Problems)
	}
	s := l.Policy.Safety
	if s.MaxTransaction != 0 || s.DailySpendCap != 1 {
		t.Errorf("caps = %v, %v; want 0 and 0.000001", s.MaxTransaction, s.DailySpendCap)
	}
	if strings.Join(s.AllowedTokens, ",") != "USDC,WETH" || strings.Join(s.BlockedTokens, ",") != "SQUID" {
		t.Errorf("tokens = %v, %v; want upper case", s.AllowedTokens, s.BlockedTokens)
	}
	tiers := l.Policy.Tools.Tiers
	if tiers["my_tool"] != warden.TierReadOnly || tiers["get_price"] != warden.TierReadOnly || tiers["transfer_token"] != warden.TierManualOnly {
		t.Errorf("tiers = %v; want my_tool 1 laid over the defaults", tiers)
	}
	o := l.Policy.Tools.Overrides
	if len(o) != 1 || o[0].Tool != "transfer_token" || o[0].MaxAmount == nil || *o[0].MaxAmount != 0 ||
		strings.Join(o[0].Recipients, ",") != "0xAbC" || o[0].Tier != warden.TierAlwaysConfirm {
		t.Errorf("overrides = %+v", o)
	}
	checkPolicy(t, l.Policy)
}

func TestEmptyOverridesMeansNone(t *testing.T) {
	l := mustParse(t, "version: 1\ntools:\n  overrides: []\n")
	if len(l.Problems) != 0 || len(l.Policy.Tools.Overrides) != 0 {
		t.Errorf("overrides: [] = %+v, %v; want no overrides", l.Policy.Tools.Overrides, l.Problems)
	}
}
