package config

import (
	"net"
	"slices"
	"strconv"
	"strings"

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
	Secrets           []secretFile  `yaml:"secrets" want:"a list of {name, from_env or from_file, hosts, header}"`
}

// secretFile is one network.secrets entry.
type secretFile struct {
	Name      string   `yaml:"name" want:"the environment variable the sandbox sees, e.g. GITHUB_TOKEN"`
	FromEnv   string   `yaml:"from_env" want:"the environment variable holding the real value (default: name)"`
	FromFile  string   `yaml:"from_file" want:"an absolute path to a file holding the real value"`
	Hosts     []string `yaml:"hosts" want:"a list of host names the secret may be sent to" elem:"a host name"`
	Header    string   `yaml:"header" want:"the one request header it may be sent in, e.g. Authorization"`
	AllowHTTP bool     `yaml:"allow_http"`
}

// NetworkSecret is a secret a sandbox uses through the egress proxy without
// holding it: the sandbox sees a placeholder in Name, and the proxy puts the
// real value (from FromEnv or FromFile) in Header of requests to Hosts.
type NetworkSecret struct {
	Name, FromEnv, FromFile string
	Hosts                   []string
	Header                  string
	AllowHTTP               bool
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
	// Secrets are swapped for placeholders in sandboxes with network proxy.
	Secrets []NetworkSecret
}

// Guard is the network section as the guard's policy.
func (n Network) Guard() netguard.Policy {
	return netguard.Policy{Allowed: n.Allowed, Denied: n.Denied, AskUnknown: n.AskUnknown, AllowPrivate: n.AllowPrivate}
}

// Limits are the section's rate limits.
func (n Network) Limits() netguard.Limits {
	return netguard.Limits{PerMinute: n.PerMinute, PerHour: n.PerHour}
}

// DefaultAllowedDomains are the package registries and code hosts that
// ordinary builds reach, allowed by the default policy.
var DefaultAllowedDomains = []string{
	"registry.npmjs.org",
	"registry.yarnpkg.com",
	"proxy.golang.org",
	"sum.golang.org",
	"index.golang.org",
	"pypi.org",
	"files.pythonhosted.org",
	"crates.io",
	"index.crates.io",
	"static.crates.io",
	"repo.maven.apache.org",
	"repo1.maven.org",
	"plugins.gradle.org",
	"services.gradle.org",
	"rubygems.org",
	"index.rubygems.org",
	"github.com",
	"codeload.github.com",
	"objects.githubusercontent.com",
	"gitlab.com",
	"bitbucket.org",
}

var networkSection = &sectionDef[networkFile]{
	key: "network",
	defaultsOf: func() *networkFile {
		return &networkFile{
			AllowedDomains: slices.Clone(DefaultAllowedDomains), DeniedDomains: []string{}, AskUnknownDomains: true, AllowPrivate: []string{},
			RateLimit: rateLimitFile{PerMinute: 30, PerHour: 500}, Listen: "127.0.0.1:4750", Secrets: []secretFile{},
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
	for i := range f.Secrets {
		checkSecret(&f.Secrets[i], c, i)
	}
	if !validHostPort(f.Listen) {
		c.reportf([]any{"listen"}, "listen %s is not HOST:PORT, e.g. 127.0.0.1:4750", quote(f.Listen))
	}
}

func checkSecret(sf *secretFile, c *checker, i int) {
	at := func(k string) []any { return []any{"secrets", i, k} }
	if !envName(sf.Name) {
		c.reportf(at("name"), "name %s is not an environment variable name", quote(sf.Name))
	}
	switch {
	case sf.FromEnv != "" && sf.FromFile != "":
		c.reportf(at("from_file"), "give from_env or from_file, not both")
	case sf.FromFile != "" && !strings.HasPrefix(sf.FromFile, "/"):
		c.reportf(at("from_file"), "from_file %s must be an absolute path", quote(sf.FromFile))
	case sf.FromEnv != "" && !envName(sf.FromEnv):
		c.reportf(at("from_env"), "from_env %s is not an environment variable name", quote(sf.FromEnv))
	}
	if len(sf.Hosts) == 0 {
		c.reportf(at("hosts"), "a secret needs at least one host it may be sent to")
	}
	for j, h := range sf.Hosts {
		if name, addr, err := netguard.CanonicalHost(h); err != nil || addr.IsValid() || strings.Contains(h, "*") {
			c.reportf([]any{"secrets", i, "hosts", j}, "%s is not a host name (no wildcards or addresses: a secret goes to named hosts only)", quote(h))
		} else {
			sf.Hosts[j] = name
		}
	}
	if sf.Header == "" || strings.ContainsFunc(sf.Header, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-')
	}) {
		c.reportf(at("header"), "header %s is not an HTTP header name such as Authorization", quote(sf.Header))
	}
}

func envName(s string) bool {
	return s != "" && !strings.ContainsFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_')
	}) && !(s[0] >= '0' && s[0] <= '9')
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
	f.AllowedDomains = []string{}
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
	for _, sf := range f.Secrets {
		ns := NetworkSecret{Name: sf.Name, FromEnv: sf.FromEnv, FromFile: sf.FromFile, Hosts: slices.Clone(sf.Hosts), Header: sf.Header, AllowHTTP: sf.AllowHTTP}
		if ns.FromEnv == "" && ns.FromFile == "" {
			ns.FromEnv = ns.Name
		}
		p.Network.Secrets = append(p.Network.Secrets, ns)
	}
	for _, l := range []*[]string{&p.Network.Allowed, &p.Network.Denied, &p.Network.AllowPrivate} {
		if *l == nil {
			*l = []string{}
		}
	}
}
