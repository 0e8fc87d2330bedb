package safety

import (
	"testing"

	"github.com/agentwarden/warden"
)

func TestManualOnly(t *testing.T) {
	cases := []struct {
		tier       warden.Tier
		want       warden.Verdict
		manualOnly bool
	}{
		{1, warden.Allow, false},
		{2, warden.Allow, false},
		{3, warden.Allow, false},
		{4, warden.Ask, true},
	}
	for _, c := range cases {
		t.Run(c.tier.String(), func(t *testing.T) {
			d, err := check(t, ManualOnly{}, req(c.tier, false, nil))
			if err != nil || d.Verdict != c.want || d.ManualOnly != c.manualOnly {
				t.Fatalf("ManualOnly.Check(tier %d) = %v manual_only=%v, %v; want %v manual_only=%v", c.tier, d.Verdict, d.ManualOnly, err, c.want, c.manualOnly)
			}
		})
	}
}
