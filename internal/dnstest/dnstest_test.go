package dnstest_test

import (
	"context"
	"encoding/binary"
	"errors"
	"net"
	"net/netip"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentwarden/warden/internal/dnstest"
)

// lookupTimeout bounds every lookup, so a server that ignores a query fails
// the test instead of hanging it.
const lookupTimeout = 10 * time.Second

func addrs(ss ...string) []netip.Addr {
	out := make([]netip.Addr, len(ss))
	for i, s := range ss {
		out[i] = netip.MustParseAddr(s)
	}
	return out
}

// lookup resolves name with r for network "ip" and returns the addresses
// unmapped and sorted, so they compare regardless of the resolver's order.
func lookup(t *testing.T, r *net.Resolver, name string) ([]netip.Addr, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), lookupTimeout)
	defer cancel()
	got, err := r.LookupNetIP(ctx, "ip", name)
	for i := range got {
		got[i] = got[i].Unmap()
	}
	slices.SortFunc(got, netip.Addr.Compare)
	return got, err
}

// mustLookup fails the test unless name resolves to exactly want, in any
// order.
func mustLookup(t *testing.T, r *net.Resolver, name string, want []netip.Addr) {
	t.Helper()
	got, err := lookup(t, r, name)
	if err != nil {
		t.Fatalf("LookupNetIP(%q): %v", name, err)
	}
	want = slices.Clone(want)
	slices.SortFunc(want, netip.Addr.Compare)
	if !slices.Equal(got, want) {
		t.Fatalf("LookupNetIP(%q) = %v, want %v", name, got, want)
	}
}

// mustNotFind fails the test unless looking name up fails with a
// *net.DNSError whose IsNotFound is set.
func mustNotFind(t *testing.T, r *net.Resolver, name string) {
	t.Helper()
	got, err := lookup(t, r, name)
	var dnsErr *net.DNSError
	if !errors.As(err, &dnsErr) || !dnsErr.IsNotFound {
		t.Fatalf("LookupNetIP(%q) = %v, %v; want a *net.DNSError with IsNotFound", name, got, err)
	}
}

func TestLookup(t *testing.T) {
	tests := []struct {
		name string
		set  []netip.Addr
	}{
		{"ipv4", addrs("192.0.2.1")},
		{"several-ipv4", addrs("192.0.2.1", "192.0.2.2", "10.0.0.1")},
		{"unspecified", addrs("0.0.0.0")},
		{"loopback", addrs("127.0.0.1")},
		{"ipv6", addrs("2001:db8::1")},
		{"mixed", addrs("192.0.2.1", "2001:db8::1", "127.0.0.1", "::1")},
		{"mixed-unspecified", addrs("0.0.0.0", "::")},
	}
	srv := dnstest.Start(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			host := tt.name + ".test"
			srv.Set(host, tt.set)
			mustLookup(t, srv.Resolver(), host, tt.set)
		})
	}
}

func TestAlternating(t *testing.T) {
	srv := dnstest.Start(t)
	public, private := addrs("192.0.2.1"), addrs("127.0.0.1")
	srv.Set("rebind.test", public, private)
	r := srv.Resolver()
	for i, want := range [][]netip.Addr{public, private, public, private} {
		got, err := lookup(t, r, "rebind.test")
		if err != nil {
			t.Fatalf("lookup %d: LookupNetIP(%q): %v", i+1, "rebind.test", err)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("lookup %d: LookupNetIP(%q) = %v, want %v", i+1, "rebind.test", got, want)
		}
	}
}

func TestSetRestartsTurn(t *testing.T) {
	srv := dnstest.Start(t)
	first, second := addrs("192.0.2.1"), addrs("192.0.2.2")
	srv.Set("turn.test", first, second)
	mustLookup(t, srv.Resolver(), "turn.test", first)
	srv.Set("turn.test", first, second)
	mustLookup(t, srv.Resolver(), "turn.test", first)
}

func TestNotFound(t *testing.T) {
	srv := dnstest.Start(t)
	srv.Set("known.test", addrs("192.0.2.1"))
	srv.Set("empty.test")
	tests := []struct {
		name, host string
	}{
		{"unknown name", "unknown.test"},
		{"sub-domain of a known name", "www.known.test"},
		{"name without sets", "empty.test"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mustNotFind(t, srv.Resolver(), tt.host)
		})
	}
}

func TestNoAddressOfTheFamily(t *testing.T) {
	srv := dnstest.Start(t)
	srv.Set("v6.test", addrs("2001:db8::1"))
	ctx, cancel := context.WithTimeout(t.Context(), lookupTimeout)
	defer cancel()
	got, err := srv.Resolver().LookupNetIP(ctx, "ip4", "v6.test")
	var dnsErr *net.DNSError
	if !errors.As(err, &dnsErr) || !dnsErr.IsNotFound {
		t.Fatalf(`LookupNetIP("ip4", "v6.test") = %v, %v; want a *net.DNSError with IsNotFound`, got, err)
	}
	mustLookup(t, srv.Resolver(), "v6.test", addrs("2001:db8::1"))
}

func TestNameForms(t *testing.T) {
	tests := []struct {
		name, set, lookup string
	}{
		{"trailing dot in Set", "dot.test.", "dot.test"},
		{"trailing dot in lookup", "dot.test", "dot.test."},
		{"upper case in Set", "UPPER.Test", "upper.test"},
		{"upper case in lookup", "lower.test", "LOWER.TEST."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := dnstest.Start(t)
			srv.Set(tt.set, addrs("192.0.2.7"))
			mustLookup(t, srv.Resolver(), tt.lookup, addrs("192.0.2.7"))
			if n := srv.Queries(tt.lookup); n != 2 {
				t.Errorf("Queries(%q) = %d, want 2 (A and AAAA)", tt.lookup, n)
			}
			if n := srv.Queries(tt.set); n != 2 {
				t.Errorf("Queries(%q) = %d, want 2 (A and AAAA)", tt.set, n)
			}
		})
	}
}

