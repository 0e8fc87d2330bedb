package netguard_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"io/fs"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentwarden/warden/netguard"
)

// ssrfCorpus is the shared SSRF corpus, in the ../shared checkout that sits
// beside the repository.
var ssrfCorpus = filepath.Join("..", "..", "shared", "corpus", "ssrf.jsonl")

// corpusCase is one line of the SSRF corpus.
type corpusCase struct {
	Target string `json:"target"`
	Expect string `json:"expect"`
	Why    string `json:"why"`
	Kind   string `json:"kind"`
	// Category and ResolvesTo are read by the guard's corpus test.
	Category   string   `json:"category"`
	ResolvesTo []string `json:"resolves_to"`
}

func TestClassifyCorpus(t *testing.T) {
	f, err := os.Open(ssrfCorpus)
	if errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("SSRF corpus %s is missing: the ../shared checkout must sit beside the repository", ssrfCorpus)
	}
	if err != nil {
		t.Fatalf("open SSRF corpus: %v", err)
	}
	defer f.Close()

	ran := 0
	scanner := bufio.NewScanner(f)
	for line := 1; scanner.Scan(); line++ {
		text := strings.TrimSpace(scanner.Text())
		if text == "" {
			continue
		}
		var c corpusCase
		if err := json.Unmarshal([]byte(text), &c); err != nil {
			t.Fatalf("%s:%d: %v", ssrfCorpus, line, err)
		}
		if c.Kind != "ip" {
			continue
		}
		if c.Expect != "block" && c.Expect != "allow" {
			t.Fatalf("%s:%d: expect is %q, want block or allow", ssrfCorpus, line, c.Expect)
		}
		ran++
		t.Run(c.Target, func(t *testing.T) {
			a, err := netip.ParseAddr(c.Target)
			if err != nil {
				t.Fatalf("%s:%d: %v", ssrfCorpus, line, err)
			}
			got := netguard.IsBlockedPrivateOrLinkLocal(a)
			if want := c.Expect == "block"; got != want {
				class, reason := netguard.Classify(a)
				t.Errorf("IsBlockedPrivateOrLinkLocal(%q) = %v, want %v (%s: %s; corpus: %s)", c.Target, got, want, class, reason, c.Why)
			}
		})
	}
	if err := scanner.Err(); err != nil {
		t.Fatalf("read SSRF corpus: %v", err)
	}
	if ran == 0 {
		t.Fatalf("no kind=ip cases in %s", ssrfCorpus)
	}
	t.Logf("%d corpus cases", ran)
}

