// Package fakedns answers a sandbox's name lookups with addresses of its
// own, so that a client that ignores the proxy variables (Node 20's fetch,
// Java, getent, a program's own sockets) still reaches warden's egress
// proxy. Each name gets an address from a range the sandbox routes to its
// own loopback, where warden serves the proxy's direct listeners; they ask
// the Table which name the address stands for and judge that name, as they
// judge a CONNECT. No lookup leaves the machine, so a name is never a
// channel out, and no answer ever holds a real address.
package fakedns

import (
	"errors"
	"net/netip"
	"strings"
	"sync"
)

// Prefix is the range names are given addresses from: 198.18.0.0/15, set
// aside for benchmarking (RFC 2544), so no real host has one.
var Prefix = netip.MustParsePrefix("198.18.0.0/15")

// Gateway is the first address of Prefix after the network's: the
// sandbox's loopback holds it, which routes the whole range there. No
// name is given it.
var Gateway = netip.AddrFrom4([4]byte{198, 18, 0, 1})

// MaxNames bounds a Table: beyond it a new name gets no address (the
// lookup fails), and an address is never given to a second name, since a
// client may still hold it.
const MaxNames = 65536

// ErrFull is returned when a Table has given MaxNames addresses.
var ErrFull = errors.New("fakedns: the sandbox has looked up too many names")

// Table gives each name an address of Prefix and says which name an
// address stands for. The zero value is empty and ready; it is safe for
// concurrent use.
type Table struct {
	mu     sync.Mutex
	byName map[string]netip.Addr
	byAddr map[netip.Addr]string
	next   uint32 // offset in Prefix of the next address to give
}

// Addr returns name's address, giving it one if it has none. name must be
// a host name (Canonical); anything else is an error.
func (t *Table) Addr(name string) (netip.Addr, error) {
	name, ok := Canonical(name)
	if !ok {
		return netip.Addr{}, errors.New("fakedns: not a host name")
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if a, ok := t.byName[name]; ok {
		return a, nil
	}
	if len(t.byName) >= MaxNames {
		return netip.Addr{}, ErrFull
	}
	if t.byName == nil {
		t.byName, t.byAddr = map[string]netip.Addr{}, map[netip.Addr]string{}
		t.next = 2 // the network's address and Gateway are never given
	}
	base := Prefix.Addr().As4()
	n := uint32(base[0])<<24 | uint32(base[1])<<16 | uint32(base[2])<<8 | uint32(base[3])
	n += t.next
	t.next++
	a := netip.AddrFrom4([4]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)})
	t.byName[name], t.byAddr[a] = a, name
	return a, nil
}

// Name returns the name a was given, or false when a stands for none.
func (t *Table) Name(a netip.Addr) (string, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	name, ok := t.byAddr[a.Unmap()]
	return name, ok
}

// Canonical returns name lower-cased and without its trailing dot, and
// whether it is a host name: labels of letters, digits, '-' and '_' (1 to
// 63 bytes each, none starting or ending with '-'), 253 bytes in all, not
// all digits and dots (an address is not looked up), and not under .arpa
// (reverse lookups are not answered).
func Canonical(name string) (string, bool) {
	name = strings.ToLower(strings.TrimSuffix(name, "."))
	if name == "" || len(name) > 253 {
		return "", false
	}
	digits := true
	for label := range strings.SplitSeq(name, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return "", false
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			switch {
			case c >= '0' && c <= '9':
			case c >= 'a' && c <= 'z', c == '-', c == '_':
				digits = false
			default:
				return "", false
			}
		}
	}
	if digits || name == "arpa" || strings.HasSuffix(name, ".arpa") {
		return "", false
	}
	return name, true
}
