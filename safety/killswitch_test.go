package safety

import (
	"testing"

	"github.com/agentwarden/warden"
)

func TestKillSwitch(t *testing.T) {
	cases := []struct {
		name       string
		active     bool
		tier       warden.Tier
		tool       string
		autonomous bool
		want       warden.Verdict
	}{
		{name: "off tier 4", active: false, tier: 4, want: warden.Allow},
		{name: "on tier 1", active: true, tier: 1, want: warden.Allow},
		{name: "on tier 2", active: true, tier: 2, want: warden.Deny},
		{name: "on tier 3", active: true, tier: 3, want: warden.Deny},
		{name: "on tier 4", active: true, tier: 4, want: warden.Deny},
		{name: "on unset tier is treated as tier 3", active: true, tier: 0, want: warden.Deny},
		{name: "on release by a human", active: true, tier: 4, tool: ReleaseTool, want: warden.Allow},
		{name: "on release on an autonomous turn", active: true, tier: 4, tool: ReleaseTool, autonomous: true, want: warden.Deny},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := req(c.tier, c.autonomous, nil)
			r.Tool = c.tool
			d, err := check(t, KillSwitch{Active: c.active}, r)
			if err != nil || d.Verdict != c.want {
				t.Fatalf("KillSwitch{%v}.Check(tier %d) = %v, %v; want %v", c.active, c.tier, d.Verdict, err, c.want)
			}
			if d.Rule != "safety.kill_switch" || d.Reason == "" {
				t.Errorf("rule %q reason %q: want safety.kill_switch and a reason", d.Rule, d.Reason)
			}
		})
	}
}
