package tools

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/config"
)

func call(tool string, params map[string]string) *warden.Request {
	r := &warden.Request{Capability: warden.CapTool, Action: ActionCall, Resource: tool}
	for k, v := range params {
		if r.Params == nil {
			r.Params = map[string]json.RawMessage{}
		}
		r.Params[k] = json.RawMessage(v)
	}
	return r
}

func TestDefaultTiers(t *testing.T) {
	r := NewResolver(config.Default().Tools)
	cases := []struct {
		name string
		req  *warden.Request
		want warden.Tier
	}{
		{"get_price", call("get_price", nil), 1},
		{"get_balance", call("get_balance", nil), 1},
		{"read_file", call("read_file", nil), 1},
		{"web_search", call("web_search", nil), 1},
		{"analyze_market", call("analyze_market", nil), 2},
		{"small swap", call("swap_token", map[string]string{"amount_usd": "100"}), 2},
		{"swap just over small", call("swap_token", map[string]string{"amount_usd": "100.000001"}), 3},
		{"swap without an amount", call("swap_token", nil), 3},
		{"swap with a malformed amount", call("swap_token", map[string]string{"amount_usd": `"lots"`}), 3},
		{"write_file", call("write_file", nil), 3},
		{"patch", call("patch", nil), 3},
		{"buy_token", call("buy_token", nil), 3},
		{"transfer_token", call("transfer_token", map[string]string{"recipient": `"0xabc"`}), 4},
		{"unkill", call("unkill", nil), 4},
		{"unknown tool", call("frobnicate", nil), 3},
		{"empty name", call("", nil), 3},
		{"non-tool capability without a tool", &warden.Request{Capability: "shell", Action: "exec"}, 3},
		{"tool named by --tool", &warden.Request{Capability: "trade", Action: "swap", Tool: "get_price"}, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := r.Tier(c.req); got != c.want {
				t.Errorf("Tier(%s) = %v, want %v", c.name, got, c.want)
			}
		})
	}
}

func TestOverrides(t *testing.T) {
	hundred := warden.USD(100 * warden.MicrosPerDollar)
	r := Resolver{
		Tiers: map[string]warden.Tier{"transfer_token": 4, "trade.swap": 2},
		Overrides: []config.TierOverride{
			{Tool: "transfer_token", Recipients: []string{"0xAbC0000000000000000000000000000000000001"}, MaxAmount: &hundred, Tier: 3},
		},
	}
	cases := []struct {
		name string
		req  *warden.Request
		want warden.Tier
	}{
		{"own address, small", call("transfer_token", map[string]string{"recipient": `"0xabc0000000000000000000000000000000000001"`, "amount_usd": "50"}), 3},
		{"own address, too large", call("transfer_token", map[string]string{"recipient": `"0xabc0000000000000000000000000000000000001"`, "amount_usd": "150"}), 4},
		{"external address", call("transfer_token", map[string]string{"recipient": `"0xdead"`, "amount_usd": "5"}), 4},
		{"no recipient", call("transfer_token", map[string]string{"amount_usd": "5"}), 4},
		{"recipient not a string", call("transfer_token", map[string]string{"recipient": `["0xabc0000000000000000000000000000000000001"]`, "amount_usd": "5"}), 4},
		{"capability.action key", &warden.Request{Capability: "trade", Action: "swap"}, 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := r.Tier(c.req); got != c.want {
				t.Errorf("Tier(%s) = %v, want %v", c.name, got, c.want)
			}
		})
	}
}

func TestStage(t *testing.T) {
	cases := []struct {
		name       string
		tier       warden.Tier
		autonomous bool
		autopilot  bool
		action     string
		want       warden.Verdict
		manualOnly bool
	}{
		{name: "tier 1", tier: 1, want: warden.Allow},
		{name: "tier 2", tier: 2, want: warden.Ask},
		{name: "tier 2 autonomous", tier: 2, autonomous: true, want: warden.Ask},
		{name: "tier 3 human", tier: 3, want: warden.Ask},
		{name: "tier 3 autonomous no autopilot", tier: 3, autonomous: true, want: warden.Deny},
		{name: "tier 3 autonomous autopilot", tier: 3, autonomous: true, autopilot: true, want: warden.Allow},
		{name: "tier 3 human with autopilot still asks", tier: 3, autopilot: true, want: warden.Ask},
		{name: "tier 4", tier: 4, want: warden.Ask, manualOnly: true},
		{name: "tier 4 with autopilot", tier: 4, autopilot: true, want: warden.Ask, manualOnly: true},
		{name: "unset tier is tier 3", tier: 0, want: warden.Ask},
		{name: "wrong action", tier: 1, action: "exec", want: warden.Deny},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := call("some_tool", nil)
			r.Tier, r.Autonomous = c.tier, c.autonomous
			if c.action != "" {
				r.Action = c.action
			}
			d, err := Stage{Autopilot: c.autopilot}.Check(context.Background(), r)
			if err != nil || d.Verdict != c.want || d.ManualOnly != c.manualOnly {
				t.Fatalf("Check(%s) = %v manual_only=%v, %v; want %v manual_only=%v", c.name, d.Verdict, d.ManualOnly, err, c.want, c.manualOnly)
			}
		})
	}
	d, _ := Stage{}.Check(context.Background(), call("", nil))
	if d.Verdict != warden.Deny {
		t.Errorf("a tool call without a name = %v, want deny", d.Verdict)
	}
}

func TestStageDenied(t *testing.T) {
	s := Stage{Autopilot: true, Denied: []string{"mcp__github__delete_*", "rm_all"}}
	cases := []struct {
		tool string
		tier warden.Tier
		want warden.Verdict
	}{
		{"mcp__github__delete_repo", 1, warden.Deny},
		{"rm_all", 1, warden.Deny},
		{"mcp__github__list_repos", 1, warden.Allow},
		{"mcp__github__delete", 1, warden.Allow}, // the pattern needs the underscore
		{"mcp__gitlab__delete_repo", 1, warden.Allow},
	}
	for _, c := range cases {
		t.Run(c.tool, func(t *testing.T) {
			r := call(c.tool, nil)
			r.Tier = c.tier
			d, err := s.Check(context.Background(), r)
			if err != nil || d.Verdict != c.want {
				t.Fatalf("Check(%s) = %v (%s), %v; want %v", c.tool, d.Verdict, d.Rule, err, c.want)
			}
			if c.want == warden.Deny && d.Rule != "tools.denied" {
				t.Errorf("Check(%s) rule = %s, want tools.denied", c.tool, d.Rule)
			}
		})
	}
}
