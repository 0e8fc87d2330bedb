package netguard_test

import (
	"net/netip"
	"testing"

	"github.com/agentwarden/warden/netguard"
)

// classifySeeds are addresses that start the Classify fuzzer in each
// embedding and near the table's edges.
var classifySeeds = []string{
	"8.8.8.8", "127.0.0.1", "169.254.169.254", "::", "::1", "::2",
	"::ffff:127.0.0.1", "::127.0.0.1", "64:ff9b::a9fe:a9fe", "64:ff9b:1:a9fe:a9:fe00::",
	"2002:a9fe:a9fe::1", "2001:0:4136:e378:8000:63bf:3fff:fdd2", "2001:0:a9fe:a9fe:8000:63bf:f7f7:f7f7",
	"fd00:ec2::254", "fc00::1", "fe80::1", "64:ff9c::1", "2001:db8::1", "2606:4700:4700::1111",
}

// FuzzClassify checks, for any 16 bytes read as an IPv6 address (and, when
// they are IPv4-mapped, as the IPv4 address too), that Classify does not
// panic, that NormalizeIP is idempotent and ignores zones, and that an
// address that unwraps to IPv4 is judged as that IPv4 address is, except
// that a Teredo server may only make the class stricter.
func FuzzClassify(f *testing.F) {
	for _, s := range classifySeeds {
		b := netip.MustParseAddr(s).As16()
		f.Add(b[:])
	}
	teredo := netip.MustParsePrefix("2001::/32")
	global := netip.MustParsePrefix("2000::/3")
	uniqueLocal := netip.MustParsePrefix("fc00::/7")
	f.Fuzz(func(t *testing.T, data []byte) {
		var b [16]byte
		copy(b[:], data)
		addrs := []netip.Addr{netip.AddrFrom16(b)}
		if addrs[0].Is4In6() {
			addrs = append(addrs, addrs[0].Unmap())
		}
		for _, a := range addrs {
			class, reason := netguard.Classify(a)
			if reason == "" {
				t.Errorf("Classify(%v) gave no reason", a)
			}
			if blocked := netguard.IsBlockedPrivateOrLinkLocal(a); blocked != (class != netguard.Public) {
				t.Errorf("IsBlockedPrivateOrLinkLocal(%v) = %v, but Classify says %v", a, blocked, class)
			}
			if a.Is6() {
				if zoned, _ := netguard.Classify(a.WithZone("eth0")); zoned != class {
					t.Errorf("Classify(%v with zone eth0) = %v, want %v as without", a, zoned, class)
				}
			}

			n := netguard.NormalizeIP(a)
			if again := netguard.NormalizeIP(n); again != n {
				t.Fatalf("NormalizeIP(%v) = %v, but NormalizeIP(%v) = %v", a, n, n, again)
			}
			if n.Is6() && !global.Contains(n) && !uniqueLocal.Contains(n) && class != netguard.Blocked {
				t.Errorf("Classify(%v) = %v (%s), want blocked: outside 2000::/3 and fc00::/7", a, class, reason)
			}
			if !n.Is4() {
				continue
			}
			inner, _ := netguard.Classify(n)
			if !teredo.Contains(a) {
				if class != inner {
					t.Errorf("Classify(%v) = %v (%s), but Classify(%v) = %v", a, class, reason, n, inner)
				}
				continue
			}
			server := netip.AddrFrom4([4]byte(b[4:8]))
			serverClass, _ := netguard.Classify(server)
			if want := min(inner, serverClass); class != want {
				t.Errorf("Classify(%v) = %v (%s), want %v (client %v is %v, server %v is %v)",
					a, class, reason, want, n, inner, server, serverClass)
			}
		}
	})
}

// FuzzParseLegacyIPv4 checks that ParseLegacyIPv4 does not panic, returns
// only IPv4 addresses, and agrees with netip.ParseAddr on every string that
// netip reads as IPv4.
func FuzzParseLegacyIPv4(f *testing.F) {
	for _, s := range []string{
		"2130706433", "017700000001", "0x7f000001", "0x7f.0.0.1", "127.1", "127.0.1",
		"127.000.000.001", "0", "0177.0.0.1", "127.0.0.1.", "1.2.3.4", "255.255.255.255",
		"", ".", "1..1", "256.1.1.1", "0x", "0x100000000", "1.2.3.4.5", "09", "example.com", "-1",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := netguard.ParseLegacyIPv4(s)
		if ok && !got.Is4() {
			t.Errorf("ParseLegacyIPv4(%q) = %v, which is not IPv4", s, got)
		}
		if !ok && got.IsValid() {
			t.Errorf("ParseLegacyIPv4(%q) = %v, false; want the zero Addr with false", s, got)
		}
		if want, err := netip.ParseAddr(s); err == nil && want.Is4() {
			if !ok || got != want {
				t.Errorf("ParseLegacyIPv4(%q) = %v, %v, want %v, true as netip.ParseAddr reads it", s, got, ok, want)
			}
		}
	})
}
