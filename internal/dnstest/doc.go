// Package dnstest runs a small authoritative DNS server on the loopback
// interface for tests that need name resolution under their control: DNS
// rebinding (a name whose answer changes from one lookup to the next), answers
// that mix public and private addresses, and resolvers that return 0.0.0.0.
//
// The server answers A and AAAA queries for the names given to [Server.Set],
// with TTL 0 so that nothing is cached, and NXDOMAIN for every other name. It
// listens on 127.0.0.1 over UDP and TCP on the same port. [Server.Resolver]
// returns a *net.Resolver that sends every query to it, so a test never
// reaches the system's resolver:
//
//	srv := dnstest.Start(t)
//	srv.Set("rebind.test", []netip.Addr{public}, []netip.Addr{loopback})
//	first, err := srv.Resolver().LookupNetIP(ctx, "ip", "rebind.test")  // public
//	second, err := srv.Resolver().LookupNetIP(ctx, "ip", "rebind.test") // loopback
//
// Go's resolver reads /etc/hosts before it asks DNS, so tests should use
// names that cannot be there, such as names under the reserved .test domain.
package dnstest
