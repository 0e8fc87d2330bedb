package netguard_test

import (
	"net/netip"
	"testing"

	"github.com/agentwarden/warden/netguard"
)

// FuzzParseURL checks that parsing, canonicalising and classifying agree:
// a parsed host is already canonical, an address host is what netip reads,
// a name host is no address in any spelling, the origin parses back to the
// same target, and the guard decides without panicking.
func FuzzParseURL(f *testing.F) {
	for _, s := range []string{
		"https://api.github.com/", "http://0x7f000001/", "http://[::ffff:127.0.0.1]:8080/x?y",
		"http://\uff11\uff12\uff17\uff0e\uff10\uff0e\uff10\uff0e\uff11/", "http://a@b/", "http://[fe80::1%25eth0]/",
		"ws://x.example./", "http://127.1/", "http://xn--bcher-kva.example/", "http://b\u00fccher.example/",
		"http://1.2.3.4.5/", "http://example.com:65535/", "http://_a.example/", "http://x#@y/",
	} {
		f.Add(s)
	}
	g, err := netguard.New(netguard.Policy{Allowed: []string{"**.x.example", "127.0.0.1:8080"}, AskUnknown: true, AllowPrivate: []string{"127.0.0.1"}})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		tg, err := netguard.ParseURL(raw)
		if err != nil {
			return
		}
		name, addr, err := netguard.CanonicalHost(tg.Host)
		if err != nil || name != tg.Host || addr.IsValid() != tg.IsAddr() {
			t.Fatalf("%q: host %q is not canonical: CanonicalHost = %q, %v, %v", raw, tg.Host, name, addr, err)
		}
		if tg.IsAddr() {
			if a, err := netip.ParseAddr(tg.Host); err != nil || a != tg.Addr.WithZone("") {
				t.Fatalf("%q: address host %q does not parse back to %v", raw, tg.Host, tg.Addr)
			}
		} else {
			if _, err := netip.ParseAddr(tg.Host); err == nil {
				t.Fatalf("%q: name host %q is an address", raw, tg.Host)
			}
			if _, ok := netguard.ParseLegacyIPv4(tg.Host); ok {
				t.Fatalf("%q: name host %q is a legacy IPv4 address", raw, tg.Host)
			}
		}
		back, err := netguard.ParseURL(tg.Origin())
		if err != nil || back.Host != tg.Host || back.Port != tg.Port || back.Scheme != tg.Scheme {
			t.Fatalf("%q: origin %q parses to %+v, %v", raw, tg.Origin(), back, err)
		}
		_ = g.Decide(netguard.Query{Target: tg})
	})
}

// FuzzParseRule checks that a rule that parses names a canonical host.
func FuzzParseRule(f *testing.F) {
	for _, s := range []string{"api.github.com", "*.example.com:443,8443", "GET,HEAD pypi.org", "**.x.example", "[::1]:80", "*.com"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		r, err := netguard.ParseRule(text)
		if err != nil {
			return
		}
		if name, _, err := netguard.CanonicalHost(r.Host); err != nil || name != r.Host {
			t.Fatalf("%q: rule host %q is not canonical (%q, %v)", text, r.Host, name, err)
		}
		for _, p := range r.Ports {
			if p == 0 {
				t.Fatalf("%q: port 0", text)
			}
		}
	})
}
