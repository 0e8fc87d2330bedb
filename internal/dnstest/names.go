package dnstest

import (
	"net/netip"
	"slices"

	"golang.org/x/net/dns/dnsmessage"
)

// entry is what one name answers.
type entry struct {
	sets     [][]netip.Addr
	aQueries int // A queries since Set: the next A query gets sets[aQueries%len(sets)]
	current  int // the index of the set the last A query got, 0 before the first
}

// Set makes name answer with the given answer sets in turn, replacing what it
// answered before. The name is matched without regard to ASCII letter case,
// with or without a trailing dot.
//
// Each set is a list of addresses: A queries get the IPv4 ones and AAAA
// queries the IPv6 ones (IPv4-mapped IPv6 addresses included; zones are
// dropped). Every record has TTL 0. A name with no address of the queried
// family, or with no sets at all, gets NOERROR with no answers; a name never
// given to Set gets NXDOMAIN.
//
// The turn advances once per A-and-AAAA pair, so that one LookupNetIP call,
// which sends both queries, sees one set: each A query takes the next set
// (the first A query gets sets[0], the next sets[1], ..., cycling), and each
// AAAA query gets the set of the last A query, or sets[0] if there was none.
// Go's resolver sends the two queries in parallel, so an AAAA query that
// overtakes its A query gets the previous lookup's IPv6 addresses. Sets whose
// IPv6 addresses are the same in every set (none at all, for example) are not
// affected. And since only A queries advance the turn, lookups of network
// "ip6", which send AAAA queries alone, keep getting the same set.
//
// Set starts the turn again at sets[0]; it does not reset [Server.Queries].
func (s *Server) Set(name string, sets ...[]netip.Addr) {
	e := &entry{sets: make([][]netip.Addr, len(sets))}
	for i, set := range sets {
		e.sets[i] = slices.Clone(set)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.names[canonical(name)] = e
}

// Queries returns how many queries, of any type, the server has answered
// for name (matched as in [Server.Set]), including NXDOMAIN answers.
func (s *Server) Queries(name string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.queries[canonical(name)]
}

// lookup counts a query and returns its response code and the addresses it
// answers with, advancing the turn of the name on an A query.
func (s *Server) lookup(q dnsmessage.Question) (dnsmessage.RCode, []netip.Addr) {
	name := canonical(q.Name.String())
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queries[name]++
	e, ok := s.names[name]
	if !ok {
		return dnsmessage.RCodeNameError, nil
	}
	if len(e.sets) == 0 || q.Class != dnsmessage.ClassINET {
		return dnsmessage.RCodeSuccess, nil
	}
	var wantV4 bool
	switch q.Type {
	case dnsmessage.TypeA:
		e.current = e.aQueries % len(e.sets)
		e.aQueries++
		wantV4 = true
	case dnsmessage.TypeAAAA:
	default:
		return dnsmessage.RCodeSuccess, nil
	}
	var addrs []netip.Addr
	for _, a := range e.sets[e.current] {
		if a.IsValid() && a.Is4() == wantV4 {
			addrs = append(addrs, a)
		}
	}
	return dnsmessage.RCodeSuccess, addrs
}

// canonical returns name in ASCII lower case without a trailing dot, the key
// under which the server keeps it.
func canonical(name string) string {
	b := []byte(name)
	if n := len(b); n > 0 && b[n-1] == '.' {
		b = b[:n-1]
	}
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