func TestQueries(t *testing.T) {
	srv := dnstest.Start(t)
	srv.Set("counted.test", addrs("192.0.2.1"))
	if n := srv.Queries("counted.test"); n != 0 {
		t.Fatalf("Queries before any lookup = %d, want 0", n)
	}
	r := srv.Resolver()
	// Absolute names, so that no search domain of the host's resolv.conf
	// adds queries for other names.
	mustLookup(t, r, "counted.test.", addrs("192.0.2.1"))
	if n := srv.Queries("counted.test"); n != 2 {
		t.Errorf("Queries after one lookup = %d, want 2 (A and AAAA)", n)
	}
	mustLookup(t, r, "counted.test.", addrs("192.0.2.1"))
	if n := srv.Queries("counted.test"); n != 4 {
		t.Errorf("Queries after two lookups = %d, want 4", n)
	}

	ctx, cancel := context.WithTimeout(t.Context(), lookupTimeout)
	defer cancel()
	if _, err := r.LookupNetIP(ctx, "ip4", "counted.test."); err != nil {
		t.Fatalf(`LookupNetIP("ip4", "counted.test."): %v`, err)
	}
	if n := srv.Queries("counted.test"); n != 5 {
		t.Errorf("Queries after an A-only lookup = %d, want 5", n)
	}

	mustNotFind(t, r, "missing.test.")
	if n := srv.Queries("missing.test"); n != 2 {
		t.Errorf("Queries for an unknown name = %d, want 2", n)
	}
	if n := srv.Queries("never.test"); n != 0 {
		t.Errorf("Queries for a name never asked = %d, want 0", n)
	}
}

// tcpResolver returns a resolver that reaches srv over TCP only.
func tcpResolver(srv *dnstest.Server) *net.Resolver {
	return &net.Resolver{
		PreferGo: true,
		Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "tcp", srv.Addr())
		},
	}
}

func TestTCP(t *testing.T) {
	srv := dnstest.Start(t)
	mixed := addrs("192.0.2.1", "2001:db8::1")
	srv.Set("mixed.test", mixed)
	// IPv4 only: see Set on sets that mix families.
	srv.Set("rebind.test", addrs("192.0.2.1"), addrs("127.0.0.1"))
	r := tcpResolver(srv)
	mustLookup(t, r, "mixed.test", mixed)
	mustLookup(t, r, "rebind.test", addrs("192.0.2.1"))
	mustLookup(t, r, "rebind.test", addrs("127.0.0.1"))
	mustNotFind(t, r, "unknown.test")
}

func TestTruncatedAnswerRetriedOverTCP(t *testing.T) {
	srv := dnstest.Start(t)
	// 200 A records are about 3,200 bytes: more than any UDP size the
	// resolver advertises, so the UDP answer is truncated.
	var many []netip.Addr
	for i := range 200 {
		many = append(many, netip.AddrFrom4([4]byte{10, 0, byte(i / 256), byte(i % 256)}))
	}
	srv.Set("many.test", many)
	mustLookup(t, srv.Resolver(), "many.test", many)
}

func TestMalformedQueriesIgnored(t *testing.T) {
	srv := dnstest.Start(t)
	srv.Set("ok.test", addrs("192.0.2.1"))
	garbage := [][]byte{
		nil,
		{0},
		[]byte("not a dns message at all"),
		{0x12, 0x34, 0x01, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 'o', 'k'}, // question cut short
		{0x12, 0x34, 0x01, 0x00, 0x00, 0x05, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00},                 // 5 questions, none there
		[]byte(strings.Repeat("\xff", 600)),
	}

	udp, err := net.Dial("udp", srv.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer udp.Close()
	tcp, err := net.Dial("tcp", srv.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer tcp.Close()
	for _, msg := range garbage {
		if _, err := udp.Write(msg); err != nil {
			t.Fatalf("write udp: %v", err)
		}
		framed := binary.BigEndian.AppendUint16(nil, uint16(len(msg)))
		if _, err := tcp.Write(append(framed, msg...)); err != nil {
			t.Fatalf("write tcp: %v", err)
		}
	}

	// A garbled message gets no answer, and the server keeps serving on both
	// transports.
	udp.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
	if n, err := udp.Read(make([]byte, 512)); err == nil {
		t.Errorf("udp: got a %d-byte answer to garbage, want none", n)
	}
	mustLookup(t, srv.Resolver(), "ok.test", addrs("192.0.2.1"))
	mustLookup(t, tcpResolver(srv), "ok.test", addrs("192.0.2.1"))
}

func TestClose(t *testing.T) {
	srv := dnstest.Start(t)
	idle, err := net.Dial("tcp", srv.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	if err := srv.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := srv.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := net.Dial("tcp", srv.Addr()); err == nil {
		t.Errorf("Dial tcp %s after Close succeeded, want refused", srv.Addr())
	}
	idle.SetReadDeadline(time.Now().Add(lookupTimeout))
	if _, err := idle.Read(make([]byte, 1)); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("read on a connection open at Close = %v, want it closed by the server", err)
	}
}

func TestAddr(t *testing.T) {
	srv := dnstest.Start(t)
	ap, err := netip.ParseAddrPort(srv.Addr())
	if err != nil {
		t.Fatalf("Addr() = %q: %v", srv.Addr(), err)
	}
	if ap.Addr() != netip.MustParseAddr("127.0.0.1") || ap.Port() == 0 {
		t.Errorf("Addr() = %q, want 127.0.0.1:PORT", srv.Addr())
	}
}
