package fakedns_test

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"testing"
	"time"

	"golang.org/x/net/dns/dnsmessage"

	"github.com/agentwarden/warden/egress/fakedns"
)

func TestTableGivesEachNameItsOwnAddress(t *testing.T) {
	var tab fakedns.Table
	seen := map[netip.Addr]string{}
	for _, name := range []string{"registry.npmjs.org", "proxy.golang.org", "Example.COM.", "a_b.example", "xn--bcher-kva.example"} {
		a, err := tab.Addr(name)
		if err != nil {
			t.Fatalf("Addr(%q): %v", name, err)
		}
		if !fakedns.Prefix.Contains(a) || a == fakedns.Gateway || a == fakedns.Prefix.Addr() {
			t.Errorf("Addr(%q) = %v, want an address of %v other than its first two", name, a, fakedns.Prefix)
		}
		if other, ok := seen[a]; ok {
			t.Errorf("Addr(%q) = %v, already given to %q", name, a, other)
		}
		seen[a] = name
		again, _ := tab.Addr(name)
		if again != a {
			t.Errorf("Addr(%q) again = %v, want %v", name, again, a)
		}
		canon, _ := fakedns.Canonical(name)
		if got, ok := tab.Name(a); !ok || got != canon {
			t.Errorf("Name(%v) = %q, %v; want %q", a, got, ok, canon)
		}
		if got, ok := tab.Name(netip.AddrFrom16(a.As16())); !ok || got != canon {
			t.Errorf("Name(%v as IPv4-mapped IPv6) = %q, %v; want %q", a, got, ok, canon)
		}
	}
	for _, a := range []netip.Addr{fakedns.Gateway, netip.MustParseAddr("198.19.255.255"), netip.MustParseAddr("127.0.0.1")} {
		if name, ok := tab.Name(a); ok {
			t.Errorf("Name(%v) = %q, want none", a, name)
		}
	}
}

func TestTableIsBounded(t *testing.T) {
	var tab fakedns.Table
	var last netip.Addr
	for i := range fakedns.MaxNames {
		a, err := tab.Addr(name(i))
		if err != nil {
			t.Fatalf("Addr of name %d: %v", i, err)
		}
		last = a
	}
	if !fakedns.Prefix.Contains(last) {
		t.Fatalf("the last address given, %v, is outside %v", last, fakedns.Prefix)
	}
	if _, err := tab.Addr("one-more.example"); !errors.Is(err, fakedns.ErrFull) {
		t.Fatalf("Addr beyond MaxNames: err = %v, want ErrFull", err)
	}
	if a, err := tab.Addr(name(7)); err != nil || a == (netip.Addr{}) {
		t.Fatalf("a name given before the table was full: %v, %v", a, err)
	}
}

func name(i int) string {
	const letters = "abcdefghijklmnopqrstuvwxyz"
	b := []byte("n")
	for ; i > 0; i /= 26 {
		b = append(b, letters[i%26])
	}
	return string(b) + ".example"
}

