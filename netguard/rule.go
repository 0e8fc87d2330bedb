package netguard

import (
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
)

// Rule is one entry of allowed_domains or denied_domains, written
//
//	[METHODS ]HOST[:PORTS]
//
// HOST is an exact name or address, "*.example.com" (subdomains only, not
// the apex) or "**.example.com" (the apex and its subdomains); PORTS is one
// port or a comma-separated list; METHODS is a comma-separated list of HTTP
// methods. An allow rule without ports opens 80 and 443; a deny rule without
// ports covers every port. A rule without methods covers every method; a
// method list covers plain HTTP requests only (a CONNECT tunnel hides the
// method), unless it names CONNECT.
type Rule struct {
	Text    string   // as written
	Host    string   // canonical: the name without its wildcard prefix, or an address
	Sub     bool     // matches names below Host
	Apex    bool     // matches Host itself
	Ports   []uint16 // empty: see above
	Methods []string // upper case; empty: every method
}

// methods are the HTTP methods a rule may name.
var methods = []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "CONNECT", "TRACE", "QUERY"}

// ParseRule parses one rule; the error says what is wrong and how to write it.
func ParseRule(text string) (Rule, error) {
	r := Rule{Text: text, Apex: true}
	s := strings.TrimSpace(text)
	if m, rest, ok := strings.Cut(s, " "); ok {
		for _, meth := range strings.Split(m, ",") {
			meth = strings.ToUpper(strings.TrimSpace(meth))
			if !slices.Contains(methods, meth) {
				return Rule{}, fmt.Errorf("%q: %q is not an HTTP method (%s); write rules as [METHODS ]HOST[:PORTS], e.g. \"GET,HEAD api.example.com:443\"", text, meth, strings.Join(methods, ", "))
			}
			if !slices.Contains(r.Methods, meth) {
				r.Methods = append(r.Methods, meth)
			}
		}
		s = strings.TrimSpace(rest)
	}
	host := s
	// Without a ':' there is no port (net.SplitHostPort would fail, at the
	// cost of an error).
	if h, ports, err := splitHostPort(s); err == nil {
		host = h
		for _, p := range strings.Split(ports, ",") {
			n, err := strconv.ParseUint(strings.TrimSpace(p), 10, 16)
			if err != nil || n == 0 {
				return Rule{}, fmt.Errorf("%q: port %q is not a number from 1 to 65535", text, p)
			}
			if !slices.Contains(r.Ports, uint16(n)) {
				r.Ports = append(r.Ports, uint16(n))
			}
		}
	} else if strings.HasPrefix(s, "[") && strings.HasSuffix(s, "]") {
		host = s[1 : len(s)-1]
	}
	switch {
	case strings.HasPrefix(host, "**."):
		r.Sub, host = true, host[3:]
	case strings.HasPrefix(host, "*."):
		r.Sub, r.Apex, host = true, false, host[2:]
	}
	if strings.Contains(host, "*") {
		return Rule{}, fmt.Errorf("%q: a wildcard may only be a leading \"*.\" or \"**.\"; \"*\" alone would open everything", text)
	}
	name, addr, err := CanonicalHost(host)
	if err != nil {
		return Rule{}, fmt.Errorf("%q: %v", text, err)
	}
	if r.Sub && addr.IsValid() {
		return Rule{}, fmt.Errorf("%q: a wildcard cannot stand before an address", text)
	}
	if r.Sub && !strings.Contains(name, ".") {
		return Rule{}, fmt.Errorf("%q: a wildcard over a top-level domain (%s) is too broad; name the domain, e.g. *.example.%s", text, name, name)
	}
	r.Host = name
	return r, nil
}

var errNoPort = errors.New("no port")

func splitHostPort(s string) (host, port string, err error) {
	if strings.IndexByte(s, ':') < 0 {
		return "", "", errNoPort
	}
	return net.SplitHostPort(s)
}

// hostMatches reports whether the canonical host h is covered by the rule.
func (r *Rule) hostMatches(h string) bool {
	if h == r.Host {
		return r.Apex
	}
	return r.Sub && strings.HasSuffix(h, "."+r.Host)
}

// portMatches reports whether port is covered; allow rules without ports
// cover 80 and 443, deny rules every port.
func (r *Rule) portMatches(port uint16, deny bool) bool {
	if len(r.Ports) == 0 {
		return deny || port == 80 || port == 443
	}
	return slices.Contains(r.Ports, port)
}

// methodMatches reports whether method (upper case; "CONNECT" for a tunnel)
// is covered.
func (r *Rule) methodMatches(method string) bool {
	return len(r.Methods) == 0 || slices.Contains(r.Methods, method)
}

// ParseRules parses a list of rules, stopping at the first bad one.
func ParseRules(texts []string) ([]Rule, error) {
	rules := make([]Rule, 0, len(texts))
	for _, t := range texts {
		r, err := ParseRule(t)
		if err != nil {
			return nil, err
		}
		rules = append(rules, r)
	}
	return rules, nil
}
