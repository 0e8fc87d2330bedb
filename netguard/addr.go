package netguard

import (
	"net/netip"
	"strconv"
	"strings"
	"sync"
)

// Class is what the address table says about an address. The zero value is
// Blocked, so a Class nobody set never opens anything.
type Class int

const (
	// Blocked addresses cannot be opened by any rule: this network, link-local
	// and cloud metadata, shared (CGNAT), multicast, reserved, IPv6 loopback
	// and everything outside IPv6 global unicast.
	Blocked Class = iota
	// Reserved addresses (documentation and benchmarking ranges) are not
	// routed on the Internet and reach nothing of the machine's own: where a
	// network does route them, a middlebox of its operator answers (an
	// intercepting resolver and proxy). They are blocked as literals, and
	// open as the resolved answer for a name a rule or a human allowed.
	Reserved
	// Private addresses (RFC 1918, IPv4 loopback 127/8, IPv6 unique local
	// fc00::/7) are blocked unless a rule names them (allow_private).
	Private
	// Public addresses are those the table does not list.
	Public
)

// String returns "blocked", "private" or "public", and "Class(n)" for any
// other value.
func (c Class) String() string {
	switch c {
	case Blocked:
		return "blocked"
	case Reserved:
		return "reserved"
	case Private:
		return "private"
	case Public:
		return "public"
	}
	return "Class(" + strconv.Itoa(int(c)) + ")"
}

// addrRow is one row of the address table as written: a prefix, its class
// and a short name for the range.
type addrRow struct {
	prefix string
	class  Class
	name   string
}

// addrRows is the address table, after the IANA IPv4 and IPv6
// special-purpose address registries. It is judged against normalised
// addresses (see NormalizeIP), so the ranges that embed IPv4 (mapped,
// compatible, NAT64, 6to4, Teredo) never reach it. An address no row matches
// is Public.
//
// Where rows overlap, the strictest class wins, and among rows of that class
// the longest prefix gives the reason. So fd00:ec2::254/128 (Blocked) is
// blocked inside fc00::/7 (Private), and no Private row can open an address a
// Blocked row covers. For that reason the IPv6 space outside global unicast
// 2000::/3 is listed as the prefixes that make up its complement less
// fc00::/7, rather than as one rule that would cover the unique-local range.
var addrRows = []addrRow{
	// IPv4.
	{"0.0.0.0/8", Blocked, "this network; Linux connects 0.0.0.0 to the local host"},
	{"10.0.0.0/8", Private, "RFC 1918 private"},
	{"100.64.0.0/10", Blocked, "shared address space (CGNAT), includes Alibaba Cloud metadata 100.100.100.200"},
	{"127.0.0.0/8", Private, "loopback"},
	{"169.254.0.0/16", Blocked, "link-local, cloud metadata"},
	{"172.16.0.0/12", Private, "RFC 1918 private"},
	{"192.0.0.0/24", Blocked, "IETF protocol assignments"},
	{"192.0.2.0/24", Reserved, "TEST-NET-1 documentation"},
	{"192.31.196.0/24", Blocked, "AS112-v4"},
	{"192.52.193.0/24", Blocked, "AMT"},
	{"192.88.99.0/24", Blocked, "deprecated 6to4 relay anycast"},
	{"192.168.0.0/16", Private, "RFC 1918 private"},
	{"192.175.48.0/24", Blocked, "direct delegation AS112 service"},
	{"198.18.0.0/15", Reserved, "benchmarking"},
	{"198.51.100.0/24", Reserved, "TEST-NET-2 documentation"},
	{"203.0.113.0/24", Reserved, "TEST-NET-3 documentation"},
	{"224.0.0.0/4", Blocked, "multicast"},
	{"240.0.0.0/4", Blocked, "reserved, includes broadcast 255.255.255.255"},

	// IPv6 inside global unicast 2000::/3. 2001::/32 (Teredo) and
	// 2002::/16 (6to4) are unwrapped before the table is consulted.
	{"2001::/23", Blocked, "IETF protocol assignments"},
	{"2001:db8::/32", Reserved, "documentation"},
	{"3fff::/20", Reserved, "documentation"},

	// IPv6 unique local, and the metadata address AWS puts inside it.
	{"fc00::/7", Private, "unique local"},
	{"fd00:ec2::254/128", Blocked, "AWS instance metadata (IMDS) over IPv6"},

	// IPv6 outside global unicast, named where IANA names them.
	{"::/128", Blocked, "unspecified"},
	{"::1/128", Blocked, "loopback"},
	{"100::/64", Blocked, "discard-only"},
	{"5f00::/16", Blocked, "segment routing SIDs"},
	{"fe80::/10", Blocked, "link-local"},
	{"fec0::/10", Blocked, "deprecated site-local"},
	{"ff00::/8", Blocked, "multicast"},

	// The rest of the IPv6 space outside 2000::/3 and fc00::/7.
	{"::/3", Blocked, "outside global unicast 2000::/3"},
	{"4000::/2", Blocked, "outside global unicast 2000::/3"},
	{"8000::/2", Blocked, "outside global unicast 2000::/3"},
	{"c000::/3", Blocked, "outside global unicast 2000::/3"},
	{"e000::/4", Blocked, "outside global unicast 2000::/3"},
	{"f000::/5", Blocked, "outside global unicast 2000::/3"},
	{"f800::/6", Blocked, "outside global unicast 2000::/3"},
	{"fe00::/7", Blocked, "outside global unicast 2000::/3"},
}

