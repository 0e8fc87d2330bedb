package netguard

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/idna"
)

// Target is one canonical destination: what a policy judges and what the
// egress proxy dials. Build one with ParseURL or ParseAuthority.
type Target struct {
	// Scheme is http, https, ws or wss; empty for a CONNECT authority.
	Scheme string
	// Host is the canonical host: an ASCII (punycode) lower-case name with no
	// trailing dot, or, for an address literal, Addr's text form.
	Host string
	// Addr is set when the host is an address literal, in whatever spelling
	// it was written (0x7f000001 is 127.0.0.1). It is not normalised.
	Addr netip.Addr
	Port uint16
	// Path is the path and query, for hashing; policies never see it.
	Path string
}

// IsAddr reports whether the target names an address rather than a host name.
func (t Target) IsAddr() bool { return t.Addr.IsValid() }

// Authority is host:port, with IPv6 addresses in brackets.
func (t Target) Authority() string {
	return net.JoinHostPort(t.Host, strconv.Itoa(int(t.Port)))
}

// Origin is scheme://host:port (host:port for a CONNECT authority).
func (t Target) Origin() string {
	if t.Scheme == "" {
		return t.Authority()
	}
	return t.Scheme + "://" + t.Authority()
}

// TargetError says why a URL or authority was refused before any policy
// could judge it.
type TargetError struct {
	Input string
	Rule  string // the decision rule, e.g. network.scheme
	Msg   string
}

func (e *TargetError) Error() string { return e.Msg }

func targetErr(input, rule, format string, args ...any) *TargetError {
	return &TargetError{Input: input, Rule: rule, Msg: fmt.Sprintf(format, args...)}
}

// schemePorts are the schemes a request may use and their default ports.
var schemePorts = map[string]uint16{"http": 80, "https": 443, "ws": 80, "wss": 443}

// maxURL bounds what the parser reads; longer URLs are refused.
const maxURL = 16 << 10

// ParseURL parses an absolute http, https, ws or wss URL strictly: no
// userinfo, no '@' in the fragment, no whitespace, control characters or
// backslashes, and a host that canonicalises (see CanonicalHost).
func ParseURL(raw string) (Target, error) {
	if len(raw) > maxURL {
		return Target{}, targetErr(raw, "network.malformed", "the URL is longer than %d bytes", maxURL)
	}
	if i := strings.IndexFunc(raw, func(r rune) bool { return r <= ' ' || r == 0x7f || r == '\\' }); i >= 0 {
		return Target{}, targetErr(raw, "network.malformed", "the URL contains %q at byte %d; URLs with spaces, control characters or backslashes are refused because parsers disagree on them", raw[i], i)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return Target{}, targetErr(raw, "network.malformed", "not a URL: %v", unwrapURLError(err))
	}
	scheme := strings.ToLower(u.Scheme)
	def, ok := schemePorts[scheme]
	switch {
	case scheme == "":
		return Target{}, targetErr(raw, "network.scheme", "the URL has no scheme; write it in full, e.g. https://%s", strings.TrimPrefix(raw, "//"))
	case !ok:
		return Target{}, targetErr(raw, "network.scheme", "the %s scheme is not allowed; only http, https, ws and wss are", scheme)
	case u.Opaque != "" || u.Host == "":
		return Target{}, targetErr(raw, "network.malformed", "the URL has no host; write it as %s://HOST/PATH", scheme)
	case u.User != nil:
		return Target{}, targetErr(raw, "network.userinfo", "the URL carries user information before '@'; it is refused because the host a reader sees is not the host it names")
	case strings.Contains(u.Fragment, "@") || strings.Contains(u.RawFragment, "@"):
		return Target{}, targetErr(raw, "network.userinfo", "the URL's fragment contains '@'; it is refused because other parsers read the part after '@' as the host")
	}
	t, err := hostPort(raw, u.Host, def)
	if err != nil {
		return Target{}, err
	}
	t.Scheme = scheme
	t.Path = u.EscapedPath()
	if u.RawQuery != "" {
		t.Path += "?" + u.RawQuery
	}
	return t, nil
}

// ParseAuthority parses a CONNECT target: host:port, with IPv6 addresses in
// brackets. The port is required.
func ParseAuthority(authority string) (Target, error) {
	if len(authority) > maxURL || strings.ContainsAny(authority, "@/\\?# \t\r\n") || authority == "" {
		return Target{}, targetErr(authority, "network.malformed", "%q is not a CONNECT target; want HOST:PORT", authority)
	}
	return hostPort(authority, authority, 0)
}

// hostPort canonicalises an authority; def is the port when none is given
// (0: a port is required).
func hostPort(input, authority string, def uint16) (Target, error) {
	host, port := authority, ""
	if h, p, err := net.SplitHostPort(authority); err == nil {
		host, port = h, p
	} else if def == 0 {
		return Target{}, targetErr(input, "network.malformed", "%q has no port; want HOST:PORT", authority)
	} else if strings.HasPrefix(authority, "[") && strings.HasSuffix(authority, "]") {
		host = authority[1 : len(authority)-1]
	} else if strings.Contains(authority, ":") {
		return Target{}, targetErr(input, "network.malformed", "%q is not HOST or HOST:PORT (IPv6 addresses go in brackets)", authority)
	}
	t := Target{Port: def}
	if port != "" || def == 0 {
		n, err := strconv.ParseUint(port, 10, 16)
		if err != nil || n == 0 || strings.TrimLeft(port, "0123456789") != "" {
			return Target{}, targetErr(input, "network.malformed", "port %q is not a number from 1 to 65535", port)
		}
		t.Port = uint16(n)
	}
	bracketed := strings.HasPrefix(authority, "[")
	if bracketed {
		a, err := netip.ParseAddr(host)
		if err != nil || !a.Is6() {
			return Target{}, targetErr(input, "network.malformed", "[%s] is not an IPv6 address", host)
		}
	}
	name, addr, err := CanonicalHost(host)
	if err != nil {
		return Target{}, targetErr(input, "network.malformed", "%v", err)
	}
	if addr.Is6() && !addr.Is4In6() && !bracketed && def != 0 {
		return Target{}, targetErr(input, "network.malformed", "IPv6 address %s must be in brackets", host)
	}
	t.Host, t.Addr = name, addr
	return t, nil
}

