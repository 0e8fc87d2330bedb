package netguard

import (
	"encoding/binary"
	"slices"
)

// ruleSet is a list of domain rules compiled into one buffer, in the order
// they were written: what the Guard scans to judge a host. Compiling or
// reading a set is one buffer, not an allocation per rule, so a one-shot
// process with a thousand rules reads its compiled rules (NewCached) without
// building anything per rule. The zero value holds no rule.
//
// Each rule is one record:
//
//	uvarint len(text), text        the rule as written (for reasons)
//	flags                          ruleSub | ruleApex
//	uvarint len(host), host        Rule.Host
//	methods (2 bytes, LE)          bit i: methods[i]; 0 is every method
//	uvarint len(ports), ports      2 bytes each, LE; none: see Rule
type ruleSet struct {
	n    int
	recs []byte
}

const (
	ruleSub  = 1 << 0
	ruleApex = 1 << 1
)

// appendRule appends r's record to b.
func appendRule(b []byte, r *Rule) []byte {
	b = binary.AppendUvarint(b, uint64(len(r.Text)))
	b = append(b, r.Text...)
	var flags byte
	if r.Sub {
		flags |= ruleSub
	}
	if r.Apex {
		flags |= ruleApex
	}
	b = append(b, flags)
	b = binary.AppendUvarint(b, uint64(len(r.Host)))
	b = append(b, r.Host...)
	var m uint16
	for _, meth := range r.Methods {
		m |= methodBit(meth)
	}
	b = binary.LittleEndian.AppendUint16(b, m)
	b = binary.AppendUvarint(b, uint64(len(r.Ports)))
	for _, p := range r.Ports {
		b = binary.LittleEndian.AppendUint16(b, p)
	}
	return b
}

// methodBit is the bit of a rule's methods field that stands for method
// (upper case), or 0 for a method no rule can name.
func methodBit(method string) uint16 {
	if i := slices.Index(methods, method); i >= 0 {
		return 1 << i
	}
	return 0
}

// compileRules parses texts into a set; the error is ParseRule's for the
// first bad one.
func compileRules(texts []string) (ruleSet, error) {
	s := ruleSet{n: len(texts), recs: make([]byte, 0, 32*len(texts))}
	for _, t := range texts {
		r, err := ParseRule(t)
		if err != nil {
			return ruleSet{}, err
		}
		s.recs = appendRule(s.recs, &r)
	}
	return s, nil
}

// rec is one record of a set, read in place.
type rec struct {
	text, host []byte
	flags      byte
	methods    uint16
	ports      []byte // 2 bytes a port
}

// next reads the record at the start of b and returns what follows it;
// false when b does not start with a whole, well-formed record.
func (r *rec) next(b []byte) ([]byte, bool) {
	var ok bool
	if r.text, b, ok = lenBytes(b, 1); !ok || len(b) < 1 {
		return nil, false
	}
	r.flags, b = b[0], b[1:]
	if r.flags&^(ruleSub|ruleApex) != 0 || r.flags == 0 {
		return nil, false
	}
	if r.host, b, ok = lenBytes(b, 1); !ok || len(r.host) == 0 || len(b) < 2 {
		return nil, false
	}
	r.methods, b = binary.LittleEndian.Uint16(b), b[2:]
	if r.methods>>len(methods) != 0 {
		return nil, false
	}
	if r.ports, b, ok = lenBytes(b, 2); !ok {
		return nil, false
	}
	return b, true
}

// lenBytes reads a uvarint count of size-byte items and the items from b.
func lenBytes(b []byte, size int) (item, rest []byte, ok bool) {
	n, k := uvarint(b)
	if k <= 0 || n > uint64(len(b)-k)/uint64(size) {
		return nil, nil, false
	}
	end := k + int(n)*size
	return b[k:end:end], b[end:], true
}

// uvarint is binary.Uvarint, refusing (k == 0) a number not written in
// its shortest form, so that one file encodes one set of rules.
func uvarint(b []byte) (n uint64, k int) {
	n, k = binary.Uvarint(b)
	if k > 1 && b[k-1] == 0 {
		return 0, 0
	}
	return n, k
}

// first returns the first rule of s, in the order written, for which match
// is true; false when there is none. s must be valid.
func (s ruleSet) first(match func(r *rec) bool) (rec, bool) {
	b := s.recs
	var r rec
	for range s.n {
		var ok bool
		if b, ok = r.next(b); !ok {
			return rec{}, false // not reached: the set was checked
		}
		if match(&r) {
			return r, true
		}
	}
	return rec{}, false
}

// hostMatches reports whether the canonical host h is covered by the rule.
func (r *rec) hostMatches(h string) bool {
	if len(h) == len(r.host) {
		return r.flags&ruleApex != 0 && h == string(r.host)
	}
	at := len(h) - len(r.host)
	return r.flags&ruleSub != 0 && at > 0 && h[at-1] == '.' && h[at:] == string(r.host)
}

// portMatches reports whether port is covered; allow rules without ports
// cover 80 and 443, deny rules every port.
func (r *rec) portMatches(port uint16, deny bool) bool {
	if len(r.ports) == 0 {
		return deny || port == 80 || port == 443
	}
	for i := 0; i+1 < len(r.ports); i += 2 {
		if binary.LittleEndian.Uint16(r.ports[i:]) == port {
			return true
		}
	}
	return false
}

// methodMatches reports whether the method whose bit is bit (methodBit) is
// covered.
func (r *rec) methodMatches(bit uint16) bool {
	return r.methods == 0 || r.methods&bit != 0
}
