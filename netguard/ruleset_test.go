package netguard

import (
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/agentwarden/warden"
)

// refDecide is the domain-rule part of Decide as it was written over a list
// of parsed Rules, before rules were compiled into a ruleSet: the reference
// the compiled (and cached) rules must agree with. It returns the decision
// for a host no address check stops.
func refDecide(allowed, denied []Rule, askUnknown bool, t Target, method string) warden.Decision {
	hostMatches := func(r *Rule, h string) bool {
		if h == r.Host {
			return r.Apex
		}
		return r.Sub && strings.HasSuffix(h, "."+r.Host)
	}
	portMatches := func(r *Rule, port uint16, deny bool) bool {
		if len(r.Ports) == 0 {
			return deny || port == 80 || port == 443
		}
		return slices.Contains(r.Ports, port)
	}
	methodMatches := func(r *Rule, m string) bool { return len(r.Methods) == 0 || slices.Contains(r.Methods, m) }
	for i := range denied {
		r := &denied[i]
		if hostMatches(r, t.Host) && portMatches(r, t.Port, true) && methodMatches(r, method) {
			return warden.Denyf("network.denied_domain", fmt.Sprintf("%s is denied by the rule %q in network.denied_domains", t.Authority(), r.Text))
		}
	}
	var hostOnly *Rule
	for i := range allowed {
		r := &allowed[i]
		if !hostMatches(r, t.Host) {
			continue
		}
		if portMatches(r, t.Port, false) && methodMatches(r, method) {
			return warden.Allowf("network.allowed_domain", fmt.Sprintf("%s is allowed by the rule %q in network.allowed_domains", t.Authority(), r.Text))
		}
		if hostOnly == nil {
			hostOnly = r
		}
	}
	if hostOnly != nil {
		what := fmt.Sprintf("port %d", t.Port)
		if portMatches(hostOnly, t.Port, false) {
			what = "the method " + method
		}
		return warden.Denyf("network.not_allowed_here", fmt.Sprintf("%s is allowed only as %q, which does not cover %s; add a rule for it to network.allowed_domains", t.Host, hostOnly.Text, what))
	}
	if askUnknown {
		return warden.Askf("network.unknown_domain", fmt.Sprintf("no rule names %s; network.ask_unknown_domains asks about hosts no rule names", t.Authority()))
	}
	return warden.Denyf("network.unknown_domain", fmt.Sprintf("no rule in network.allowed_domains names %s", t.Authority()))
}

// rulePolicy has allowed, denied, wildcard ("*." and "**."), address, port
// and method rules, overlapping so that order and precedence matter.
var rulePolicy = Policy{
	Allowed: []string{
		"api.github.com", "*.example.com", "**.pkg.example.org", "GET,HEAD pypi.org", "pypi.org:8443",
		"10.1.2.3:8080", "[2001:4860::1]:443", "Docs.Example.NET", "CONNECT tunnel.example.io:22,443",
		"b\u00fccher.example", "*.deep.a.example.com:9000", "post api.example.com",
	},
	Denied: []string{
		"evil.example.com", "*.bad.pkg.example.org", "delete api.github.com", "api.github.com:22",
		"10.9.9.9", "**.blocked.example", "PUT,PATCH *.example.com:8443",
	},
	AllowPrivate: []string{"10.0.0.0/8"},
}

// ruleQueries are targets that touch every rule of rulePolicy and its edges:
// apexes and subdomains of wildcards, suffixes that are not label
// boundaries, ports on and off the rules, and methods.
func ruleQueries(t testing.TB) []Query {
	hosts := []string{
		"api.github.com", "github.com", "xapi.github.com", "a.api.github.com",
		"example.com", "www.example.com", "a.b.example.com", "evil.example.com", "x.evil.example.com", "notexample.com",
		"pkg.example.org", "a.pkg.example.org", "bad.pkg.example.org", "x.bad.pkg.example.org",
		"pypi.org", "www.pypi.org", "10.1.2.3", "10.9.9.9", "[2001:4860::1]", "docs.example.net",
		"tunnel.example.io", "xn--bcher-kva.example", "deep.a.example.com", "x.deep.a.example.com",
		"blocked.example", "a.blocked.example", "unknown.test", "localhost",
	}
	var qs []Query
	for _, h := range hosts {
		for _, port := range []string{"", ":22", ":80", ":443", ":8080", ":8443", ":9000"} {
			for _, m := range []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "CONNECT", "OPTIONS"} {
				scheme := "https"
				if port == ":80" {
					scheme = "http"
				}
				tg, err := ParseURL(scheme + "://" + h + port + "/x")
				if err != nil {
					t.Fatalf("ParseURL(%q): %v", h+port, err)
				}
				qs = append(qs, Query{Target: tg, Method: m})
			}
		}
	}
	pub := []netip.Addr{netip.MustParseAddr("93.184.216.34")}
	priv := []netip.Addr{netip.MustParseAddr("10.0.0.5")}
	meta := []netip.Addr{netip.MustParseAddr("169.254.169.254")}
	for _, h := range []string{"api.github.com", "www.example.com", "unknown.test"} {
		tg, _ := ParseURL("https://" + h + "/")
		for _, as := range [][]netip.Addr{pub, priv, meta, nil} {
			qs = append(qs, Query{Target: tg, Method: "GET", Resolved: true, Addresses: as, ResolveError: "nxdomain"})
		}
	}
	return qs
}

