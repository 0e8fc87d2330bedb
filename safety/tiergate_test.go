package safety

import (
	"testing"

	"github.com/agentwarden/warden"
)

func TestTierGate(t *testing.T) {
	cases := []struct {
		name       string
		tier       warden.Tier
		autonomous bool
		autopilot  bool
		want       warden.Verdict
	}{
		{name: "human tier 4", tier: 4, want: warden.Allow},
		{name: "autonomous tier 1", tier: 1, autonomous: true, want: warden.Allow},
		{name: "autonomous tier 2", tier: 2, autonomous: true, want: warden.Allow},
		{name: "autonomous tier 3 without autopilot", tier: 3, autonomous: true, want: warden.Deny},
		{name: "autonomous tier 3 with autopilot", tier: 3, autonomous: true, autopilot: true, want: warden.Allow},
		{name: "autonomous tier 4 with autopilot", tier: 4, autonomous: true, autopilot: true, want: warden.Deny},
		{name: "autonomous unset tier is tier 3", tier: 0, autonomous: true, want: warden.Deny},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d, err := check(t, TierGate{Autopilot: c.autopilot}, req(c.tier, c.autonomous, nil))
			if err != nil || d.Verdict != c.want {
				t.Fatalf("TierGate{%v}.Check(tier %d, autonomous %v) = %v, %v; want %v", c.autopilot, c.tier, c.autonomous, d.Verdict, err, c.want)
			}
		})
	}
}
