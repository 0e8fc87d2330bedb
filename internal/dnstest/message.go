package dnstest

import (
	"errors"
	"net/netip"

	"golang.org/x/net/dns/dnsmessage"
)

// udpLimit is the largest UDP response to a query without EDNS(0)
// (RFC 1035 §4.2.1).
const udpLimit = 512

// ednsUDPSize is the UDP payload size the server advertises in its own EDNS(0)
// record: the size DNS Flag Day 2020 recommends, which Go's resolver also uses.
const ednsUDPSize = 1232

// respond returns the wire-format response to query, or nil if query is not a
// well-formed DNS query with exactly one question, in which case it is
// ignored. A response longer than limit bytes, or than the UDP size the
// query's EDNS(0) record advertises if that is larger, is replaced by a
// truncated one (TC set, no answers) so the client retries over TCP.
func (s *Server) respond(query []byte, limit int) []byte {
	var p dnsmessage.Parser
	h, err := p.Start(query)
	if err != nil || h.Response {
		return nil
	}
	questions, err := p.AllQuestions()
	if err != nil || len(questions) != 1 {
		return nil
	}
	q := questions[0]
	if err := p.SkipAllAnswers(); err != nil {
		return nil
	}
	if err := p.SkipAllAuthorities(); err != nil {
		return nil
	}
	edns, ednsSize, err := findEDNS(&p)
	if err != nil {
		return nil
	}
	if edns && limit == udpLimit {
		limit = max(udpLimit, ednsSize)
	}

	rcode, addrs := dnsmessage.RCodeNotImplemented, []netip.Addr(nil)
	if h.OpCode == 0 { // QUERY
		rcode, addrs = s.lookup(q)
	}
	resp, err := buildResponse(h, q, rcode, addrs, edns, false)
	if err == nil && len(resp) > limit {
		resp, err = buildResponse(h, q, rcode, nil, edns, true)
	}
	if err != nil {
		return nil
	}
	return resp
}

// findEDNS reads the additional section and reports whether it holds an
// EDNS(0) OPT record and, if so, the UDP payload size that record advertises.
func findEDNS(p *dnsmessage.Parser) (found bool, udpSize int, err error) {
	for {
		h, err := p.AdditionalHeader()
		if errors.Is(err, dnsmessage.ErrSectionDone) {
			return found, udpSize, nil
		}
		if err != nil {
			return false, 0, err
		}
		if h.Type == dnsmessage.TypeOPT {
			found, udpSize = true, int(h.Class)
		}
		if err := p.SkipAdditional(); err != nil {
			return false, 0, err
		}
	}
}

// buildResponse packs the authoritative response to question q of the query
// with header h: the records for addrs, an EDNS(0) record if the query had
// one, and the TC bit if truncated.
func buildResponse(h dnsmessage.Header, q dnsmessage.Question, rcode dnsmessage.RCode, addrs []netip.Addr, edns, truncated bool) ([]byte, error) {
	b := dnsmessage.NewBuilder(nil, dnsmessage.Header{
		ID:               h.ID,
		Response:         true,
		OpCode:           h.OpCode,
		Authoritative:    true,
		Truncated:        truncated,
		RecursionDesired: h.RecursionDesired,
		RCode:            rcode,
	})
	b.EnableCompression()
	if err := b.StartQuestions(); err != nil {
		return nil, err
	}
	if err := b.Question(q); err != nil {
		return nil, err
	}
	if err := b.StartAnswers(); err != nil {
		return nil, err
	}
	rh := dnsmessage.ResourceHeader{Name: q.Name, Class: dnsmessage.ClassINET, TTL: 0}
	for _, a := range addrs {
		var err error
		if a.Is4() {
			err = b.AResource(rh, dnsmessage.AResource{A: a.As4()})
		} else {
			err = b.AAAAResource(rh, dnsmessage.AAAAResource{AAAA: a.As16()})
		}
		if err != nil {
			return nil, err
		}
	}
	if edns {
		if err := b.StartAdditionals(); err != nil {
			return nil, err
		}
		var opt dnsmessage.ResourceHeader
		if err := opt.SetEDNS0(ednsUDPSize, rcode, false); err != nil {
			return nil, err
		}
		if err := b.OPTResource(opt, dnsmessage.OPTResource{}); err != nil {
			return nil, err
		}
	}
	return b.Finish()
}
