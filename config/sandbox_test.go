package config

import (
	"strings"
	"testing"
)

func TestSandboxSection(t *testing.T) {
	cases := []struct {
		name      string
		yaml      string
		mode      string
		available bool
		problem   string
	}{
		{name: "default", yaml: "version: 1\n", mode: "standard", available: true},
		{name: "off", yaml: "version: 1\nsandbox:\n  mode: off\n", mode: "off", available: false},
		{name: "case folded", yaml: "version: 1\nsandbox:\n  mode: MAX\n  engine: Docker\n", mode: "max", available: true},
		{name: "bad mode falls back", yaml: "version: 1\nsandbox:\n  mode: strongest\n", mode: "standard", available: true, problem: "not a sandbox mode"},
		{name: "bad engine", yaml: "version: 1\nsandbox:\n  engine: firecracker\n", mode: "standard", available: true, problem: "not a sandbox engine"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l, err := Parse([]byte(c.yaml))
			if err != nil {
				t.Fatal(err)
			}
			if got := l.Policy.Sandbox; got.Mode != c.mode || got.Available() != c.available {
				t.Errorf("Sandbox = %+v available=%v, want mode %s available=%v", got, got.Available(), c.mode, c.available)
			}
			var msgs []string
			for _, p := range l.Problems {
				msgs = append(msgs, p.Error())
			}
			if all := strings.Join(msgs, "\n"); (c.problem == "") != (all == "") || !strings.Contains(all, c.problem) {
				t.Errorf("problems %q, want one containing %q", all, c.problem)
			}
		})
	}
}
