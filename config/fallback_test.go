package config

import (
	"reflect"
	"strings"
	"testing"

	"github.com/agentwarden/warden"
)

// An invalid section falls back to its defaults as a whole; other sections
// still load.
func TestInvalidSectionFallsBack(t *testing.T) {
	l := mustParse(t, `version: 1
safety:
  maxTransactionAmount: 50
  dailySpendCap: -5
tools:
  tiers:
    my_tool: 2
`)
	if got, want := l.Policy.Safety, Default().Safety; !reflect.DeepEqual(got, want) {
		t.Errorf("safety = %+v, want the defaults %+v", got, want)
	}
	if l.Policy.Tools.Tiers["my_tool"] != warden.TierConfirmOnce {
		t.Errorf("tools.tiers.my_tool = %v, want 2: the valid tools section must still load", l.Policy.Tools.Tiers["my_tool"])
	}
	p := problemAt(t, l, "safety")
	if p.Line != 2 || !strings.Contains(p.Message, "uses the safety defaults") || strings.Contains(p.Message, "kill switch") {
		t.Errorf("fallback problem = %v", p)
	}
	for _, p := range l.Problems {
		if p.Section != "safety" {
			t.Errorf("problem in section %q: %v", p.Section, p)
		}
	}
	if v, _ := l.Get("safety.maxTransactionAmount"); v != 500.0 {
		t.Errorf("Get(safety.maxTransactionAmount) = %v, want the default 500", v)
	}
}

// Falling back must never switch the emergency stop off.
func TestFallbackKeepsKillSwitchOn(t *testing.T) {
	tests := []struct {
		name, safety string
		want         bool
	}{
		{"true", "killSwitchActive: true", true},
		{"True", "killSwitchActive: True", true},
		{"quoted", `killSwitchActive: "true"`, true},
		{"yes", "killSwitchActive: yes", true},
		{"on", "killSwitchActive: on", true},
		{"misspelled", "killSwitchActiv: true", true},
		{"lower case", "killswitchactive: true", true},
		{"false", "killSwitchActive: false", false},
		{"absent", "autopilotEnabled: true", false},
		{"not a bool", "killSwitchActive: maybe", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := "version: 1\nsafety:\n  dailySpendCap: -1\n  " + tt.safety + "\n"
			l := mustParse(t, src)
			if got := l.Policy.Safety.KillSwitch; got != tt.want {
				t.Errorf("Parse(%q) KillSwitch = %v, want %v", src, got, tt.want)
			}
			p := problemAt(t, l, "safety")
			if said := strings.Contains(p.Message, "kill switch stays on"); said != tt.want {
				t.Errorf("fallback problem = %q; mentions the kill switch: %v, want %v", p.Message, said, tt.want)
			}
			if v, _ := l.Get("safety.killSwitchActive"); v != tt.want {
				t.Errorf("Get(safety.killSwitchActive) = %v, want %v", v, tt.want)
			}
			if tt.want {
				// Everything else is the default.
				want := Default().Safety
				want.KillSwitch = true
				if !reflect.DeepEqual(l.Policy.Safety, want) {
					t.Errorf("safety = %+v, want %+v", l.Policy.Safety, want)
				}
			}
		})
	}
}

func TestTopLevelProblemsAreIgnored(t *testing.T) {
	l := mustParse(t, "version: 1\nbogus: 1\nsafety:\n  dailySpendCap: 7\n")
	p := problemAt(t, l, "bogus")
	if p.Section != "" || p.Line != 2 {
		t.Errorf("problem = %+v, want section \"\" on line 2", p)
	}
	if l.Policy.Safety.DailySpendCap != 7*warden.MicrosPerDollar {
		t.Errorf("DailySpendCap = %v, want 7: an unknown section must not affect the others", l.Policy.Safety.DailySpendCap)
	}
}