// TestCompiledRulesDecideAsParsedRules: the compiled rule set decides every
// query as the rules' plain list did (refDecide), for allowed, denied,
// wildcard, address, port and method rules, asking about unknown hosts and
// not.
func TestCompiledRulesDecideAsParsedRules(t *testing.T) {
	for _, ask := range []bool{false, true} {
		p := rulePolicy
		p.AskUnknown = ask
		g, err := New(p)
		if err != nil {
			t.Fatal(err)
		}
		allowed, err := ParseRules(p.Allowed)
		if err != nil {
			t.Fatal(err)
		}
		denied, err := ParseRules(p.Denied)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[warden.Verdict]int{}
		for _, q := range ruleQueries(t) {
			if q.Resolved {
				continue
			}
			got := g.byRules(q.Target, q.Method)
			want := refDecide(allowed, denied, ask, q.Target, q.Method)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("ask=%v %s %s: compiled rules say %v %s (%s), the rule list %v %s (%s)", ask, q.Method, q.Target.Authority(), got.Verdict, got.Reason, got.Rule, want.Verdict, want.Reason, want.Rule)
			}
			seen[got.Verdict]++
		}
		if seen[warden.Allow] == 0 || seen[warden.Deny] == 0 || ask && seen[warden.Ask] == 0 {
			t.Fatalf("the queries reach too few verdicts: %v", seen)
		}
	}
}

// FuzzCompiledRules: for any rules that parse and any host, port and method,
// the compiled rules decide as the list of parsed rules does, and a guard
// read back from its cache decides as the one compiled.
func FuzzCompiledRules(f *testing.F) {
	f.Add("*.example.com", "evil.example.com", "a.evil.example.com", uint16(443), "GET")
	f.Add("**.example.com:8080", "GET example.com", "example.com", uint16(8080), "POST")
	f.Add("10.0.0.1:22", "*.x.org", "10.0.0.1", uint16(22), "CONNECT")
	f.Add("get,head pypi.org", "pypi.org:80", "pypi.org", uint16(443), "HEAD")
	f.Add("example.com", "example.com", "example.com", uint16(80), "get")
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, allow, deny, host string, port uint16, method string) {
		p := Policy{Allowed: strings.Split(allow, "\n"), Denied: strings.Split(deny, "\n")}
		allowed, err1 := ParseRules(p.Allowed)
		denied, err2 := ParseRules(p.Denied)
		g, err := New(p)
		if (err1 == nil && err2 == nil) != (err == nil) {
			t.Fatalf("New: %v; ParseRules: %v, %v", err, err1, err2)
		}
		if err != nil {
			return
		}
		name, addr, err := CanonicalHost(host)
		if err != nil || port == 0 {
			return
		}
		q := Query{Target: Target{Scheme: "https", Host: name, Addr: addr, Port: port}, Method: method}
		got := g.byRules(q.Target, strings.ToUpper(method))
		if want := refDecide(allowed, denied, false, q.Target, strings.ToUpper(method)); !reflect.DeepEqual(got, want) {
			t.Fatalf("compiled rules: %+v; rule list: %+v", got, want)
		}
		path := filepath.Join(dir, "rules")
		os.Remove(path)
		if _, _, err := newCached(p, path, "v"); err != nil {
			t.Fatal(err)
		}
		c, hit, err := newCached(p, path, "v")
		if err != nil || !hit {
			t.Fatalf("the second guard was not read from the cache (%v)", err)
		}
		if a, b := g.Decide(q), c.Decide(q); !reflect.DeepEqual(a, b) {
			t.Fatalf("compiled: %+v; from the cache: %+v", a, b)
		}
	})
}