// addrRule is one parsed row of the address table.
type addrRule struct {
	prefix netip.Prefix
	class  Class
	reason string // prefix and name, e.g. "169.254.0.0/16 (link-local, cloud metadata)"
}

// addrTable is addrRows parsed once, on first use (not at package init:
// every warden process would pay for it, hooks included).
var addrTable = sync.OnceValue(func() []addrRule { return parseAddrRows(addrRows) })

// parseAddrRows parses the rows of the address table. A malformed prefix is a
// programming error and panics on first use (every TestClassify* case parses it).
func parseAddrRows(rows []addrRow) []addrRule {
	rules := make([]addrRule, len(rows))
	for i, r := range rows {
		p := netip.MustParsePrefix(r.prefix)
		rules[i] = addrRule{prefix: p, class: r.class, reason: p.String() + " (" + r.name + ")"}
	}
	return rules
}

// publicReason is the reason Classify gives for an address no row matches.
const publicReason = "not in any special-purpose range"

// lookup judges a normalised address against the address table: the
// strictest matching class wins, and the longest matching prefix of that
// class gives the reason.
func lookup(a netip.Addr) (Class, string) {
	table := addrTable()
	best := -1
	for i, r := range table {
		if !r.prefix.Contains(a) {
			continue
		}
		if best < 0 || r.class < table[best].class ||
			r.class == table[best].class && r.prefix.Bits() > table[best].prefix.Bits() {
			best = i
		}
	}
	if best < 0 {
		return Public, publicReason
	}
	return table[best].class, table[best].reason
}

// embedding is an IPv6 range that carries an IPv4 address.
type embedding struct {
	prefix netip.Prefix
	name   string // as reasons show it, e.g. "IPv4-mapped ::ffff:0:0/96"
}

// newEmbedding returns the embedding named name whose range is prefix.
func newEmbedding(prefix, name string) embedding {
	return embedding{prefix: netip.MustParsePrefix(prefix), name: name + " " + prefix}
}

// The IPv6 ranges that carry an IPv4 address.
var (
	mapped     = newEmbedding("::ffff:0:0/96", "IPv4-mapped")
	compatible = newEmbedding("::/96", "IPv4-compatible")
	nat64      = newEmbedding("64:ff9b::/96", "NAT64")
	nat64Local = newEmbedding("64:ff9b:1::/48", "local-use NAT64")
	sixToFour  = newEmbedding("2002::/16", "6to4")
	teredo     = newEmbedding("2001::/32", "Teredo")
)

// unwrapped is the result of one unwrapping step: the IPv4 address found
// inside an IPv6 one, and where it was found.
type unwrapped struct {
	inner  netip.Addr // the embedded IPv4 address
	via    string     // the embedding's name, e.g. "IPv4-mapped ::ffff:0:0/96"
	server netip.Addr // for Teredo, the server's IPv4 address; the zero Addr otherwise
}

