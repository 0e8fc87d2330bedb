package netguard

import (
	"encoding/binary"

	"github.com/agentwarden/warden/internal/cachefile"
)

// The compiled-rules cache lets a one-shot process (a hook, `warden check`)
// skip compiling a large policy's domain rules: with 1,000 of them, parsing
// and canonicalising every rule was most of what a network check added to
// the default policy's.
//
// A cache file holds the compiled rules (their records, see ruleSet) with
// what they were compiled from: the version of the code that compiled them
// (the binary's identity: another build may compile differently) and every
// rule's text, in order, in both lists. It is used only when all of that is
// the same, byte for byte, as the version and the Policy being loaded; every
// record is checked to be whole and well-formed before any is used. Anything
// else (another policy, another binary, a torn, damaged or foreign file)
// is ignored and the rules compiled as New does. What the cache does not
// hold (ask_unknown_domains, allow_private) is read from the Policy each time.
//
// The file is written atomically and not synced; a torn one fails its
// CRC-32. It belongs in warden's home, which only its owner may write (as
// the policy file and its cache): whoever can write it can write the policy.

// ruleCacheMagic starts a cache file; bump the number when the format
// changes.
const ruleCacheMagic = "warden-netguard-cache 2\n"

// NewCached is New through the cache file at path: the domain rules are read
// from it when it holds them compiled from exactly p's rules by version, and
// otherwise compiled and written there for the next process. version names
// the code that compiles (the binary); with version or path empty it is New.
// A cache that cannot be read or written is never an error.
func NewCached(p Policy, path, version string) (*Guard, error) {
	g, _, err := newCached(p, path, version)
	return g, err
}

// newCached is NewCached, also saying whether the rules came from the cache.
func newCached(p Policy, path, version string) (*Guard, bool, error) {
	if path == "" || version == "" {
		g, err := New(p)
		return g, false, err
	}
	if raw, ok := cachefile.Read(path); ok {
		if allowed, denied, ok := decodeRuleCache(raw, p, version); ok {
			g, err := newBase(p)
			if err != nil {
				return nil, false, err
			}
			g.allowed, g.denied = allowed, denied
			return g, true, nil
		}
	}
	g, err := New(p)
	if err != nil {
		return nil, false, err
	}
	cachefile.Write(path, encodeRuleCache(version, g))
	return g, false, nil
}

// encodeRuleCache is a cache file holding g's domain rules compiled by
// version (cachefile.Seal): version, then for the allowed and the denied
// rules their count and their records.
func encodeRuleCache(version string, g *Guard) []byte {
	b := make([]byte, 0, len(version)+len(g.allowed.recs)+len(g.denied.recs)+32)
	b = binary.AppendUvarint(b, uint64(len(version)))
	b = append(b, version...)
	for _, s := range []ruleSet{g.allowed, g.denied} {
		b = binary.AppendUvarint(b, uint64(s.n))
		b = binary.AppendUvarint(b, uint64(len(s.recs)))
		b = append(b, s.recs...)
	}
	return cachefile.Seal(ruleCacheMagic, b)
}

// decodeRuleCache returns the allowed and denied rules in raw when raw is a
// whole cache file that version wrote for exactly p's rules. The sets share
// raw, which nothing may write after.
func decodeRuleCache(raw []byte, p Policy, version string) (allowed, denied ruleSet, ok bool) {
	b, ok := cachefile.Open(raw, ruleCacheMagic)
	if !ok {
		return ruleSet{}, ruleSet{}, false
	}
	v, b, ok := lenBytes(b, 1)
	if !ok || string(v) != version {
		return ruleSet{}, ruleSet{}, false
	}
	if allowed, b, ok = readRuleSet(b, p.Allowed); !ok {
		return ruleSet{}, ruleSet{}, false
	}
	if denied, b, ok = readRuleSet(b, p.Denied); !ok || len(b) != 0 {
		return ruleSet{}, ruleSet{}, false
	}
	return allowed, denied, true
}

// readRuleSet reads a count and the records of a set from b, which must be
// the rules texts compiled, in order; false when they are not.
func readRuleSet(b []byte, texts []string) (ruleSet, []byte, bool) {
	n, k := uvarint(b)
	if k <= 0 || n != uint64(len(texts)) {
		return ruleSet{}, nil, false
	}
	recs, rest, ok := lenBytes(b[k:], 1)
	if !ok {
		return ruleSet{}, nil, false
	}
	s := ruleSet{n: len(texts), recs: recs}
	at := recs
	for _, t := range texts {
		var r rec
		if at, ok = r.next(at); !ok || string(r.text) != t {
			return ruleSet{}, nil, false
		}
	}
	if len(at) != 0 {
		return ruleSet{}, nil, false
	}
	return s, rest, true
}
