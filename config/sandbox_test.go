package config

import (
	"strings"
	"testing"
	"time"
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

func TestSandboxProfiles(t *testing.T) {
	cases := []struct {
		name    string
		yaml    string
		check   func(t *testing.T, s Sandbox)
		problem string
	}{
		{name: "built-in profiles", yaml: "version: 1\n", check: func(t *testing.T, s Sandbox) {
			g := s.Profiles[ProfileGuard]
			if g.Memory != 64<<20 || g.CPU != 10*time.Second || !g.NoSpawn || g.Network != "none" || g.Project != "read" || g.Mode != "standard" {
				t.Errorf("guard profile = %+v", g)
			}
			if d := s.Profiles[ProfileDefault]; d.NoSpawn || d.Timeout != 30*time.Second {
				t.Errorf("default profile = %+v", d)
			}
		}},
		{name: "a partial guard keeps the rest", yaml: "version: 1\nsandbox:\n  profiles:\n    guard:\n      memory: 32M\n", check: func(t *testing.T, s Sandbox) {
			if g := s.Profiles[ProfileGuard]; g.Memory != 32<<20 || !g.NoSpawn || g.CPU != 10*time.Second {
				t.Errorf("guard profile = %+v", g)
			}
		}},
		{name: "a new profile starts from default", yaml: "version: 1\nsandbox:\n  profiles:\n    build:\n      mode: max\n      project: write\n", check: func(t *testing.T, s Sandbox) {
			if b := s.Profiles["build"]; b.Mode != "max" || b.Project != "write" || b.Memory != 512<<20 {
				t.Errorf("build profile = %+v", b)
			}
		}},
		{name: "a bad size", yaml: "version: 1\nsandbox:\n  profiles:\n    guard:\n      memory: lots\n", problem: "memory"},
		{name: "a bad duration", yaml: "version: 1\nsandbox:\n  profiles:\n    guard:\n      cpu: forever\n", problem: "not a duration"},
		{name: "no timeout", yaml: "version: 1\nsandbox:\n  profiles:\n    guard:\n      timeout: 0s\n", problem: "timeout must be greater"},
		{name: "a relative path", yaml: "version: 1\nsandbox:\n  profiles:\n    guard:\n      read_only: [src]\n", problem: "must be absolute"},
		{name: "a bad name", yaml: "version: 1\nsandbox:\n  profiles:\n    \"a b\":\n      memory: 1M\n", problem: "profile name"},
		{name: "an unknown key", yaml: "version: 1\nsandbox:\n  profiles:\n    guard:\n      memroy: 1M\n", problem: "memroy"},
		{name: "off needs the unsafe switch", yaml: "version: 1\nsandbox:\n  profiles:\n    raw:\n      mode: off\n", problem: "unsafe_allow_off"},
		{name: "off with the unsafe switch", yaml: "version: 1\nsandbox:\n  unsafe_allow_off: true\n  profiles:\n    raw:\n      mode: off\n", check: func(t *testing.T, s Sandbox) {
			if s.Profiles["raw"].Mode != "off" || !s.UnsafeAllowOff {
				t.Errorf("raw profile = %+v", s.Profiles["raw"])
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l, err := Parse([]byte(c.yaml))
			if err != nil {
				t.Fatal(err)
			}
			var msgs []string
			for _, p := range l.Problems {
				msgs = append(msgs, p.Error())
			}
			all := strings.Join(msgs, "\n")
			if (c.problem == "") != (all == "") || !strings.Contains(all, c.problem) {
				t.Fatalf("problems %q, want one containing %q", all, c.problem)
			}
			if c.check != nil {
				c.check(t, l.Policy.Sandbox)
			}
			if _, ok := l.Policy.Sandbox.Profiles[ProfileGuard]; !ok {
				t.Errorf("the policy has no guard profile")
			}
		})
	}
}