// hostProfile maps a host the way UTS #46 does for lookup (fullwidth digits
// and full stops, enclosed letters and case all map to ASCII), checks bidi
// rules, and allows underscores, which real host names carry.
var hostProfile = idna.New(idna.MapForLookup(), idna.BidiRule(), idna.Transitional(false), idna.StrictDomainName(false))

// CanonicalHost returns the canonical form of host (no brackets, no port):
// an address literal in any spelling libc would accept comes back as addr
// with name its text form; a name comes back in lower-case ASCII (punycode)
// with one trailing dot removed. Empty labels, labels over 63 bytes, names
// over 253, characters other than letters, digits, '-' and '_', a '%' outside
// an IPv6 zone, and names whose last label is a number but that are not an
// address are refused.
func CanonicalHost(host string) (name string, addr netip.Addr, err error) {
	if host == "" {
		return "", netip.Addr{}, errors.New("the host is empty")
	}
	if len(host) > 1024 {
		return "", netip.Addr{}, errors.New("the host is longer than 1024 bytes")
	}
	if maybeAddr(host) {
		if a, err := netip.ParseAddr(host); err == nil {
			return a.WithZone("").String(), a, nil
		}
	}
	if !utf8.ValidString(host) {
		return "", netip.Addr{}, fmt.Errorf("host %q is not valid UTF-8", host)
	}
	if strings.Contains(host, "%") {
		return "", netip.Addr{}, fmt.Errorf("host %q contains '%%', which only an IPv6 zone may", host)
	}
	mapped, ok := plainHost(host)
	if !ok {
		if mapped, err = idnaCanonical(host); err != nil {
			return "", netip.Addr{}, err
		}
	}
	if a, ok := ParseLegacyIPv4(mapped); ok {
		return a.String(), a, nil
	}
	if mapped == "" || len(mapped) > 253 {
		return "", netip.Addr{}, fmt.Errorf("host %q is not a valid host name (empty or over 253 bytes)", host)
	}
	labels := strings.Split(mapped, ".")
	for _, l := range labels {
		if l == "" || len(l) > 63 {
			return "", netip.Addr{}, fmt.Errorf("host %q has an empty label or one longer than 63 bytes", host)
		}
		if strings.IndexFunc(l, func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_')
		}) >= 0 {
			return "", netip.Addr{}, fmt.Errorf("host %q has characters other than letters, digits, '-' and '_'", host)
		}
	}
	if last := labels[len(labels)-1]; numericLabel(last) {
		return "", netip.Addr{}, fmt.Errorf("host %q ends in a number but is not an IPv4 address", host)
	}
	return mapped, netip.Addr{}, nil
}

// maybeAddr reports whether netip.ParseAddr could read host: an IPv6
// literal has a ':', and an IPv4 one ends in a label of digits.
func maybeAddr(host string) bool {
	if strings.IndexByte(host, ':') >= 0 {
		return true
	}
	last := host[strings.LastIndexByte(host, '.')+1:]
	return last != "" && strings.Trim(last, "0123456789") == ""
}

// idnaCanonical maps host through UTS #46 and checks that the result is
// stable: lower-case ASCII without a trailing dot.
func idnaCanonical(host string) (string, error) {
	mapped, err := hostProfile.ToASCII(host)
	if err != nil {
		return "", fmt.Errorf("host %q is not a valid international domain name: %v", host, err)
	}
	mapped = strings.TrimSuffix(strings.ToLower(mapped), ".")
	if again, err := hostProfile.ToASCII(mapped); err != nil || again != mapped {
		// Punycode that does not decode to a valid name, or a name the
		// mapping would change again, has no one canonical form.
		return "", fmt.Errorf("host %q has no stable canonical form", host)
	}
	return mapped, nil
}

// plainHost is idnaCanonical for the hosts nearly every rule and request
// names, without the IDNA tables (two ToASCII calls were most of compiling a
// network rule): labels of ASCII letters, digits and '_', with single '-'
// inside them, and an optional trailing dot. UTS #46 only lower-cases such a
// name. Anything else (empty labels, leading or trailing hyphens, "--"
// anywhere, so every punycode label) reports false and takes the IDNA path.
// FuzzPlainHost checks that both agree.
func plainHost(host string) (string, bool) {
	h := strings.TrimSuffix(host, ".")
	if h == "" {
		return "", false
	}
	start := 0
	for i := 0; i <= len(h); i++ {
		if i < len(h) && h[i] != '.' {
			c := h[i]
			switch {
			case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_':
			case c == '-':
				if i == start || i+1 == len(h) || h[i+1] == '.' || h[i+1] == '-' {
					return "", false
				}
			default:
				return "", false
			}
			continue
		}
		if i == start {
			return "", false // an empty label
		}
		start = i + 1
	}
	return strings.ToLower(h), true
}

// numericLabel reports whether l reads as a number (decimal, or 0x hex), the
// WHATWG test for a host that must be an IPv4 address.
func numericLabel(l string) bool {
	if strings.HasPrefix(l, "0x") {
		return strings.Trim(l[2:], "0123456789abcdef") == ""
	}
	return strings.Trim(l, "0123456789") == ""
}

func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}
