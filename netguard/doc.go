// Package netguard decides the network capability: which hosts, ports and
// methods an agent may reach, and which addresses no rule can ever open.
//
// A request names a URL (or a CONNECT authority). The host is canonicalised
// first (IDNA/UTS-46 mapping, lower case, one trailing dot removed, legacy
// IPv4 spellings such as 0x7f000001 read the way libc reads them), then judged:
// literal addresses by the address table, names by the domain rules (deny
// wins; ask never overrides a deny). When the egress proxy has resolved the
// name, every answer is judged by the address table as well, and the proxy's
// dialer judges the address again at connect time.
//
// The address table follows the IANA special-purpose registries. Addresses
// that embed an IPv4 address (mapped, compatible, NAT64, 6to4, Teredo) are
// unwrapped and judged by the IPv4 inside; zones are stripped first.
package netguard
