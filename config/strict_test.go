package config

import (
	"strings"
	"testing"
)

// Strict decoding: every unknown key, duplicate and wrong type is a problem
// naming the full dotted key and its line.
func TestStrict(t *testing.T) {
	tests := []struct {
		name, src string
		key       string
		line      int
		want      string
	}{
		{
			name: "misspelled key",
			src:  "version: 1\nsafety:\n  dailySpendCapp: 100\n",
			key:  "safety.dailySpendCapp", line: 3,
			want: "unknown key; did you mean safety.dailySpendCap?",
		},
		{
			name: "wrong case",
			src:  "version: 1\nsafety:\n  MaxTransactionAmount: 1\n",
			key:  "safety.MaxTransactionAmount", line: 3,
			want: "did you mean safety.maxTransactionAmount?",
		},
		{
			name: "snake case",
			src:  "version: 1\nsafety:\n  kill_switch_active: true\n",
			key:  "safety.kill_switch_active", line: 3,
			want: "did you mean safety.killSwitchActive?",
		},
		{
			name: "override key in camel case",
			src:  "version: 1\ntools:\n  overrides:\n    - tool: a\n      maxAmountUsd: 3\n      tier: 2\n",
			key:  "tools.overrides[0].maxAmountUsd", line: 5,
			want: "did you mean tools.overrides[0].max_amount_usd?",
		},
		{
			name: "unknown key without a close match",
			src:  "version: 1\ntools:\n  sandbox: strict\n",
			key:  "tools.sandbox", line: 3,
			want: "unknown key; want one of tiers, overrides",
		},
		{
			name: "duplicate key",
			src:  "version: 1\nsafety:\n  dailySpendCap: 1\n  maxTransactionAmount: 1\n  dailySpendCap: 9\n",
			key:  "safety.dailySpendCap", line: 5,
			want: "defined twice, on lines 3 and 5",
		},
		{
			name: "duplicate tool",
			src:  "version: 1\ntools:\n  tiers:\n    a: 1\n    a: 2\n",
			key:  "tools.tiers.a", line: 5,
			want: "defined twice, on lines 4 and 5",
		},
		{
			name: "bool as string",
			src:  "version: 1\nsafety:\n  autopilotEnabled: \"true\"\n",
			key:  "safety.autopilotEnabled", line: 3,
			want: `got "true" (a string); want true or false`,
		},
		{
			name: "yes is not a bool",
			src:  "version: 1\nsafety:\n  autopilotEnabled: yes\n",
			key:  "safety.autopilotEnabled", line: 3,
			want: `got "yes" (a string); want true or false`,
		},
		{
			name: "number as bool",
			src:  "version: 1\nsafety:\n  dailySpendCap: true\n",
			key:  "safety.dailySpendCap", line: 3,
			want: "got true (true/false); want a USD amount",
		},
		{
			name: "empty value",
			src:  "version: 1\nsafety:\n  allowedTokens:\n",
			key:  "safety.allowedTokens", line: 3,
			want: "got an empty value; want a list of token symbols",
		},
		{
			name: "section not a mapping",
			src:  "version: 1\nsafety: [1]\n",
			key:  "safety", line: 2,
			want: "got a list; want a mapping",
		},
		{
			name: "tier as word",
			src:  "version: 1\ntools:\n  tiers:\n    a: high\n",
			key:  "tools.tiers.a", line: 4,
			want: `got "high" (a string); want a tier: 1, 2, 3 or 4`,
		},
		{
			name: "tier as fraction",
			src:  "version: 1\ntools:\n  tiers:\n    a: 2.5\n",
			key:  "tools.tiers.a", line: 4,
			want: "got 2.5 (a number); want a tier",
		},
		{
			name: "tier too large for an int",
			src:  "version: 1\ntools:\n  tiers:\n    a: 99999999999999999999999\n",
			key:  "tools.tiers.a", line: 4,
			want: "(a number); want a tier",
		},
		{
			name: "override not a mapping",
			src:  "version: 1\ntools:\n  overrides: [swap_token]\n",
			key:  "tools.overrides[0]", line: 3,
			want: `got "swap_token" (a string); want an override`,
		},
		{
			name: "number key for a tool",
			src:  "version: 1\ntools:\n  tiers:\n    123: 1\n",
			key:  "tools.tiers.123", line: 4,
			want: "want a name (quote it if it is one)",
		},
		{
			name: "custom tag",
			src:  "version: 1\nsafety:\n  dailySpendCap: !money 5\n",
			key:  "safety.dailySpendCap", line: 3,
			want: `got "5" (tagged !money)`,
		},
		{
			name: "alias",
			src:  "version: 1\nsafety:\n  allowedTokens: &a [X]\n  blockedTokens: *a\n",
			key:  "safety.blockedTokens", line: 4,
			want: "aliases (*a) are not supported",
		},
		{
			name: "unknown section",
			src:  "version: 1\ntelemetry:\n  allow: []\n",
			key:  "telemetry", line: 2,
			want: "unknown section, ignored; want one of version, safety, tools",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := mustParse(t, tt.src)
			p := problemAt(t, l, tt.key)
			if p.Line != tt.line || !strings.Contains(p.Message, tt.want) {
				t.Errorf("Parse(%q) problem = %v, want line %d and %q", tt.src, p, tt.line, tt.want)
			}
			checkPolicy(t, l.Policy)
		})
	}
}

func TestSuggest(t *testing.T) {
	known := []string{"maxTransactionAmount", "dailySpendCap", "killSwitchActive", "tiers"}
	tests := []struct{ in, want string }{
		{"dailySpendCapp", "dailySpendCap"},
		{"dailyspendcap", "dailySpendCap"},
		{"daily_spend_cap", "dailySpendCap"},
		{"dailySpndCp", "dailySpendCap"},
		{"killSwitch", "killSwitchActive"},
		{"tier", "tiers"},
		{"teirs", ""}, // two edits on a short word is too far
		{"tiars", "tiers"},
		{"sandbox", ""},
		{"", ""},
	}
	for _, tt := range tests {
		if got := suggest(tt.in, known); got != tt.want {
			t.Errorf("suggest(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
