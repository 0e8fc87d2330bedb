package config

import (
	"net"
	"slices"
	"strconv"

	yaml "go.yaml.in/yaml/v3"

	"github.com/agentwarden/warden/netguard"
)

// networkFile is the network section as written in warden.yaml.
type networkFile struct {
	AllowedDomains    []string      `yaml:"allowed_domains" want:"a list of rules such as api.github.com, *.example.com:443 or \"GET pypi.org\"" elem:"a rule: [METHODS ]HOST[:PORTS]"`
	DeniedDomains     []string      `yaml:"denied_domains" want:"a list of rules such as evil.example or *.evil.example" elem:"a rule: [METHODS ]HOST[:PORTS]"`
	AskUnknownDomains bool          `yaml:"ask_unknown_domains"`
	AllowPrivate      []string      `yaml:"allow_private" want:"a list of addresses or CIDR prefixes, e.g. [127.0.0.1, 10.0.0.0/8]" elem:"an address or CIDR prefix"`
	RateLimit         rateLimitFile `yaml:"rate_limit" want:"a mapping with per_minute and per_hour"`
	Resolver          string        `yaml:"resolver" want:"a DNS server as HOST:PORT, or \"\" for the system's"`
	Listen            string        `yaml:"listen" want:"an address such as 127.0.0.1:4750"`
}

type rateLimitFile struct {
	PerMinute int `yaml:"per_minute" want:"a whole number of requests (0 for no limit)"`
	PerHour   int `yaml:"per_hour" want:"a whole number of requests (0 for no limit)"`
}

// Network is the network guard's and the egress proxy's part of the policy
// (the network section).
type Network struct {
	// Allowed and Denied are domain rules (see netguard.Rule); deny wins.
	Allowed, Denied []string
	// AskUnknown asks about hosts no rule names; false denies them.
	AskUnknown bool
	// AllowPrivate opens private addresses and prefixes.
	AllowPrivate []string
	// PerMinute and PerHour cap each agent's requests; 0 is no cap.
	PerMinute, PerHour int
	// Resolver is the DNS server the proxy asks, or "" for the system's.
	Resolver string
	// Listen is where `warden proxy` listens.
	Listen string
}

// Guard is the network section as the guard's policy.
func (n Network) Guard() netguard.Policy {
	return netguard.Policy{Allowed: n.Allowed, Denied: n.Denied, AskUnknown: n.AskUnknown, AllowPrivate: n.AllowPrivate}
}

// Limits are the section's rate limits.
func (n Network) Limits() netguard.Limits {
	return netguard.Limits{PerMinute: n.PerMinute, PerHour: n.PerHour}
}

var networkSection = &sectionDef[networkFile]{
	key: "network",
	defaultsOf: func() *networkFile {
		return &networkFile{
			AllowedDomains: []string{}, DeniedDomains: []string{}, AskUnknownDomains: true, AllowPrivate: []string{},
			RateLimit: rateLimitFile{PerMinute: 30, PerHour: 500}, Listen: "127.0.0.1:4750",
		}
	},
	check:      checkNetwork,
	toRuntime:  networkToRuntime,
	failClosed: networkFailClosed,
}

func checkNetwork(f *networkFile, c *checker) {
	for _, l := range []struct {
		key   string
		rules []string
	}{{"allowed_domains", f.AllowedDomains}, {"denied_domains", f.DeniedDomains}} {
		for i, r := range l.rules {
			if _, err := netguard.ParseRule(r); err != nil {
				c.reportf([]any{l.key, i}, "%v", err)
			}
		}
	}
	for i, p := range f.AllowPrivate {
		if _, err := netguard.ParsePrivate(p); err != nil {
			c.reportf([]any{"allow_private", i}, "%v", err)
		}
	}
	if f.RateLimit.PerMinute < 0 {
		c.reportf([]any{"rate_limit", "per_minute"}, "per_minute %d is negative; use 0 for no limit", f.RateLimit.PerMinute)
	}
	if f.RateLimit.PerHour < 0 {
		c.reportf([]any{"rate_limit", "per_hour"}, "per_hour %d is negative; use 0 for no limit", f.RateLimit.PerHour)
	}
	if f.Resolver != "" && !validHostPort(f.Resolver) {
		c.reportf([]any{"resolver"}, "resolver %s is not HOST:PORT, e.g. 127.0.0.53:53", quote(f.Resolver))
	}
	if !validHostPort(f.Listen) {
		c.reportf([]any{"listen"}, "listen %s is not HOST:PORT, e.g. 127.0.0.1:4750", quote(f.Listen))
	}
}

func validHostPort(s string) bool {
	h, p, err := net.SplitHostPort(s)
	if err != nil || h == "" {
		return false
	}
	n, err := strconv.ParseUint(p, 10, 16)
	return err == nil && n > 0
}

// networkFailClosed keeps an invalid section from opening anything: no host
// is allowed or asked about until it is fixed.
func networkFailClosed(_ []*yaml.Node, f *networkFile) string {
	f.AskUnknownDomains = false
	return "until it is fixed every network request is denied"
}

func networkToRuntime(f *networkFile, p *Policy) {
	p.Network = Network{
		Allowed:      slices.Clone(f.AllowedDomains),
		Denied:       slices.Clone(f.DeniedDomains),
		AskUnknown:   f.AskUnknownDomains,
		AllowPrivate: slices.Clone(f.AllowPrivate),
		PerMinute:    f.RateLimit.PerMinute,
		PerHour:      f.RateLimit.PerHour,
		Resolver:     f.Resolver,
		Listen:       f.Listen,
	}
	for _, l := range []*[]string{&p.Network.Allowed, &p.Network.Denied, &p.Network.AllowPrivate} {
		if *l == nil {
			*l = []string{}
		}
	}
}