// classifyCases are the address table's own cases, keyed by address text.
var classifyCases = []struct {
	addr string
	want netguard.Class
}{
	// 0.0.0.0/8
	{"0.0.0.0", netguard.Blocked},
	{"0.255.255.255", netguard.Blocked},
	{"1.0.0.0", netguard.Public},
	// 10.0.0.0/8
	{"9.255.255.255", netguard.Public},
	{"10.0.0.0", netguard.Private},
	{"10.255.255.255", netguard.Private},
	{"11.0.0.0", netguard.Public},
	// 100.64.0.0/10
	{"100.63.255.255", netguard.Public},
	{"100.64.0.0", netguard.Blocked},
	{"100.100.100.200", netguard.Blocked},
	{"100.127.255.255", netguard.Blocked},
	{"100.128.0.0", netguard.Public},
	// 127.0.0.0/8
	{"126.255.255.255", netguard.Public},
	{"127.0.0.0", netguard.Private},
	{"127.0.0.1", netguard.Private},
	{"127.255.255.255", netguard.Private},
	{"128.0.0.0", netguard.Public},
	// 169.254.0.0/16
	{"169.253.255.255", netguard.Public},
	{"169.254.0.0", netguard.Blocked},
	{"169.254.169.254", netguard.Blocked},
	{"169.254.255.255", netguard.Blocked},
	{"169.255.0.0", netguard.Public},
	// 172.16.0.0/12
	{"172.15.255.255", netguard.Public},
	{"172.16.0.0", netguard.Private},
	{"172.31.255.255", netguard.Private},
	{"172.32.0.0", netguard.Public},
	// 192.0.0.0/24, 192.0.2.0/24
	{"191.255.255.255", netguard.Public},
	{"192.0.0.0", netguard.Blocked},
	{"192.0.0.255", netguard.Blocked},
	{"192.0.1.0", netguard.Public},
	{"192.0.2.0", netguard.Reserved},
	{"192.0.2.255", netguard.Reserved},
	{"192.0.3.0", netguard.Public},
	{"192.31.196.1", netguard.Blocked},
	{"192.52.193.1", netguard.Blocked},
	{"192.88.99.1", netguard.Blocked},
	{"192.175.48.1", netguard.Blocked},
	// 192.168.0.0/16
	{"192.167.255.255", netguard.Public},
	{"192.168.0.0", netguard.Private},
	{"192.168.255.255", netguard.Private},
	{"192.169.0.0", netguard.Public},
	// 198.18.0.0/15
	{"198.17.255.255", netguard.Public},
	{"198.18.0.0", netguard.Reserved},
	{"198.19.255.255", netguard.Reserved},
	{"198.20.0.0", netguard.Public},
	{"198.51.100.7", netguard.Reserved},
	{"203.0.113.7", netguard.Reserved},
	// 224.0.0.0/4, 240.0.0.0/4
	{"223.255.255.255", netguard.Public},
	{"224.0.0.0", netguard.Blocked},
	{"239.255.255.255", netguard.Blocked},
	{"240.0.0.0", netguard.Blocked},
	{"255.255.255.255", netguard.Blocked},
	{"8.8.8.8", netguard.Public},

	// IPv6 special addresses.
	{"::", netguard.Blocked},
	{"::1", netguard.Blocked},
	{"0000::1", netguard.Blocked},
	{"100::", netguard.Blocked},
	{"100::ffff:ffff:ffff:ffff", netguard.Blocked},
	{"64:ff9c::1", netguard.Blocked},
	{"5f00::1", netguard.Blocked},
	// 2000::/3 edges.
	{"1fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", netguard.Blocked},
	{"2000::", netguard.Public},
	{"3fff:1000::", netguard.Public},
	{"3fff:fff:ffff:ffff:ffff:ffff:ffff:ffff", netguard.Reserved},
	{"3fff::1", netguard.Reserved},
	{"4000::", netguard.Blocked},
	// 2001::/23 and 2001:db8::/32.
	{"2001:1::1", netguard.Blocked},
	{"2001:1ff:ffff:ffff:ffff:ffff:ffff:ffff", netguard.Blocked},
	{"2001:200::", netguard.Public},
	{"2001:db7:ffff:ffff:ffff:ffff:ffff:ffff", netguard.Public},
	{"2001:db8::", netguard.Reserved},
	{"2001:db8:ffff:ffff:ffff:ffff:ffff:ffff", netguard.Reserved},
	{"2001:db9::", netguard.Public},
	// fc00::/7 and the AWS metadata address inside it.
	{"fbff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", netguard.Blocked},
	{"fc00::", netguard.Private},
	{"fc00::1", netguard.Private},
	{"fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", netguard.Private},
	{"fe00::", netguard.Blocked},
	{"fd00:ec2::254", netguard.Blocked},
	{"fd00:ec2::253", netguard.Private},
	{"fd00:ec2::255", netguard.Private},
	// fe80::/10, fec0::/10, ff00::/8
	{"fe80::", netguard.Blocked},
	{"fe80::1", netguard.Blocked},
	{"febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff", netguard.Blocked},
	{"fec0::1", netguard.Blocked},
	{"ff02::1", netguard.Blocked},
	{"2606:4700:4700::1111", netguard.Public},

	// Zones are stripped before judging.
	{"fe80::1%eth0", netguard.Blocked},
	{"2606:4700:4700::1111%eth0", netguard.Public},
	{"fd00:ec2::254%eth0", netguard.Blocked},

	// IPv4-mapped ::ffff:0:0/96.
	{"::ffff:8.8.8.8", netguard.Public},
	{"::ffff:127.0.0.1", netguard.Private},
	{"::ffff:7f00:1", netguard.Private},
	{"0:0:0:0:0:ffff:7f00:0001", netguard.Private},
	{"::ffff:10.1.2.3", netguard.Private},
	{"::ffff:169.254.169.254", netguard.Blocked},
	{"::ffff:0.0.0.0", netguard.Blocked},
	// IPv4-compatible ::/96.
	{"::8.8.8.8", netguard.Public},
	{"::127.0.0.1", netguard.Private},
	{"::169.254.169.254", netguard.Blocked},
	{"::2", netguard.Blocked},
	// NAT64 64:ff9b::/96.
	{"64:ff9b::808:808", netguard.Public},
	{"64:ff9b::7f00:1", netguard.Private},
	{"64:ff9b::a00:1", netguard.Private},
	{"64:ff9b::a9fe:a9fe", netguard.Blocked},
	{"64:ff9b::1:808:808", netguard.Blocked}, // outside the /96, outside 2000::/3
	// Local-use NAT64 64:ff9b:1::/48 (IPv4 in bytes 6, 7, 9, 10).
	{"64:ff9b:1:808:8:800::", netguard.Public},
	{"64:ff9b:1:808:ff08:800::", netguard.Public}, // u-octet ignored
	{"64:ff9b:1:7f00:0:100::", netguard.Private},
	{"64:ff9b:1:a00:0:100::", netguard.Private},
	{"64:ff9b:1:a9fe:a9:fe00::", netguard.Blocked},
	// 6to4 2002::/16.
	{"2002:0808:0808::1", netguard.Public},
	{"2002:7f00:1::1", netguard.Private},
	{"2002:a00:1::1", netguard.Private},
	{"2002:a9fe:a9fe::1", netguard.Blocked},
	// Teredo 2001::/32: server 65.54.227.120 (public) with various clients.
	{"2001:0:4136:e378:8000:63bf:f7f7:f7f7", netguard.Public},   // client 8.8.8.8
	{"2001:0:4136:e378:8000:63bf:80ff:fffe", netguard.Private},  // client 127.0.0.1
	{"2001:0:4136:e378:8000:63bf:f5ff:fffe", netguard.Private},  // client 10.0.0.1
	{"2001:0:4136:e378:8000:63bf:5601:5601", netguard.Blocked},  // client 169.254.169.254
	{"2001:0:4136:e378:8000:63bf:3fff:fdd2", netguard.Reserved}, // RFC 4380 example, client 192.0.2.45
	// Teredo with a non-public server: the stricter class wins.
	{"2001:0:a9fe:a9fe:8000:63bf:f7f7:f7f7", netguard.Blocked}, // server 169.254.169.254
	{"2001:0:a00:1:8000:63bf:f7f7:f7f7", netguard.Private},     // server 10.0.0.1
	{"2001:0:a00:1:8000:63bf:5601:5601", netguard.Blocked},     // server private, client blocked
	{"2001::", netguard.Blocked},                               // server 0.0.0.0, client 255.255.255.255
}