// unwrapOnce returns the IPv4 address embedded in a, which must have no zone,
// and false when a embeds none.
func unwrapOnce(a netip.Addr) (unwrapped, bool) {
	if !a.Is6() {
		return unwrapped{}, false
	}
	b := a.As16()
	switch {
	case mapped.prefix.Contains(a):
		return unwrapped{inner: a.Unmap(), via: mapped.name}, true
	case compatible.prefix.Contains(a) && a != netip.IPv6Unspecified() && a != netip.IPv6Loopback():
		return unwrapped{inner: netip.AddrFrom4([4]byte(b[12:16])), via: compatible.name}, true
	case nat64.prefix.Contains(a):
		return unwrapped{inner: netip.AddrFrom4([4]byte(b[12:16])), via: nat64.name}, true
	case nat64Local.prefix.Contains(a):
		// RFC 6052 section 2.2, /48 layout: the IPv4 address is split
		// around bits 64..71 (the u-octet, byte 8).
		return unwrapped{inner: netip.AddrFrom4([4]byte{b[6], b[7], b[9], b[10]}), via: nat64Local.name}, true
	case sixToFour.prefix.Contains(a):
		return unwrapped{inner: netip.AddrFrom4([4]byte(b[2:6])), via: sixToFour.name}, true
	case teredo.prefix.Contains(a):
		// RFC 4380 section 4: the server in bits 32..63, the client in
		// the last 32 bits with every bit inverted.
		return unwrapped{
			inner:  netip.AddrFrom4([4]byte{^b[12], ^b[13], ^b[14], ^b[15]}),
			via:    teredo.name,
			server: netip.AddrFrom4([4]byte(b[4:8])),
		}, true
	}
	return unwrapped{}, false
}

// maxUnwrap bounds the unwrapping loop. Every embedding known here yields an
// IPv4 address, which cannot be unwrapped again, so in practice one step is
// all that happens; the bound keeps the loop finite should an embedding that
// yields IPv6 ever be added.
const maxUnwrap = 4

// NormalizeIP returns the address a policy judges: the zone stripped, and any
// IPv4 address embedded in an IPv6 one unwrapped. The embeddings are
// IPv4-mapped ::ffff:0:0/96; IPv4-compatible ::/96 (except :: and ::1
// themselves); NAT64 64:ff9b::/96 (the last 32 bits); local-use NAT64
// 64:ff9b:1::/48 (RFC 6052 /48 layout: bytes 6, 7, 9 and 10, byte 8 being
// the u-octet); 6to4 2002::/16 (bytes 2 to 5); and Teredo 2001::/32 (the
// client address, the last 32 bits inverted). Unwrapping repeats, a bounded
// number of times, until nothing more is embedded, so NormalizeIP is
// idempotent. The zero Addr comes back unchanged.
func NormalizeIP(a netip.Addr) netip.Addr {
	a = a.WithZone("")
	for range maxUnwrap {
		step, ok := unwrapOnce(a)
		if !ok {
			break
		}
		a = step.inner
	}
	return a
}

// Classify returns the class of a and a short reason naming the range, such
// as "169.254.0.0/16 (link-local, cloud metadata)". It judges NormalizeIP(a);
// when an IPv4 address was unwrapped, the reason says from where. For a
// Teredo address both the server and the client IPv4 address are judged and
// the stricter class wins. The zero Addr is Blocked.
func Classify(a netip.Addr) (Class, string) {
	if !a.IsValid() {
		return Blocked, "invalid address"
	}
	a = a.WithZone("")
	var (
		via          string // ", unwrapped from …" for each step, innermost first
		serverClass  = Public
		serverReason string
	)
	for range maxUnwrap {
		step, ok := unwrapOnce(a)
		if !ok {
			break
		}
		if step.server.IsValid() {
			if c, r := lookup(step.server); c < serverClass {
				serverClass = c
				serverReason = r + ", the range of Teredo server " + step.server.String()
			}
		}
		via = ", unwrapped from " + step.via + via
		a = step.inner
	}
	class, reason := lookup(a)
	if serverClass < class {
		return serverClass, serverReason
	}
	return class, reason + via
}

// IsBlockedPrivateOrLinkLocal reports whether a is anything but Public:
// blocked (link-local and metadata included) or private, after
// normalisation. The zero Addr is blocked.
func IsBlockedPrivateOrLinkLocal(a netip.Addr) bool {
	class, _ := Classify(a)
	return class != Public
}

// loopbackNames are the host names that name the local machine.
var loopbackNames = map[string]bool{
	"localhost":             true,
	"localhost.localdomain": true,
	"ip6-localhost":         true,
	"ip6-loopback":          true,
}

