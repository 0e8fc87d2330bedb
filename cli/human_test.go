package cli

import (
	"strings"
	"testing"

	"github.com/agentwarden/warden"
)

func TestWriteDecision(t *testing.T) {
	tests := []struct {
		name   string
		d      warden.Decision
		colour bool
		want   []string
	}{
		{name: "allow", d: warden.Decision{Verdict: warden.Allow, Reason: "get_price is tier 1", Rule: "tools.tier1", Tier: 1, TraceID: "t1"},
			want: []string{"ALLOW  get_price is tier 1\n", "  rule   tools.tier1 (tier 1)\n", "  next   go ahead", "  trace  t1\n"}},
		{name: "deny coloured", d: warden.Decision{Verdict: warden.Deny, Reason: "no", Rule: "r", TraceID: "t2"}, colour: true,
			want: []string{"\x1b[1;31mDENY\x1b[0m  no\n", "warden audit --trace t2"}},
		{name: "deny with a suggestion", d: warden.Decision{Verdict: warden.Deny, Reason: "no", Rule: "r", Suggestion: "use git push --force-with-lease"},
			want: []string{"  next   use git push --force-with-lease\n"}},
		{name: "ask pending", d: warden.Decision{Verdict: warden.Ask, Reason: "tier 3", Rule: "tools.tier3", ApprovalID: "A1"},
			want: []string{"ASK  tier 3\n", "`warden approvals approve A1`"}},
		{name: "ask without approval", d: warden.Decision{Verdict: warden.Ask, Reason: "tier 3", Rule: "tools.tier3"},
			want: []string{"run again with --wait"}},
		{name: "sandbox", d: warden.Decision{Verdict: warden.Sandbox, Reason: "piped", Rule: "shell.pipe", Sandbox: "guard", Rewrite: "warden exec -- x"},
			want: []string{"SANDBOX  piped\n", "  runs   warden exec -- x\n", "`warden exec --profile guard -- …`"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			if err := writeDecision(&b, tt.d, tt.colour); err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				if !strings.Contains(b.String(), w) {
					t.Errorf("writeDecision(%s) = %q, want it to hold %q", tt.name, b.String(), w)
				}
			}
			if !tt.colour && strings.Contains(b.String(), "\x1b[") {
				t.Errorf("writeDecision(%s) without colour = %q", tt.name, b.String())
			}
		})
	}
}