func TestClassify(t *testing.T) {
	for _, tc := range classifyCases {
		t.Run(tc.addr, func(t *testing.T) {
			a := netip.MustParseAddr(tc.addr)
			got, reason := netguard.Classify(a)
			if got != tc.want {
				t.Errorf("Classify(%q) = %v (%s), want %v", tc.addr, got, reason, tc.want)
			}
			if reason == "" {
				t.Errorf("Classify(%q) gave no reason", tc.addr)
			}
			if blocked := netguard.IsBlockedPrivateOrLinkLocal(a); blocked != (tc.want != netguard.Public) {
				t.Errorf("IsBlockedPrivateOrLinkLocal(%q) = %v, want %v", tc.addr, blocked, tc.want != netguard.Public)
			}
		})
	}
}

func TestClassifyZeroAddr(t *testing.T) {
	if got, _ := netguard.Classify(netip.Addr{}); got != netguard.Blocked {
		t.Errorf("Classify(netip.Addr{}) = %v, want blocked", got)
	}
	if !netguard.IsBlockedPrivateOrLinkLocal(netip.Addr{}) {
		t.Error("IsBlockedPrivateOrLinkLocal(netip.Addr{}) = false, want true")
	}
	if got := netguard.NormalizeIP(netip.Addr{}); got.IsValid() {
		t.Errorf("NormalizeIP(netip.Addr{}) = %v, want the zero Addr", got)
	}
}

func TestClassifyReason(t *testing.T) {
	tests := []struct {
		addr string
		want []string // substrings the reason must contain
	}{
		{"169.254.169.254", []string{"169.254.0.0/16 (link-local, cloud metadata)"}},
		{"100.100.100.200", []string{"100.64.0.0/10", "CGNAT"}},
		{"fd00:ec2::254", []string{"fd00:ec2::254/128", "metadata"}},
		{"fd00::1", []string{"fc00::/7 (unique local)"}},
		{"64:ff9c::1", []string{"outside global unicast 2000::/3"}},
		{"::ffff:127.0.0.1", []string{"127.0.0.0/8 (loopback)", "IPv4-mapped ::ffff:0:0/96"}},
		{"2002:a9fe:a9fe::1", []string{"169.254.0.0/16", "6to4 2002::/16"}},
		{"64:ff9b:1:7f00:0:100::", []string{"127.0.0.0/8", "64:ff9b:1::/48"}},
		{"2001:0:a9fe:a9fe:8000:63bf:f7f7:f7f7", []string{"169.254.0.0/16", "Teredo server 169.254.169.254"}},
		{"8.8.8.8", []string{"not in any special-purpose range"}},
	}
	for _, tc := range tests {
		t.Run(tc.addr, func(t *testing.T) {
			_, reason := netguard.Classify(netip.MustParseAddr(tc.addr))
			for _, w := range tc.want {
				if !strings.Contains(reason, w) {
					t.Errorf("Classify(%q) reason = %q, want it to contain %q", tc.addr, reason, w)
				}
			}
		})
	}
}

