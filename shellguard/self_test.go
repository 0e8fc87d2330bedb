package shellguard

import (
	"testing"

	"github.com/agentwarden/warden"
)

// TestAgentCannotChangeItsGuard: warden's own commands that change its policy,
// hooks, emergency stop or home are denied; deciding and reading are not.
func TestAgentCannotChangeItsGuard(t *testing.T) {
	A, D := warden.Allow, warden.Deny
	cases := []struct {
		cmd  string
		want warden.Verdict
	}{
		{"warden check tool call get_price", A},
		{"warden audit --since 1h", A},
		{"warden audit verify", A},
		{"warden config get safety.dailySpendCap", A},
		{"warden config list", A},
		{"warden --home /tmp/h config validate", A},
		{"warden kill --reason loop", A},
		{"warden", A},
		{"warden config set safety.dailySpendCap 100000", D},
		{"warden --home=/tmp/h config set safety.autopilotEnabled true", D},
		{"warden unkill", D},
		{"warden install claude --user", D},
		{"warden uninstall claude", D},
		{"warden init --force", D},
		{"warden frobnicate", D},
		{"warden $SUB", D},
		{"sudo warden config set tools.tiers.transfer_token 1", D},
		{"bash -c 'warden unkill'", D},
		{"/usr/local/bin/warden config set shell.safe '[\"rm\"]'", D},
		{"warden-exec /usr/local/bin/warden --home /tmp/h exec --host-approved -- bash -c 'cat ~/.ssh/id_rsa'", D},
		{"/usr/local/bin/warden-exec", D},
	}
	p := corpusPolicy()
	for _, c := range cases {
		t.Run(c.cmd, func(t *testing.T) {
			r := Classify(c.cmd, corpusEnv, p)
			if r.Verdict != c.want {
				t.Errorf("Classify(%q) = %v (%s: %s), want %v", c.cmd, r.Verdict, r.Rule, r.Reason, c.want)
			}
		})
	}
}
