package fakedns

import (
	"errors"
	"net"
	"strings"

	"golang.org/x/net/dns/dnsmessage"
)

// TTL is how long, in seconds, a client may keep an answer: a Table never
// gives an address to a second name, so an answer stays right for as long
// as its sandbox runs.
const TTL = 60

// Server answers DNS queries over UDP from a Table. A question for the A
// record of a host name gets its address; one for localhost gets
// 127.0.0.1; any other question about a host name gets an empty answer
// (AAAA among them, so that clients use the IPv4 address); anything else
// is answered NXDOMAIN, REFUSED or FORMERR. Nothing is ever asked of
// another server.
type Server struct {
	Table *Table
}

// Serve answers the queries that arrive on pc until it is closed.
func (s *Server) Serve(pc net.PacketConn) error {
	buf := make([]byte, 4096)
	for {
		n, from, err := pc.ReadFrom(buf)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return err
		}
		if answer := s.Answer(buf[:n]); answer != nil {
			_, _ = pc.WriteTo(answer, from)
		}
	}
}

// Answer returns the answer to the query q, or nil when q is not a query
// that can be answered (too short to hold a header, or itself an answer).
func (s *Server) Answer(q []byte) []byte {
	var p dnsmessage.Parser
	h, err := p.Start(q)
	if err != nil || h.Response {
		return nil
	}
	reply := dnsmessage.Header{
		ID:                 h.ID,
		Response:           true,
		OpCode:             h.OpCode,
		RecursionDesired:   h.RecursionDesired,
		RecursionAvailable: true,
		Authoritative:      true,
	}
	questions, err := p.AllQuestions()
	switch {
	case err != nil || len(questions) != 1:
		reply.RCode = dnsmessage.RCodeFormatError
		return build(reply, nil, nil)
	case h.OpCode != 0 || questions[0].Class != dnsmessage.ClassINET:
		reply.RCode = dnsmessage.RCodeRefused
		return build(reply, questions, nil)
	}
	qn := questions[0]
	name, ok := Canonical(qn.Name.String())
	if !ok {
		reply.RCode = dnsmessage.RCodeNameError
		return build(reply, questions, nil)
	}
	if qn.Type != dnsmessage.TypeA {
		return build(reply, questions, nil)
	}
	var a [4]byte
	if name == "localhost" || strings.HasSuffix(name, ".localhost") {
		a = [4]byte{127, 0, 0, 1}
	} else {
		addr, err := s.Table.Addr(name)
		if err != nil {
			reply.RCode = dnsmessage.RCodeServerFailure
			return build(reply, questions, nil)
		}
		a = addr.As4()
	}
	return build(reply, questions, &dnsmessage.AResource{A: a})
}

// build encodes an answer: the header, the question asked, and the A
// record when there is one.
func build(h dnsmessage.Header, questions []dnsmessage.Question, a *dnsmessage.AResource) []byte {
	b := dnsmessage.NewBuilder(make([]byte, 0, 512), h)
	b.EnableCompression()
	if err := b.StartQuestions(); err != nil {
		return nil
	}
	for _, q := range questions {
		if err := b.Question(q); err != nil {
			return nil
		}
	}
	if a != nil {
		if err := b.StartAnswers(); err != nil {
			return nil
		}
		rh := dnsmessage.ResourceHeader{Name: questions[0].Name, Type: dnsmessage.TypeA, Class: dnsmessage.ClassINET, TTL: TTL}
		if err := b.AResource(rh, *a); err != nil {
			return nil
		}
	}
	out, err := b.Finish()
	if err != nil {
		return nil
	}
	return out
}