// TestClassifyOutsideGlobalUnicast checks one address in every IPv6 /16:
// outside 2000::/3 and fc00::/7 every one must be blocked, whatever the table
// names.
func TestClassifyOutsideGlobalUnicast(t *testing.T) {
	global := netip.MustParsePrefix("2000::/3")
	uniqueLocal := netip.MustParsePrefix("fc00::/7")
	for high := 0; high <= 0xffff; high++ {
		// h:1:: embeds no IPv4 address: bytes 2 and 3 are non-zero, which
		// rules out mapped, compatible and NAT64, and 6to4 and Teredo
		// live inside 2000::/3.
		a := netip.AddrFrom16([16]byte{byte(high >> 8), byte(high), 0, 1})
		if global.Contains(a) || uniqueLocal.Contains(a) {
			continue
		}
		if got, reason := netguard.Classify(a); got != netguard.Blocked {
			t.Errorf("Classify(%v) = %v (%s), want blocked", a, got, reason)
		}
	}
}

func TestNormalizeIP(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"8.8.8.8", "8.8.8.8"},
		{"fe80::1%eth0", "fe80::1"},
		{"2606:4700:4700::1111%eth0", "2606:4700:4700::1111"},
		{"::", "::"},
		{"::1", "::1"},
		{"::2", "0.0.0.2"},
		{"::ffff:127.0.0.1", "127.0.0.1"},
		{"::ffff:127.0.0.1%eth0", "127.0.0.1"},
		{"::127.0.0.1", "127.0.0.1"},
		{"64:ff9b::a9fe:a9fe", "169.254.169.254"},
		{"64:ff9b::1:a9fe:a9fe", "64:ff9b::1:a9fe:a9fe"},
		{"64:ff9b:1:a9fe:a9:fe00::", "169.254.169.254"},
		{"64:ff9b:1:808:ff08:800:dead:beef", "8.8.8.8"},
		{"2002:a9fe:a9fe::1", "169.254.169.254"},
		{"2002:808:808:ffff::", "8.8.8.8"},
		{"2001:0:4136:e378:8000:63bf:3fff:fdd2", "192.0.2.45"},
		{"2001:1::1", "2001:1::1"},
		{"fd00:ec2::254", "fd00:ec2::254"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got := netguard.NormalizeIP(netip.MustParseAddr(tc.in))
			if got != netip.MustParseAddr(tc.want) {
				t.Errorf("NormalizeIP(%q) = %v, want %v", tc.in, got, tc.want)
			}
			if again := netguard.NormalizeIP(got); again != got {
				t.Errorf("NormalizeIP(NormalizeIP(%q)) = %v, want %v", tc.in, again, got)
			}
		})
	}
}

func TestClassString(t *testing.T) {
	tests := []struct {
		class netguard.Class
		want  string
	}{
		{netguard.Blocked, "blocked"},
		{netguard.Private, "private"},
		{netguard.Public, "public"},
		{netguard.Class(7), "Class(7)"},
	}
	for _, tc := range tests {
		if got := tc.class.String(); got != tc.want {
			t.Errorf("Class(%d).String() = %q, want %q", int(tc.class), got, tc.want)
		}
	}
	var zero netguard.Class
	if zero != netguard.Blocked {
		t.Errorf("zero Class = %v, want blocked", zero)
	}
}

func TestParseLegacyIPv4(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"2130706433", "127.0.0.1"},
		{"017700000001", "127.0.0.1"},
		{"0x7f000001", "127.0.0.1"},
		{"0X7F000001", "127.0.0.1"},
		{"0x00007f000001", "127.0.0.1"},
		{"0x7f.0.0.1", "127.0.0.1"},
		{"0x7f.1", "127.0.0.1"},
		{"127.1", "127.0.0.1"},
		{"127.0.1", "127.0.0.1"},
		{"127.000.000.001", "127.0.0.1"},
		{"0177.0.0.1", "127.0.0.1"},
		{"127.0.0.1", "127.0.0.1"},
		{"127.0.0.1.", "127.0.0.1"},
		{"0", "0.0.0.0"},
		{"00", "0.0.0.0"},
		{"0x0", "0.0.0.0"},
		{"0.0.0.0", "0.0.0.0"},
		{"1.2.3.4", "1.2.3.4"},
		{"4294967295", "255.255.255.255"},
		{"0xffffffff", "255.255.255.255"},
		{"037777777777", "255.255.255.255"},
		{"1.16777215", "1.255.255.255"},
		{"1.2.65535", "1.2.255.255"},
		{"169.254.43518", "169.254.169.254"},
		{"0xa9.0xfe.0xa9.0xfe", "169.254.169.254"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, ok := netguard.ParseLegacyIPv4(tc.in)
			if !ok || got != netip.MustParseAddr(tc.want) {
				t.Errorf("ParseLegacyIPv4(%q) = %v, %v, want %v, true", tc.in, got, ok, tc.want)
			}
		})
	}
}

