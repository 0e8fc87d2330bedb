package config

import (
	"slices"
	"strings"
	"testing"
)

func TestNetworkSection(t *testing.T) {
	d := mustParse(t, "version: 1\n").Policy.Network
	if !d.AskUnknown || d.PerMinute != 30 || d.PerHour != 500 || d.Listen != "127.0.0.1:4750" || !slices.Equal(d.Allowed, DefaultAllowedDomains) {
		t.Fatalf("defaults = %+v", d)
	}
	l := mustParse(t, `version: 1
network:
  allowed_domains: [api.github.com, "*.example.com:443", "GET pypi.org"]
  denied_domains: [evil.example]
  ask_unknown_domains: false
  allow_private: [127.0.0.1, 10.0.0.0/8]
  rate_limit: {per_minute: 0, per_hour: 100}
  resolver: 127.0.0.53:53
  secrets:
    - name: GITHUB_TOKEN
      hosts: [API.GitHub.com.]
      header: Authorization
`)
	if len(l.Problems) != 0 {
		t.Fatalf("problems: %v", l.Problems)
	}
	n := l.Policy.Network
	if n.AskUnknown || n.PerMinute != 0 || n.PerHour != 100 || n.Resolver != "127.0.0.53:53" || !slices.Equal(n.Denied, []string{"evil.example"}) || len(n.Allowed) != 3 {
		t.Fatalf("network = %+v", n)
	}
	if s := n.Secrets; len(s) != 1 || s[0].FromEnv != "GITHUB_TOKEN" || s[0].Hosts[0] != "api.github.com" {
		t.Fatalf("secrets = %+v, want from_env defaulting to the name and a canonical host", s)
	}
}

func TestNetworkSectionProblems(t *testing.T) {
	for _, c := range []struct{ yaml, key, msg string }{
		{"allowed_domains: ['*']", "network.allowed_domains[0]", "would open everything"},
		{"denied_domains: ['*.com']", "network.denied_domains[0]", "too broad"},
		{"allowed_domains: ['FETCH x.example']", "network.allowed_domains[0]", "not an HTTP method"},
		{"allow_private: [localhost]", "network.allow_private[0]", "not an address or CIDR"},
		{"rate_limit: {per_minute: -1}", "network.rate_limit.per_minute", "negative"},
		{"resolver: 8.8.8.8", "network.resolver", "HOST:PORT"},
		{"secrets: [{name: T, hosts: ['*.x.example'], header: Authorization}]", "network.secrets[0].hosts[0]", "no wildcards"},
		{"secrets: [{name: T, hosts: [], header: Authorization}]", "network.secrets[0].hosts", "at least one host"},
		{"secrets: [{name: T, from_file: rel.txt, hosts: [x.example], header: Authorization}]", "network.secrets[0].from_file", "absolute"},
		{"secrets: [{name: 'A B', hosts: [x.example], header: 'Auth: x'}]", "network.secrets[0].name", "environment variable"},
	} {
		l := mustParse(t, "version: 1\nnetwork:\n  ask_unknown_domains: true\n  "+c.yaml+"\n")
		p := problemAt(t, l, c.key)
		if !strings.Contains(p.Error(), c.msg) {
			t.Errorf("%s: problem %q, want %q", c.yaml, p.Error(), c.msg)
		}
		// An invalid section opens nothing: no allowed host, no asking.
		if n := l.Policy.Network; n.AskUnknown || len(n.Allowed) != 0 || len(n.Secrets) != 0 {
			t.Errorf("%s: invalid section falls back to %+v; want every request denied", c.yaml, n)
		}
	}
}