// IsLoopbackHost reports whether host names the local machine. host may be
// bracketed and may carry a :port, which is ignored. Names match without
// regard to case and with one trailing dot ignored: "localhost", any name
// ending in ".localhost", "localhost.localdomain", "ip6-localhost" and
// "ip6-loopback". An address literal matches in any spelling NormalizeIP and
// ParseLegacyIPv4 understand (so "0x7f000001", "127.1" and
// "::ffff:127.0.0.1" all match) when its normalised form is loopback
// (127.0.0.0/8, ::1) or unspecified (0.0.0.0/8, ::), since Linux connects
// those to the local host. The empty string does not match.
func IsLoopbackHost(host string) bool {
	host, ok := stripBracketsAndPort(host)
	if !ok {
		return false
	}
	name := strings.ToLower(strings.TrimSuffix(host, "."))
	if loopbackNames[name] || strings.HasSuffix(name, ".localhost") {
		return true
	}
	a, err := netip.ParseAddr(name)
	if err != nil {
		// ParseLegacyIPv4 strips one trailing dot itself; giving it the
		// untrimmed host keeps "127.0.0.1.." from matching.
		var ok bool
		if a, ok = ParseLegacyIPv4(host); !ok {
			return false
		}
	}
	a = NormalizeIP(a)
	return a.IsLoopback() || a.IsUnspecified() || (a.Is4() && a.As4()[0] == 0)
}

// stripBracketsAndPort returns host without its [brackets] and without a
// :port. A bare IPv6 literal (more than one colon, no brackets) is returned
// as it is. It returns false for an opening bracket with no closing one, or
// text after the closing bracket that is not a :port.
func stripBracketsAndPort(host string) (string, bool) {
	if rest, ok := strings.CutPrefix(host, "["); ok {
		inside, after, ok := strings.Cut(rest, "]")
		if !ok || after != "" && after[0] != ':' {
			return "", false
		}
		return inside, true
	}
	if strings.Count(host, ":") == 1 {
		name, _, _ := strings.Cut(host, ":")
		return name, true
	}
	return host, true
}

// lastPartMax is the largest value the last part of a legacy IPv4 address
// may hold, indexed by the number of parts before it: a (32 bits), a.b
// (24 bits), a.b.c (16 bits), a.b.c.d (8 bits).
var lastPartMax = [4]uint64{0xffffffff, 0xffffff, 0xffff, 0xff}

// ParseLegacyIPv4 parses s the way glibc's inet_aton does, which is how the
// cgo resolver reads a host name: 1 to 4 dot-separated parts, each decimal,
// octal (a leading 0) or hexadecimal (a 0x or 0X prefix); every part but the
// last is one byte, and the last fills the remaining bytes (a: 32 bits; a.b:
// 8+24; a.b.c: 8+8+16). So "2130706433", "017700000001", "0x7f000001",
// "0x7f.0.0.1", "127.1", "127.0.1", "127.000.000.001" and "0177.0.0.1" are all
// 127.0.0.1, and "0" is 0.0.0.0. One trailing dot is accepted ("127.0.0.1."),
// which inet_aton refuses but a resolver may not. Anything else returns false:
// empty parts, a part too large, more than 4 parts, digits invalid for the
// base ("09"), a bare "0x", signs, spaces or other characters.
func ParseLegacyIPv4(s string) (netip.Addr, bool) {
	s = strings.TrimSuffix(s, ".")
	var value uint32
	for i := 0; ; i++ {
		part, rest, more := strings.Cut(s, ".")
		v, ok := parseLegacyPart(part)
		if !ok {
			return netip.Addr{}, false
		}
		if !more {
			if v > lastPartMax[i] {
				return netip.Addr{}, false
			}
			value |= uint32(v)
			break
		}
		if i == 3 || v > 0xff {
			return netip.Addr{}, false
		}
		value |= uint32(v) << (24 - 8*i)
		s = rest
	}
	return netip.AddrFrom4([4]byte{byte(value >> 24), byte(value >> 16), byte(value >> 8), byte(value)}), true
}

// parseLegacyPart parses one part of a legacy IPv4 address: decimal, octal
// with a leading 0, or hexadecimal with a 0x or 0X prefix. It returns false
// for an empty part, a digit invalid for the base, or a value over 32 bits.
func parseLegacyPart(p string) (uint64, bool) {
	base, digits := uint64(10), p
	switch {
	case len(p) > 1 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X'):
		base, digits = 16, p[2:]
	case len(p) > 1 && p[0] == '0':
		base, digits = 8, p[1:]
	}
	if digits == "" {
		return 0, false
	}
	var v uint64
	for i := 0; i < len(digits); i++ {
		d, ok := hexDigit(digits[i])
		if !ok || d >= base {
			return 0, false
		}
		v = v*base + d
		if v > 0xffffffff {
			return 0, false
		}
	}
	return v, true
}

// hexDigit returns the value of the hexadecimal digit c.
func hexDigit(c byte) (uint64, bool) {
	switch {
	case '0' <= c && c <= '9':
		return uint64(c - '0'), true
	case 'a' <= c && c <= 'f':
		return uint64(c-'a') + 10, true
	case 'A' <= c && c <= 'F':
		return uint64(c-'A') + 10, true
	}
	return 0, false
}