func TestParseLegacyIPv4Rejects(t *testing.T) {
	for _, in := range []string{
		"", ".", "..", "1..1", ".1", "127.0.0.1..",
		"256.1.1.1", "1.2.3.256", "1.2.65536", "1.16777216", "4294967296",
		"0x", "0x.0.0.1", "0x100000000", "0x7f.0x100.0.1", "99999999999999999999999",
		"1.2.3.4.5", "09", "08.0.0.1", "00x7f", "0x1g",
		"example.com", "-1", "+1", " 127.0.0.1", "127.0.0.1 ", "1.2.3.4/8", "::1", "1,2",
	} {
		t.Run(in, func(t *testing.T) {
			if got, ok := netguard.ParseLegacyIPv4(in); ok {
				t.Errorf("ParseLegacyIPv4(%q) = %v, true, want false", in, got)
			}
		})
	}
}

func TestIsLoopbackHost(t *testing.T) {
	tests := []struct {
		host string
		want bool
	}{
		{"localhost", true},
		{"LOCALHOST", true},
		{"localhost.", true},
		{"FOO.LOCALHOST", true},
		{"a.b.localhost.", true},
		{"localhost.localdomain", true},
		{"LocalHost.LocalDomain.", true},
		{"ip6-localhost", true},
		{"ip6-loopback", true},
		{"localhost:8080", true},
		{"[localhost]:8080", true},
		{"127.0.0.1", true},
		{"127.0.0.1.", true},
		{"127.0.0.1:80", true},
		{"127.255.255.254", true},
		{"127.1", true},
		{"0x7f000001", true},
		{"2130706433", true},
		{"017700000001", true},
		{"127.000.000.001", true},
		{"0", true},
		{"0.0.0.0", true},
		{"0.1.2.3", true},
		{"::1", true},
		{"[::1]", true},
		{"[::1]:443", true},
		{"[0000::1]", true},
		{"::1%lo", true},
		{"::", true},
		{"[::]:80", true},
		{"[::ffff:127.0.0.1]", true},
		{"::ffff:7f00:1", true},
		{"::ffff:0.0.0.0", true},
		{"::127.0.0.1", true},

		{"", false},
		{"localhost.example.com", false},
		{"localhost.localdomain.com", false},
		{"example.com", false},
		{"notlocalhost", false},
		{"localhostx", false},
		{"localhost..", false},
		{"ip6-localhostx", false},
		{"127.0.0.1..", false},
		{"127.0.0.1.nip.io", false},
		{"8.8.8.8", false},
		{"10.0.0.1", false},
		{"128.0.0.1", false},
		{"1.0.0.127", false},
		{"169.254.169.254", false},
		{"0x", false},
		{"[::1", false},
		{"[::1]x", false},
		{"[fe80::1]", false},
		{"2606:4700:4700::1111", false},
		{"::ffff:8.8.8.8", false},
	}
	for _, tc := range tests {
		t.Run(tc.host, func(t *testing.T) {
			if got := netguard.IsLoopbackHost(tc.host); got != tc.want {
				t.Errorf("IsLoopbackHost(%q) = %v, want %v", tc.host, got, tc.want)
			}
		})
	}
}

func BenchmarkClassify(b *testing.B) {
	addrs := []netip.Addr{
		netip.MustParseAddr("8.8.8.8"),
		netip.MustParseAddr("169.254.169.254"),
		netip.MustParseAddr("2606:4700:4700::1111"),
		netip.MustParseAddr("::ffff:10.0.0.1"),
		netip.MustParseAddr("2001:0:4136:e378:8000:63bf:3fff:fdd2"),
	}
	for _, a := range addrs {
		b.Run(a.String(), func(b *testing.B) {
			for b.Loop() {
				netguard.Classify(a)
			}
		})
	}
}
