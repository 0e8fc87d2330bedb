package netguard

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/agentwarden/warden"
)

// Policy is the network section of the policy file in the form the guard
// needs. The zero value allows nothing and asks about nothing.
type Policy struct {
	Allowed, Denied []string
	// AskUnknown asks about a host no rule names instead of denying it.
	AskUnknown bool
	// AllowPrivate are the private addresses and prefixes (10/8, 127/8,
	// 172.16/12, 192.168/16, fc00::/7) requests may reach; they never open
	// an address the table blocks outright.
	AllowPrivate []string
}

// Guard judges network targets against a compiled Policy. It holds no
// per-request state and is safe for concurrent use.
type Guard struct {
	allowed, denied ruleSet
	askUnknown      bool
	private         []netip.Prefix
}

// New compiles a policy; the error names the first entry that does not parse.
func New(p Policy) (*Guard, error) {
	allowed, err := compileRules(p.Allowed)
	if err != nil {
		return nil, fmt.Errorf("allowed_domains: %w", err)
	}
	denied, err := compileRules(p.Denied)
	if err != nil {
		return nil, fmt.Errorf("denied_domains: %w", err)
	}
	g, err := newBase(p)
	if err != nil {
		return nil, err
	}
	g.allowed, g.denied = allowed, denied
	return g, nil
}

// newBase is the Guard for p without its domain rules.
func newBase(p Policy) (*Guard, error) {
	g := &Guard{askUnknown: p.AskUnknown}
	for _, s := range p.AllowPrivate {
		pfx, err := ParsePrivate(s)
		if err != nil {
			return nil, fmt.Errorf("allow_private: %w", err)
		}
		g.private = append(g.private, pfx)
	}
	return g, nil
}

// ParsePrivate parses an allow_private entry: an address or a CIDR prefix,
// normalised the way addresses are judged (so 127.0.0.1 also covers
// ::ffff:127.0.0.1).
func ParsePrivate(s string) (netip.Prefix, error) {
	s = strings.TrimSpace(s)
	var pfx netip.Prefix
	if strings.Contains(s, "/") {
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return netip.Prefix{}, fmt.Errorf("%q is not an address or CIDR prefix (e.g. 127.0.0.1 or 10.0.0.0/8)", s)
		}
		pfx = p.Masked()
	} else {
		a, err := netip.ParseAddr(s)
		if err != nil || a.Zone() != "" {
			return netip.Prefix{}, fmt.Errorf("%q is not an address or CIDR prefix (e.g. 127.0.0.1 or 10.0.0.0/8)", s)
		}
		pfx = netip.PrefixFrom(a, a.BitLen())
	}
	if a := pfx.Addr(); a.Is4In6() {
		pfx = netip.PrefixFrom(a.Unmap(), max(pfx.Bits()-96, 0))
	}
	return pfx, nil
}

// Query is one request to judge.
type Query struct {
	Target Target
	// Method is the HTTP method in upper case, or CONNECT for a tunnel.
	Method string
	// Resolved says the proxy resolved the name: Addresses are every answer
	// (an empty list is a failed lookup, ResolveError saying why).
	Resolved     bool
	Addresses    []netip.Addr
	ResolveError string
}

// Decide judges q. It denies a blocked or unopened private address (a
// literal, a loopback or metadata name, or any resolved answer), then a host
// an explicit deny rule names; it allows a host, port and method an allow
// rule covers; a host no rule names is asked about or denied. It records no
// state: rate limits are the Stage's.
func (g *Guard) Decide(q Query) warden.Decision {
	t := q.Target
	if t.Host == "" {
		return warden.Denyf("network.malformed", "the request names no host")
	}
	method := strings.ToUpper(q.Method)
	if method == "" {
		method = "GET"
	}
	if t.IsAddr() {
		if d, bad := g.judgeAddr(t.Host, t.Addr, false); bad {
			return d
		}
	} else if metadataNames[t.Host] {
		return warden.Denyf("network.metadata", fmt.Sprintf("%s is a cloud metadata service name; no rule can open it", t.Host))
	} else if IsLoopbackHost(t.Host) {
		if d, bad := g.judgeAddr(t.Host, netip.AddrFrom4([4]byte{127, 0, 0, 1}), false); bad {
			return d
		}
	}
	d := g.byRules(t, method)
	if d.Verdict == warden.Deny || !q.Resolved {
		return d
	}
	if len(q.Addresses) == 0 {
		why := q.ResolveError
		if why == "" {
			why = "no addresses"
		}
		return warden.Denyf("network.resolve", fmt.Sprintf("%s could not be resolved: %s", t.Host, why))
	}
	for _, a := range q.Addresses {
		if bad, blocked := g.judgeAddr(t.Host, a, true); blocked {
			bad.Reason = fmt.Sprintf("%s resolved to %s: %s", t.Host, a, bad.Reason)
			return bad
		}
	}
	return d
}

