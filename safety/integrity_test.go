package safety

import (
	"testing"

	"github.com/agentwarden/warden"
)

func TestPolicyIntegrity(t *testing.T) {
	cases := []struct {
		name    string
		problem string
		params  map[string]string
		want    warden.Verdict
	}{
		{name: "valid, fund-moving", params: map[string]string{"amount_usd": "5"}, want: warden.Allow},
		{name: "invalid, not fund-moving", problem: "line 4: unknown key", want: warden.Allow},
		{name: "invalid, fund-moving", problem: "line 4: unknown key", params: map[string]string{"amount_usd": "5"}, want: warden.Deny},
		{name: "invalid, malformed amount", problem: "x", params: map[string]string{"amount_usd": `"lots"`}, want: warden.Deny},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d, err := check(t, PolicyIntegrity{SafetyProblem: c.problem}, req(1, false, c.params))
			if err != nil || d.Verdict != c.want {
				t.Fatalf("PolicyIntegrity{%q}.Check = %v, %v; want %v", c.problem, d.Verdict, err, c.want)
			}
		})
	}
}
