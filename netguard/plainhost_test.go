package netguard

import (
	"net/netip"
	"testing"
)

// checkPlainHost fails when plainHost accepts a host that UTS #46 maps to
// anything else, or refuses.
func checkPlainHost(t *testing.T, host string) {
	t.Helper()
	got, ok := plainHost(host)
	if !ok {
		return
	}
	want, err := idnaCanonical(host)
	if err != nil || got != want {
		t.Fatalf("plainHost(%q) = %q; the IDNA path gives %q, %v", host, got, want, err)
	}
}

// TestPlainHostAgreesWithIDNA tries every host of up to five characters over
// letters of both cases, a digit, '-', '_' and '.', and the names rules are
// usually made of.
func TestPlainHostAgreesWithIDNA(t *testing.T) {
	const alphabet = "aZ0-_."
	var walk func(prefix string, n int)
	accepted := 0
	walk = func(prefix string, n int) {
		if _, ok := plainHost(prefix); ok {
			accepted++
		}
		checkPlainHost(t, prefix)
		if n == 0 {
			return
		}
		for i := range len(alphabet) {
			walk(prefix+alphabet[i:i+1], n-1)
		}
	}
	walk("", 5)
	for _, h := range []string{"registry.npmjs.org", "API.GitHub.com.", "a-b.example", "x_y.example", "xn--bcher-kva.example",
		"ab--cd.example", "-a.example", "a-.example", "a..b", ".a", "a.b..", "127.0.0.1", "0x7f.1", "b\u00fccher.example"} {
		checkPlainHost(t, h)
	}
	if accepted < 1000 {
		t.Fatalf("plainHost accepted %d of the short hosts; the fast path is not being taken", accepted)
	}
}

func FuzzPlainHost(f *testing.F) {
	for _, h := range []string{"registry.npmjs.org", "API.GitHub.com.", "a-b.example", "x_y", "xn--a", "a--b", "-a", "a-", "a..b", "1.2.3.4"} {
		f.Add(h)
	}
	f.Fuzz(func(t *testing.T, host string) { checkPlainHost(t, host) })
}

// FuzzMaybeAddr: whatever netip.ParseAddr reads, maybeAddr lets through.
func FuzzMaybeAddr(f *testing.F) {
	for _, h := range []string{"1.2.3.4", "::1", "fe80::1%eth0", "::ffff:1.2.3.4", "example.com", "1.2.3.4.", "0x7f.1", ""} {
		f.Add(h)
	}
	f.Fuzz(func(t *testing.T, host string) {
		if _, err := netip.ParseAddr(host); err == nil && !maybeAddr(host) {
			t.Fatalf("netip.ParseAddr reads %q but maybeAddr says it cannot", host)
		}
	})
}
