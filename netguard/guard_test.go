package netguard_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/netip"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/netguard"
)

// loadCorpus reads every case of the SSRF corpus.
func loadCorpus(t *testing.T) []corpusCase {
	t.Helper()
	f, err := os.Open(ssrfCorpus)
	if err != nil {
		t.Fatalf("SSRF corpus: %v (the ../shared checkout must sit beside the repository)", err)
	}
	defer f.Close()
	var cases []corpusCase
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var c corpusCase
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatalf("SSRF corpus: %v", err)
		}
		cases = append(cases, c)
	}
	if len(cases) == 0 {
		t.Fatal("the SSRF corpus is empty")
	}
	return cases
}

func mustGuard(t testing.TB, p netguard.Policy) *netguard.Guard {
	t.Helper()
	g, err := netguard.New(p)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// corpusPolicy names the hosts the corpus treats as allowed.
var corpusPolicy = netguard.Policy{
	Allowed: []string{"api.github.com", "example.com", "*.example.com", "allowed.example"},
	Denied:  []string{"evil.com"},
}

// The url and connect cases of the SSRF corpus, judged on the name (as
// `warden check network fetch` does); the dns cases with their answers (as
// the proxy does after resolving); redirects by judging where they lead.
func TestGuardCorpus(t *testing.T) {
	strict := corpusPolicy
	asking := corpusPolicy
	asking.AskUnknown = true
	gStrict, gAsk := mustGuard(t, strict), mustGuard(t, asking)
	ran := 0
	for _, c := range loadCorpus(t) {
		if c.Kind == "ip" || strings.Contains(c.Target, "own listener") || strings.Contains(c.Target, "with Host:") {
			continue // the address table's test, and the proxy's
		}
		ran++
		t.Run(c.Target, func(t *testing.T) {
			q, err := corpusQuery(t, c)
			gStrict, gAsk := gStrict, gAsk
			if c.Kind == "dns" {
				// Allow the name itself, so only its answers can block it.
				withName := func(p netguard.Policy) *netguard.Guard {
					p.Allowed = append(append([]string(nil), p.Allowed...), q.Target.Host)
					return mustGuard(t, p)
				}
				gStrict, gAsk = withName(strict), withName(asking)
			}
			if err != nil {
				if c.Expect != "block" {
					t.Fatalf("%s: refused to parse (%v), want allow", c.Target, err)
				}
				return
			}
			d := gStrict.Decide(q)
			if got := d.Verdict == warden.Allow; got != (c.Expect == "allow") {
				t.Fatalf("%s = %s (%s: %s), want %s (%s)", c.Target, d.Verdict, d.Rule, d.Reason, c.Expect, c.Why)
			}
			if c.Expect == "block" {
				// Asking about unknown hosts must not soften a block: the
				// address rules deny outright, the rest at most ask.
				d := gAsk.Decide(q)
				if d.Verdict == warden.Allow {
					t.Fatalf("%s allowed when unknown hosts are asked about: %s", c.Target, d.Reason)
				}
				addressy := map[string]bool{"encoding": true, "metadata": true, "ipv6-embedding": true, "this-network": true, "link-local": true, "loopback-name": true, "unicode-host": true, "metadata-name": true, "parser": true, "dns": true, "connect": true, "redirect": true, "scheme": true, "denylist-match": true, "port": true}
				if addressy[c.Category] && d.Verdict != warden.Deny {
					t.Fatalf("%s = %s (%s) when unknown hosts are asked about; want deny", c.Target, d.Verdict, d.Rule)
				}
			}
		})
	}
	if ran < 25 {
		t.Fatalf("ran %d corpus cases; the corpus should have more url, dns, redirect and connect cases", ran)
	}
}

// corpusQuery turns a corpus line into the query the guard sees.
func corpusQuery(t *testing.T, c corpusCase) (netguard.Query, error) {
	switch c.Kind {
	case "connect":
		auth := strings.TrimPrefix(c.Target, "CONNECT ")
		tg, err := netguard.ParseAuthority(auth)
		return netguard.Query{Target: tg, Method: "CONNECT"}, err
	case "redirect":
		_, loc, ok := strings.Cut(c.Target, "Location: ")
		if !ok {
			t.Fatalf("redirect case without a Location: %s", c.Target)
		}
		tg, err := netguard.ParseURL(loc)
		return netguard.Query{Target: tg}, err
	case "dns":
		tg, err := netguard.ParseURL(c.Target)
		if err != nil {
			t.Fatalf("%s: %v", c.Target, err)
		}
		q := netguard.Query{Target: tg, Resolved: true}
		for _, s := range c.ResolvesTo {
			q.Addresses = append(q.Addresses, netip.MustParseAddr(s))
		}
		return q, nil
	}
	tg, err := netguard.ParseURL(c.Target)
	return netguard.Query{Target: tg}, err
}

func TestParseURL(t *testing.T) {
	ok := []struct {
		in, host, addr string
		port           uint16
	}{
		{"https://API.GitHub.com./x", "api.github.com", "", 443},
		{"http://example.com:8080", "example.com", "", 8080},
		{"ws://example.com", "example.com", "", 80},
		{"wss://example.com/s?q=1", "example.com", "", 443},
		{"http://\uff11\uff12\uff17\uff0e\uff10\uff0e\uff10\uff0e\uff11/", "127.0.0.1", "127.0.0.1", 80},
		{"http://\u24db\u24de\u24d2\u24d0\u24db\u24d7\u24de\u24e2\u24e3/", "localhost", "", 80},
		{"http://b\u00fccher.example/", "xn--bcher-kva.example", "", 80},
		{"http://0x7f000001/", "127.0.0.1", "127.0.0.1", 80},
		{"http://2130706433/", "127.0.0.1", "127.0.0.1", 80},
		{"http://[::ffff:127.0.0.1]:81/", "::ffff:127.0.0.1", "::ffff:127.0.0.1", 81},
		{"http://[fe80::1%25eth0]/", "fe80::1", "fe80::1%eth0", 80},
		{"http://under_score.example/", "under_score.example", "", 80},
	}
	for _, c := range ok {
		tg, err := netguard.ParseURL(c.in)
		if err != nil {
			t.Errorf("ParseURL(%q): %v", c.in, err)
			continue
		}
		if tg.Host != c.host || tg.Port != c.port || (c.addr != "") != tg.IsAddr() || (c.addr != "" && tg.Addr.String() != c.addr) {
			t.Errorf("ParseURL(%q) = host %q addr %v port %d, want %q %q %d", c.in, tg.Host, tg.Addr, tg.Port, c.host, c.addr, c.port)
		}
	}
	bad := map[string]string{
		"file:///etc/passwd":                          "network.scheme",
		"gopher://example.com/":                       "network.scheme",
		"//127.0.0.1/":                                "network.scheme",
		"http://allowed.example@127.0.0.1/":           "network.userinfo",
		"http://127.0.0.1#@allowed.example/":          "network.userinfo",
		"http://exa mple.com/":                        "network.malformed",
		"http://example.com\\@evil.com/":              "network.malformed",
		"http://example.com\r\nX: y":                  "network.malformed",
		"http://a..b/":                                "network.malformed",
		"http://example.com:0/":                       "network.malformed",
		"http://example.com:65536/":                   "network.malformed",
		"http://example.com:+80/":                     "network.malformed",
		"http://1.2.3.4.5/":                           "network.malformed",
		"http://example.123/":                         "network.malformed",
		"http://exa%41mple.com/":                      "network.malformed",
		"http:example.com":                            "network.malformed",
		"http://":                                     "network.malformed",
		"http://" + strings.Repeat("a", 64) + ".com/": "network.malformed",
	}
	for in, rule := range bad {
		_, err := netguard.ParseURL(in)
		te, ok := err.(*netguard.TargetError)
		if !ok || te.Rule != rule {
			t.Errorf("ParseURL(%q) error = %v, want rule %s", in, err, rule)
		}
	}
}

func TestParseAuthority(t *testing.T) {
	for in, want := range map[string]string{
		"api.github.com:443": "api.github.com:443",
		"0x7f000001:443":     "127.0.0.1:443",
		"[::1]:22":           "[::1]:22",
		"EXAMPLE.com.:8443":  "example.com:8443",
		"127.1:80":           "127.0.0.1:80",
	} {
		tg, err := netguard.ParseAuthority(in)
		if err != nil || tg.Authority() != want {
			t.Errorf("ParseAuthority(%q) = %q, %v; want %q", in, tg.Authority(), err, want)
		}
	}
	for _, in := range []string{"example.com", "::1:22", "a@b:443", "example.com:443/x", "", "example.com:http"} {
		if _, err := netguard.ParseAuthority(in); err == nil {
			t.Errorf("ParseAuthority(%q) succeeded, want an error", in)
		}
	}
}

func TestParseRule(t *testing.T) {
	ok := []struct {
		in   string
		want netguard.Rule
	}{
		{"api.github.com", netguard.Rule{Host: "api.github.com", Apex: true}},
		{"*.example.com", netguard.Rule{Host: "example.com", Sub: true}},
		{"**.example.com", netguard.Rule{Host: "example.com", Sub: true, Apex: true}},
		{"example.com:8080,8443", netguard.Rule{Host: "example.com", Apex: true, Ports: []uint16{8080, 8443}}},
		{"get,HEAD pypi.org", netguard.Rule{Host: "pypi.org", Apex: true, Methods: []string{"GET", "HEAD"}}},
		{"127.0.0.1:3000", netguard.Rule{Host: "127.0.0.1", Apex: true, Ports: []uint16{3000}}},
		{"B\u00fccher.example", netguard.Rule{Host: "xn--bcher-kva.example", Apex: true}},
	}
	for _, c := range ok {
		r, err := netguard.ParseRule(c.in)
		if err != nil {
			t.Errorf("ParseRule(%q): %v", c.in, err)
			continue
		}
		c.want.Text = c.in
		if r.Host != c.want.Host || r.Sub != c.want.Sub || r.Apex != c.want.Apex || !equal(r.Ports, c.want.Ports) || !equal(r.Methods, c.want.Methods) {
			t.Errorf("ParseRule(%q) = %+v, want %+v", c.in, r, c.want)
		}
	}
	for _, in := range []string{"*", "*.", "*.com", "ex*ample.com", "a.*.example.com", "example.com:0", "example.com:x", "G3T example.com", "*.127.0.0.1", "", "exa mple.com"} {
		if _, err := netguard.ParseRule(in); err == nil {
			t.Errorf("ParseRule(%q) succeeded, want an error", in)
		}
	}
}

func equal[T comparable](a, b []T) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestDecideOrder(t *testing.T) {
	g := mustGuard(t, netguard.Policy{
		Allowed:      []string{"**.example.com", "*.wild.test", "GET,HEAD api.example.org", "dev.test:3000", "127.0.0.1:8080", "evil.example.com"},
		Denied:       []string{"evil.example.com", "*.bad.example.com"},
		AskUnknown:   true,
		AllowPrivate: []string{"127.0.0.1", "10.1.0.0/16"},
	})
	cases := []struct {
		req      string
		method   string
		resolved []string
		verdict  warden.Verdict
		rule     string
	}{
		{"https://example.com/", "", nil, warden.Allow, "network.allowed_domain"},
		{"https://a.b.example.com/", "", nil, warden.Allow, "network.allowed_domain"},
		{"https://wild.test/", "", nil, warden.Ask, "network.unknown_domain"}, // *.x is not the apex
		{"https://x.wild.test/", "", nil, warden.Allow, "network.allowed_domain"},
		{"https://evil.example.com/", "", nil, warden.Deny, "network.denied_domain"}, // deny wins over allow
		{"https://evil.example.com:8443/", "", nil, warden.Deny, "network.denied_domain"},
		{"https://x.bad.example.com/", "", nil, warden.Deny, "network.denied_domain"},
		{"https://example.com:25/", "", nil, warden.Deny, "network.not_allowed_here"},
		{"https://api.example.org/", "GET", nil, warden.Allow, "network.allowed_domain"},
		{"https://api.example.org/", "POST", nil, warden.Deny, "network.not_allowed_here"},
		{"http://dev.test:3000/", "", []string{"127.0.0.1"}, warden.Allow, "network.allowed_domain"},
		{"http://dev.test:3000/", "", []string{"127.0.0.2"}, warden.Deny, "network.private_address"},
		{"http://dev.test:3000/", "", []string{"127.0.0.1", "169.254.169.254"}, warden.Deny, "network.blocked_address"},
		{"http://dev.test:3000/", "", []string{}, warden.Deny, "network.resolve"},
		{"http://127.0.0.1:8080/", "", nil, warden.Allow, "network.allowed_domain"},
		{"http://[::ffff:127.0.0.1]:8080/", "", nil, warden.Ask, "network.unknown_domain"}, // rules name hosts as written
		{"http://127.0.0.2:8080/", "", nil, warden.Deny, "network.private_address"},
		{"http://10.1.2.3/", "", nil, warden.Ask, "network.unknown_domain"},
		{"http://10.2.0.1/", "", nil, warden.Deny, "network.private_address"},
		{"http://localhost:8080/", "", nil, warden.Ask, "network.unknown_domain"},
		{"http://[::1]/", "", nil, warden.Deny, "network.blocked_address"},
		{"http://metadata.google.internal/", "", nil, warden.Deny, "network.metadata"},
		{"https://unknown.test/", "", nil, warden.Ask, "network.unknown_domain"},
		// Documentation and benchmarking ranges: a name's resolved answer
		// there opens (an operator's intercepting resolver); a literal does not.
		{"https://example.com/", "", []string{"203.0.113.80"}, warden.Allow, "network.allowed_domain"},
		{"https://example.com/", "", []string{"2001:db8::80"}, warden.Allow, "network.allowed_domain"},
		{"https://example.com/", "", []string{"203.0.113.80", "10.0.0.1"}, warden.Deny, "network.private_address"},
		{"https://203.0.113.80/", "", nil, warden.Deny, "network.blocked_address"},
		{"https://198.18.0.1/", "", nil, warden.Deny, "network.blocked_address"},
		{"https://unknown.test/", "", []string{"192.0.2.7"}, warden.Ask, "network.unknown_domain"},
	}
	for _, c := range cases {
		tg, err := netguard.ParseURL(c.req)
		if err != nil {
			t.Fatal(err)
		}
		q := netguard.Query{Target: tg, Method: c.method}
		if c.resolved != nil {
			q.Resolved = true
			for _, s := range c.resolved {
				q.Addresses = append(q.Addresses, netip.MustParseAddr(s))
			}
		}
		d := g.Decide(q)
		if d.Verdict != c.verdict || d.Rule != c.rule {
			t.Errorf("%s %s %v = %s %s (%s), want %s %s", c.method, c.req, c.resolved, d.Verdict, d.Rule, d.Reason, c.verdict, c.rule)
		}
	}
}

func TestUnknownHostsDeniedWithoutAsk(t *testing.T) {
	g := mustGuard(t, netguard.Policy{})
	tg, _ := netguard.ParseURL("https://example.com/")
	if d := g.Decide(netguard.Query{Target: tg}); d.Verdict != warden.Deny || d.Rule != "network.unknown_domain" {
		t.Fatalf("unknown host with ask_unknown_domains false = %s %s, want deny", d.Verdict, d.Rule)
	}
}

func TestStageRateLimit(t *testing.T) {
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	s := netguard.Stage{
		Guard:   mustGuard(t, netguard.Policy{Allowed: []string{"example.com"}}),
		Limiter: netguard.NewLimiter(netguard.Limits{PerMinute: 3, PerHour: 5}),
		Now:     func() time.Time { return now },
	}
	req := func(agent string) warden.Decision {
		d, err := s.Check(context.Background(), &warden.Request{Capability: warden.CapNetwork, Action: "fetch", Resource: "https://example.com/", RequestedBy: agent})
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	for i := range 3 {
		if d := req("a"); d.Verdict != warden.Allow {
			t.Fatalf("request %d = %s %s, want allow", i, d.Verdict, d.Reason)
		}
	}
	d := req("a")
	if d.Verdict != warden.Deny || d.Rule != "network.rate_limit" || !strings.Contains(d.Reason, "2026-11-21T12:01:00Z") {
		t.Fatalf("4th request in a minute = %s %s %q, want a rate-limit deny naming the reset time", d.Verdict, d.Rule, d.Reason)
	}
	if d := req("b"); d.Verdict != warden.Allow {
		t.Fatalf("another agent = %s, want allow (limits are per agent)", d.Verdict)
	}
	now = now.Add(time.Minute)
	req("a")
	req("a")
	if d := req("a"); d.Verdict != warden.Deny || !strings.Contains(d.Reason, "per_hour") {
		t.Fatalf("6th request in an hour = %s %q, want the hourly limit", d.Verdict, d.Reason)
	}
	// A denied request does not count.
	denied, _ := s.Check(context.Background(), &warden.Request{Capability: warden.CapNetwork, Action: "fetch", Resource: "file:///x", RequestedBy: "c"})
	if denied.Verdict != warden.Deny {
		t.Fatal("file URL allowed")
	}
}

func TestStageRefusesWhatItCannotRead(t *testing.T) {
	s := netguard.Stage{Guard: mustGuard(t, netguard.Policy{Allowed: []string{"example.com"}})}
	for _, r := range []warden.Request{
		{Capability: warden.CapShell, Action: "fetch", Resource: "https://example.com/"},
		{Capability: warden.CapNetwork, Action: "teleport", Resource: "https://example.com/"},
		{Capability: warden.CapNetwork, Action: "fetch", Resource: "https://example.com/", Params: map[string]json.RawMessage{"addresses": json.RawMessage(`"8.8.8.8"`)}},
		{Capability: warden.CapNetwork, Action: "fetch", Resource: "https://example.com/", Params: map[string]json.RawMessage{"addresses": json.RawMessage(`["not an ip"]`)}},
		{Capability: warden.CapNetwork, Action: "fetch", Resource: "https://example.com/", Params: map[string]json.RawMessage{"method": json.RawMessage(`7`)}},
	} {
		d, err := s.Check(context.Background(), &r)
		if err != nil || d.Verdict != warden.Deny {
			t.Errorf("%+v = %s, %v; want deny", r, d.Verdict, err)
		}
	}
	if d, _ := (netguard.Stage{}).Check(context.Background(), &warden.Request{Capability: warden.CapNetwork, Action: "fetch", Resource: "https://example.com/"}); d.Verdict != warden.Deny || d.Rule != "network.no_policy" {
		t.Errorf("stage without a guard = %s %s, want deny network.no_policy", d.Verdict, d.Rule)
	}
}