// byRules judges a host, port and method (upper case) by the domain rules
// alone: an explicit deny rule, then the allow rules; a host no rule names is
// asked about or denied.
func (g *Guard) byRules(t Target, method string) warden.Decision {
	bit := methodBit(method)
	if r, ok := g.denied.first(func(r *rec) bool {
		return r.hostMatches(t.Host) && r.portMatches(t.Port, true) && r.methodMatches(bit)
	}); ok {
		return warden.Denyf("network.denied_domain", fmt.Sprintf("%s is denied by the rule %q in network.denied_domains", t.Authority(), r.text))
	}
	return g.byAllowRules(t, method, bit)
}

func (g *Guard) byAllowRules(t Target, method string, bit uint16) warden.Decision {
	var hostOnly rec
	found := false
	if r, ok := g.allowed.first(func(r *rec) bool {
		if !r.hostMatches(t.Host) {
			return false
		}
		if r.portMatches(t.Port, false) && r.methodMatches(bit) {
			return true
		}
		if !found {
			hostOnly, found = *r, true
		}
		return false
	}); ok {
		return warden.Allowf("network.allowed_domain", fmt.Sprintf("%s is allowed by the rule %q in network.allowed_domains", t.Authority(), r.text))
	}
	if found {
		what := fmt.Sprintf("port %d", t.Port)
		if hostOnly.portMatches(t.Port, false) {
			what = "the method " + method
		}
		return warden.Denyf("network.not_allowed_here", fmt.Sprintf("%s is allowed only as %q, which does not cover %s; add a rule for it to network.allowed_domains", t.Host, hostOnly.text, what))
	}
	if g.askUnknown {
		return warden.Askf("network.unknown_domain", fmt.Sprintf("no rule names %s; network.ask_unknown_domains asks about hosts no rule names", t.Authority()))
	}
	return warden.Denyf("network.unknown_domain", fmt.Sprintf("no rule in network.allowed_domains names %s", t.Authority()))
}

// judgeAddr denies an address the table blocks, a private one no
// allow_private entry opens, and a reserved one unless it is the resolved
// answer for a name (resolved) or an allow_private entry names it.
func (g *Guard) judgeAddr(host string, a netip.Addr, resolved bool) (warden.Decision, bool) {
	class, why := Classify(a)
	switch class {
	case Public:
		return warden.Decision{}, false
	case Reserved:
		if resolved || g.PrivateAllowed(a) {
			return warden.Decision{}, false
		}
		return warden.Denyf("network.blocked_address", fmt.Sprintf("%s is in %s, which only a name's resolved answer or network.allow_private opens", NormalizeIP(a), why)), true
	case Private:
		if g.PrivateAllowed(a) {
			return warden.Decision{}, false
		}
		return warden.Denyf("network.private_address", fmt.Sprintf("%s is a private address (%s); add it to network.allow_private to reach it", NormalizeIP(a), why)), true
	}
	return warden.Denyf("network.blocked_address", fmt.Sprintf("%s is in %s, which no rule can open", NormalizeIP(a), why)), true
}

// PrivateAllowed reports whether a private address is opened by an
// allow_private entry.
func (g *Guard) PrivateAllowed(a netip.Addr) bool {
	n := NormalizeIP(a)
	return slices.ContainsFunc(g.private, func(p netip.Prefix) bool { return p.Contains(n) })
}

// AddressAllowed reports whether a connection to a may be made: the check
// the proxy's dialer repeats at connect time, on the address it dials.
func (g *Guard) AddressAllowed(a netip.Addr) error {
	// The proxy dials only addresses its decision judged: a reserved one
	// reached here as the resolved answer for an allowed name.
	if d, bad := g.judgeAddr("", a, true); bad {
		return fmt.Errorf("%s", d.Reason)
	}
	return nil
}

// metadataNames are cloud metadata service names. Their addresses are
// blocked anyway; naming them lets a decision made before resolution (and a
// short name completed by a search domain) be refused too.
var metadataNames = map[string]bool{
	"metadata":                     true,
	"metadata.google.internal":     true,
	"metadata.goog":                true,
	"instance-data":                true,
	"instance-data.ec2.internal":   true,
	"metadata.azure.internal":      true,
	"metadata.platformequinix.com": true,
	"metadata.tencentyun.com":      true,
}