func TestCanonical(t *testing.T) {
	for _, c := range []struct {
		in, want string
		ok       bool
	}{
		{"Registry.NPMJS.org.", "registry.npmjs.org", true},
		{"_dmarc.example.com", "_dmarc.example.com", true},
		{"localhost", "localhost", true},
		{"", "", false},
		{".", "", false},
		{"a..b", "", false},
		{"-a.example", "", false},
		{"a-.example", "", false},
		{"a b.example", "", false},
		{"1.2.3.4", "", false},
		{"4.3.2.1.in-addr.arpa", "", false},
		{"exa\x00mple.com", "", false},
		{"ünï.example", "", false},
		{string(make([]byte, 64)) + ".example", "", false},
	} {
		got, ok := fakedns.Canonical(c.in)
		if got != c.want || ok != c.ok {
			t.Errorf("Canonical(%q) = %q, %v; want %q, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

// TestResolverGetsTheTablesAddresses asks the server as a real stub
// resolver does (Go's, over UDP).
func TestResolverGetsTheTablesAddresses(t *testing.T) {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	tab := &fakedns.Table{}
	s := &fakedns.Server{Table: tab}
	done := make(chan error, 1)
	go func() { done <- s.Serve(pc) }()
	r := &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "udp", pc.LocalAddr().String())
	}}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	addrs, err := r.LookupNetIP(ctx, "ip", "registry.npmjs.org")
	if err != nil || len(addrs) != 1 || !fakedns.Prefix.Contains(addrs[0]) {
		t.Fatalf("LookupNetIP(ip, registry.npmjs.org) = %v, %v; want one address of %v", addrs, err, fakedns.Prefix)
	}
	if name, ok := tab.Name(addrs[0]); !ok || name != "registry.npmjs.org" {
		t.Errorf("the table says %v is %q (%v)", addrs[0], name, ok)
	}
	if again, err := r.LookupNetIP(ctx, "ip4", "REGISTRY.npmjs.org."); err != nil || len(again) != 1 || again[0] != addrs[0] {
		t.Errorf("a second lookup = %v, %v; want %v", again, err, addrs[0])
	}
	if v6, err := r.LookupNetIP(ctx, "ip6", "registry.npmjs.org"); err == nil {
		t.Errorf("LookupNetIP(ip6) = %v, want no address", v6)
	}
	if lh, err := r.LookupNetIP(ctx, "ip4", "app.localhost"); err != nil || len(lh) != 1 || lh[0] != netip.MustParseAddr("127.0.0.1") {
		t.Errorf("LookupNetIP(app.localhost) = %v, %v; want 127.0.0.1", lh, err)
	}
	var dnsErr *net.DNSError
	if _, err := r.LookupNetIP(ctx, "ip4", "bad..name"); !errors.As(err, &dnsErr) {
		t.Errorf("LookupNetIP(bad..name) err = %v, want a DNS error", err)
	}
	if _, err := r.LookupAddr(ctx, addrs[0].String()); err == nil {
		t.Errorf("a reverse lookup was answered; the server answers none")
	}
	pc.Close()
	if err := <-done; err != nil {
		t.Errorf("Serve after Close = %v, want nil", err)
	}
}

func query(id uint16, name string, typ dnsmessage.Type) []byte {
	b := dnsmessage.NewBuilder(nil, dnsmessage.Header{ID: id, RecursionDesired: true})
	_ = b.StartQuestions()
	_ = b.Question(dnsmessage.Question{Name: dnsmessage.MustNewName(name), Type: typ, Class: dnsmessage.ClassINET})
	out, _ := b.Finish()
	return out
}

func TestAnswerCodes(t *testing.T) {
	s := &fakedns.Server{Table: &fakedns.Table{}}
	for _, c := range []struct {
		name  string
		q     []byte
		rcode dnsmessage.RCode
		a     bool
	}{
		{"A of a host", query(1, "example.com.", dnsmessage.TypeA), dnsmessage.RCodeSuccess, true},
		{"AAAA of a host", query(2, "example.com.", dnsmessage.TypeAAAA), dnsmessage.RCodeSuccess, false},
		{"MX of a host", query(3, "example.com.", dnsmessage.TypeMX), dnsmessage.RCodeSuccess, false},
		{"PTR", query(4, "1.0.18.198.in-addr.arpa.", dnsmessage.TypePTR), dnsmessage.RCodeNameError, false},
		{"an address", query(5, "10.0.0.1.", dnsmessage.TypeA), dnsmessage.RCodeNameError, false},
		{"no question", func() []byte {
			b := dnsmessage.NewBuilder(nil, dnsmessage.Header{ID: 6})
			out, _ := b.Finish()
			return out
		}(), dnsmessage.RCodeFormatError, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := s.Answer(c.q)
			var m dnsmessage.Message
			if err := m.Unpack(out); err != nil {
				t.Fatalf("the answer does not parse: %v", err)
			}
			var want dnsmessage.Message
			_ = want.Unpack(c.q)
			if m.Header.ID != want.Header.ID || !m.Header.Response {
				t.Errorf("answer header %+v, want a response with ID %d", m.Header, want.Header.ID)
			}
			if m.Header.RCode != c.rcode || (len(m.Answers) == 1) != c.a {
				t.Errorf("rcode %v with %d answers, want %v with an A record: %v", m.Header.RCode, len(m.Answers), c.rcode, c.a)
			}
		})
	}
	if out := s.Answer([]byte{1, 2, 3}); out != nil {
		t.Errorf("Answer of 3 bytes = %x, want nothing", out)
	}
	resp := query(7, "example.com.", dnsmessage.TypeA)
	resp[2] |= 0x80 // QR: this is an answer
	if out := s.Answer(resp); out != nil {
		t.Errorf("Answer of an answer = %x, want nothing (no loops)", out)
	}
}

// FuzzAnswer: no query makes the server panic, and every answer parses,
// carries the query's ID and holds no address but the table's and
// loopback's.
func FuzzAnswer(f *testing.F) {
	f.Add(query(1, "example.com.", dnsmessage.TypeA))
	f.Add(query(2, "a.localhost.", dnsmessage.TypeA))
	f.Add(query(3, "x.", dnsmessage.TypeAAAA))
	f.Add([]byte{0, 1, 1, 0, 0, 2, 0, 0, 0, 0, 0, 0})
	s := &fakedns.Server{Table: &fakedns.Table{}}
	f.Fuzz(func(t *testing.T, q []byte) {
		out := s.Answer(q)
		if out == nil {
			return
		}
		var m dnsmessage.Message
		if err := m.Unpack(out); err != nil {
			t.Fatalf("answer does not parse: %v", err)
		}
		if len(q) >= 2 && m.Header.ID != uint16(q[0])<<8|uint16(q[1]) {
			t.Fatalf("answer ID %d, query's %x", m.Header.ID, q[:2])
		}
		for _, r := range m.Answers {
			a, ok := r.Body.(*dnsmessage.AResource)
			if !ok {
				t.Fatalf("answer holds %T", r.Body)
			}
			addr := netip.AddrFrom4(a.A)
			if !fakedns.Prefix.Contains(addr) && addr != netip.MustParseAddr("127.0.0.1") {
				t.Fatalf("answer holds %v", addr)
			}
		}
	})
}
