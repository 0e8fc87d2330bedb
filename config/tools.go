package config

import (
	"maps"
	"path"
	"slices"

	"github.com/agentwarden/warden"
)

// unkillTool is the tool that turns the emergency stop off. Its tier is always
// 4: no file, tier entry or override may lower it.
const unkillTool = "unkill"

// toolsFile is the tools section as written in warden.yaml.
type toolsFile struct {
	// Tiers is laid over the default tiers: a tool named here replaces its
	// default tier, and a default tool left out keeps its default tier.
	Tiers     map[string]int `yaml:"tiers" want:"a mapping of tool names to tiers (1-4)" elem:"a tier: 1, 2, 3 or 4"`
	Overrides []overrideFile `yaml:"overrides" want:"a list of overrides ({tool: NAME, tier: N, …})" elem:"an override ({tool: NAME, tier: N, …})"`
	// Denied are tool names, or patterns (* matches any run of characters,
	// ? one), whose calls are always denied; the MCP proxy also hides them
	// from the tools it lists.
	Denied []string `yaml:"denied" want:"a list of tool names or patterns (e.g. mcp__github__delete_*)" elem:"a tool name or pattern"`
}

// overrideFile is one entry of tools.overrides.
type overrideFile struct {
	Tool         string    `yaml:"tool" want:"a tool name"`
	MaxAmountUSD *float64  `yaml:"max_amount_usd,omitempty" want:"a USD amount (a number >= 0)"`
	Recipients   *[]string `yaml:"recipients,omitempty" want:"a list of recipient addresses" elem:"a recipient address"`
	Tier         int       `yaml:"tier" want:"a tier: 1, 2, 3 or 4"`
}

var toolsSection = &sectionDef[toolsFile]{
	key:        "tools",
	defaultsOf: toolsDefaults,
	check:      checkTools,
	toRuntime:  toolsToRuntime,
}

func toolsDefaults() *toolsFile {
	smallSwap := 100.0
	return &toolsFile{
		Tiers: map[string]int{
			"get_price":      1,
			"get_balance":    1,
			"read_file":      1,
			"web_search":     1,
			"analyze_market": 2,
			"write_file":     3,
			"patch":          3,
			"buy_token":      3,
			"swap_token":     3,
			"transfer_token": 4,
			unkillTool:       4,
		},
		Overrides: []overrideFile{
			{Tool: "swap_token", MaxAmountUSD: &smallSwap, Tier: 2}, // small swaps are tier 2
		},
		Denied: []string{},
	}
}

func checkTools(f *toolsFile, c *checker) {
	for i, d := range f.Denied {
		c.checkName(d, "tool name or pattern", "denied", i)
		if _, err := path.Match(d, ""); err != nil {
			c.reportf([]any{"denied", i}, "%s is not a valid pattern (%v); want a tool name, with * and ? as wildcards", quote(d), err)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(f.Tiers)) {
		c.checkName(name, "tool name", "tiers", name)
		c.checkTier(name, f.Tiers[name], "tiers", name)
	}
	for i := range f.Overrides {
		o := &f.Overrides[i]
		if o.Tool == "" {
			c.reportf([]any{"overrides", i, "tool"}, "tool is missing; want the name of the tool this override applies to")
		} else {
			c.checkName(o.Tool, "tool name", "overrides", i, "tool")
		}
		if o.Tier == 0 {
			c.reportf([]any{"overrides", i, "tier"}, "tier is missing; want 1, 2, 3 or 4")
		} else {
			c.checkTier(o.Tool, o.Tier, "overrides", i, "tier")
		}
		if o.MaxAmountUSD != nil {
			c.checkUSD(*o.MaxAmountUSD, "overrides", i, "max_amount_usd")
		}
		if o.Recipients != nil {
			if len(*o.Recipients) == 0 {
				c.reportf([]any{"overrides", i, "recipients"}, "empty list; want at least one recipient (an empty list never means any recipient; remove the key to match any)")
			}
			for j, r := range *o.Recipients {
				c.checkName(r, "recipient", "overrides", i, "recipients", j)
			}
		}
	}
}

func toolsToRuntime(f *toolsFile, p *Policy) {
	t := Tools{
		Tiers:     make(map[string]warden.Tier, len(f.Tiers)),
		Overrides: make([]TierOverride, 0, len(f.Overrides)),
		Denied:    append([]string{}, f.Denied...),
	}
	for name, tier := range f.Tiers {
		t.Tiers[name] = warden.Tier(tier)
	}
	for _, o := range f.Overrides {
		r := TierOverride{Tool: o.Tool, Tier: warden.Tier(o.Tier)}
		if o.MaxAmountUSD != nil {
			u := usdOf(*o.MaxAmountUSD)
			r.MaxAmount = &u
		}
		if o.Recipients != nil {
			r.Recipients = append([]string{}, *o.Recipients...)
		}
		t.Overrides = append(t.Overrides, r)
	}
	p.Tools = t
}
