package netguard

import (
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
)

// ruleSet is a list of domain rules compiled into one buffer, in the order
// they were written: what the Guard scans to judge a host. Compiling or
// reading a set is one buffer, not an allocation per rule, so a one-shot
// process with a thousand rules reads its compiled rules (NewCached) without
// building anything per rule. The zero value holds no rule.
//
// Each rule is one record: a 12-byte header, the text, the host unless it is
// part of the text, and the ports.
//
//	[0:4]   len(text), LE
//	[4:6]   len(ports), LE
//	[6:8]   methods, LE: bit i is methods[i]; 0 is every method
//	[8]     flags: ruleSub, ruleApex, ruleHostInText
//	[9]     len(host), 1 to 255
//	[10:12] where the host starts in the text (ruleHostInText), else 0
//	text, host (unless ruleHostInText), ports (2 bytes each, LE)
type ruleSet struct {
	n    int
	recs []byte
}

const (
	ruleSub        = 1 << 0 // matches names below the host
	ruleApex       = 1 << 1 // matches the host itself
	ruleHostInText = 1 << 2 // the host is the text's bytes at [10:12]
	ruleFlags      = ruleSub | ruleApex | ruleHostInText

	recHeader = 12
)

// appendRule appends r's record to b; false when r does not fit one (a host
// over 255 bytes, which CanonicalHost never returns, or a text over 4 GB).
func appendRule(b []byte, r *Rule) ([]byte, bool) {
	if len(r.Host) == 0 || len(r.Host) > 255 || uint64(len(r.Text)) > 1<<32-1 || len(r.Ports) > 1<<16-1 {
		return b, false
	}
	var flags byte
	if r.Sub {
		flags |= ruleSub
	}
	if r.Apex {
		flags |= ruleApex
	}
	at := strings.Index(r.Text, r.Host)
	if at >= 0 && at < 1<<16 {
		flags |= ruleHostInText
	} else {
		at = 0
	}
	var m uint16
	for _, meth := range r.Methods {
		m |= methodBit(meth)
	}
	b = binary.LittleEndian.AppendUint32(b, uint32(len(r.Text)))
	b = binary.LittleEndian.AppendUint16(b, uint16(len(r.Ports)))
	b = binary.LittleEndian.AppendUint16(b, m)
	b = append(b, flags, byte(len(r.Host)))
	b = binary.LittleEndian.AppendUint16(b, uint16(at))
	b = append(b, r.Text...)
	if flags&ruleHostInText == 0 {
		b = append(b, r.Host...)
	}
	for _, p := range r.Ports {
		b = binary.LittleEndian.AppendUint16(b, p)
	}
	return b, true
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
	size := 0
	for _, t := range texts {
		size += recHeader + len(t)
	}
	s := ruleSet{n: len(texts), recs: make([]byte, 0, size)}
	for _, t := range texts {
		r, err := ParseRule(t)
		if err != nil {
			return ruleSet{}, err
		}
		var ok bool
		if s.recs, ok = appendRule(s.recs, &r); !ok {
			return ruleSet{}, fmt.Errorf("%q: the rule is too long", t)
		}
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
	if len(b) < recHeader {
		return nil, false
	}
	textLen := uint64(binary.LittleEndian.Uint32(b))
	nports := int(binary.LittleEndian.Uint16(b[4:]))
	r.methods = binary.LittleEndian.Uint16(b[6:])
	r.flags = b[8]
	hostLen := int(b[9])
	hostAt := int(binary.LittleEndian.Uint16(b[10:]))
	b = b[recHeader:]
	if r.flags&^ruleFlags != 0 || r.flags&(ruleSub|ruleApex) == 0 || r.methods>>len(methods) != 0 || hostLen == 0 || textLen > uint64(len(b)) {
		return nil, false
	}
	r.text, b = b[:textLen:textLen], b[textLen:]
	if r.flags&ruleHostInText != 0 {
		if hostAt+hostLen > len(r.text) {
			return nil, false
		}
		r.host = r.text[hostAt : hostAt+hostLen : hostAt+hostLen]
	} else {
		if hostAt != 0 || hostLen > len(b) {
			return nil, false
		}
		r.host, b = b[:hostLen:hostLen], b[hostLen:]
	}
	if 2*nports > len(b) {
		return nil, false
	}
	r.ports, b = b[:2*nports:2*nports], b[2*nports:]
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
