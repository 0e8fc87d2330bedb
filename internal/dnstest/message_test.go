package dnstest

import (
	"net/netip"
	"slices"
	"testing"

	"golang.org/x/net/dns/dnsmessage"
)

// newUnstarted returns a server that answers through respond without any
// socket.
func newUnstarted() *Server {
	return &Server{names: make(map[string]*entry), queries: make(map[string]int)}
}

// queryOpts are the parts of a test query that vary.
type queryOpts struct {
	opCode dnsmessage.OpCode
	class  dnsmessage.Class
	edns   int // UDP size of an EDNS(0) record; 0 for none
}

// packQuery packs a query for name and type t.
func packQuery(tb testing.TB, name string, t dnsmessage.Type, o queryOpts) []byte {
	tb.Helper()
	if o.class == 0 {
		o.class = dnsmessage.ClassINET
	}
	b := dnsmessage.NewBuilder(nil, dnsmessage.Header{ID: 0xbeef, RecursionDesired: true, OpCode: o.opCode})
	b.EnableCompression()
	if err := b.StartQuestions(); err != nil {
		tb.Fatal(err)
	}
	if err := b.Question(dnsmessage.Question{Name: dnsmessage.MustNewName(name), Type: t, Class: o.class}); err != nil {
		tb.Fatal(err)
	}
	if o.edns != 0 {
		if err := b.StartAdditionals(); err != nil {
			tb.Fatal(err)
		}
		var rh dnsmessage.ResourceHeader
		if err := rh.SetEDNS0(o.edns, dnsmessage.RCodeSuccess, false); err != nil {
			tb.Fatal(err)
		}
		if err := b.OPTResource(rh, dnsmessage.OPTResource{}); err != nil {
			tb.Fatal(err)
		}
	}
	msg, err := b.Finish()
	if err != nil {
		tb.Fatal(err)
	}
	return msg
}

// answer is a parsed response.
type answer struct {
	msg   dnsmessage.Message
	addrs []netip.Addr
}

// ask sends one query for name and type t through respond over UDP and
// parses the response.
func ask(t *testing.T, s *Server, name string, qtype dnsmessage.Type, o queryOpts) answer {
	t.Helper()
	resp := s.respond(packQuery(t, name, qtype, o), udpLimit)
	if resp == nil {
		t.Fatalf("respond(%s %v) = nil, want a response", name, qtype)
	}
	var a answer
	if err := a.msg.Unpack(resp); err != nil {
		t.Fatalf("respond(%s %v): unpack: %v", name, qtype, err)
	}
	for _, r := range a.msg.Answers {
		switch body := r.Body.(type) {
		case *dnsmessage.AResource:
			a.addrs = append(a.addrs, netip.AddrFrom4(body.A))
		case *dnsmessage.AAAAResource:
			a.addrs = append(a.addrs, netip.AddrFrom16(body.AAAA))
		}
	}
	return a
}

func TestTurnAdvancesOnAOnly(t *testing.T) {
	s := newUnstarted()
	a := netip.MustParseAddr
	s.Set("turn.test",
		[]netip.Addr{a("192.0.2.1"), a("2001:db8::1")},
		[]netip.Addr{a("192.0.2.2"), a("2001:db8::2")},
		[]netip.Addr{a("192.0.2.3")},
	)
	steps := []struct {
		qtype dnsmessage.Type
		want  []netip.Addr
	}{
		{dnsmessage.TypeAAAA, []netip.Addr{a("2001:db8::1")}}, // no A yet: set 0
		{dnsmessage.TypeA, []netip.Addr{a("192.0.2.1")}},
		{dnsmessage.TypeAAAA, []netip.Addr{a("2001:db8::1")}},
		{dnsmessage.TypeAAAA, []netip.Addr{a("2001:db8::1")}}, // AAAA does not advance
		{dnsmessage.TypeA, []netip.Addr{a("192.0.2.2")}},
		{dnsmessage.TypeAAAA, []netip.Addr{a("2001:db8::2")}},
		{dnsmessage.TypeA, []netip.Addr{a("192.0.2.3")}},
		{dnsmessage.TypeAAAA, nil},                       // set 2 has no IPv6 address
		{dnsmessage.TypeA, []netip.Addr{a("192.0.2.1")}}, // cycles
		{dnsmessage.TypeMX, nil},
		{dnsmessage.TypeAAAA, []netip.Addr{a("2001:db8::1")}},
	}
	for i, step := range steps {
		got := ask(t, s, "turn.test.", step.qtype, queryOpts{})
		if rc := got.msg.RCode; rc != dnsmessage.RCodeSuccess {
			t.Fatalf("step %d: %v query: rcode %v, want success", i, step.qtype, rc)
		}
		if !slices.Equal(got.addrs, step.want) {
			t.Fatalf("step %d: %v query = %v, want %v", i, step.qtype, got.addrs, step.want)
		}
	}
	if n := s.Queries("turn.test"); n != len(steps) {
		t.Errorf("Queries = %d, want %d", n, len(steps))
	}
}

func TestRespond(t *testing.T) {
	s := newUnstarted()
	s.Set("host.test", []netip.Addr{netip.MustParseAddr("192.0.2.1"), netip.MustParseAddr("::ffff:192.0.2.9")})
	tests := []struct {
		name      string
		qname     string
		qtype     dnsmessage.Type
		opts      queryOpts
		wantRCode dnsmessage.RCode
		wantAddrs []netip.Addr
	}{
		{
			name: "A", qname: "host.test.", qtype: dnsmessage.TypeA,
			wantRCode: dnsmessage.RCodeSuccess, wantAddrs: []netip.Addr{netip.MustParseAddr("192.0.2.1")},
		},
		{
			name: "IPv4-mapped address answers AAAA", qname: "host.test.", qtype: dnsmessage.TypeAAAA,
			wantRCode: dnsmessage.RCodeSuccess, wantAddrs: []netip.Addr{netip.MustParseAddr("::ffff:192.0.2.9")},
		},
		{
			name: "question case kept", qname: "HoSt.TeSt.", qtype: dnsmessage.TypeA,
			wantRCode: dnsmessage.RCodeSuccess, wantAddrs: []netip.Addr{netip.MustParseAddr("192.0.2.1")},
		},
		{
			name: "other type", qname: "host.test.", qtype: dnsmessage.TypeTXT,
			wantRCode: dnsmessage.RCodeSuccess,
		},
		{
			name: "other class", qname: "host.test.", qtype: dnsmessage.TypeA, opts: queryOpts{class: dnsmessage.ClassCHAOS},
			wantRCode: dnsmessage.RCodeSuccess,
		},
		{
			name: "unknown name", qname: "other.test.", qtype: dnsmessage.TypeA,
			wantRCode: dnsmessage.RCodeNameError,
		},
		{
			name: "not a query", qname: "host.test.", qtype: dnsmessage.TypeA, opts: queryOpts{opCode: 2},
			wantRCode: dnsmessage.RCodeNotImplemented,
		},
		{
			name: "EDNS", qname: "host.test.", qtype: dnsmessage.TypeA, opts: queryOpts{edns: 4096},
			wantRCode: dnsmessage.RCodeSuccess, wantAddrs: []netip.Addr{netip.MustParseAddr("192.0.2.1")},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ask(t, s, tt.qname, tt.qtype, tt.opts)
			h := got.msg.Header
			if !h.Response || !h.Authoritative || h.ID != 0xbeef || !h.RecursionDesired || h.Truncated {
				t.Errorf("header = %+v, want an authoritative untruncated response with ID 0xbeef and RD", h)
			}
			if h.RCode != tt.wantRCode {
				t.Errorf("rcode = %v, want %v", h.RCode, tt.wantRCode)
			}
			if !slices.Equal(got.addrs, tt.wantAddrs) {
				t.Errorf("answers = %v, want %v", got.addrs, tt.wantAddrs)
			}
			for _, r := range got.msg.Answers {
				if r.Header.TTL != 0 {
					t.Errorf("answer %v has TTL %d, want 0", r.Header.Name, r.Header.TTL)
				}
				if r.Header.Name.String() != tt.qname {
					t.Errorf("answer name = %q, want %q", r.Header.Name, tt.qname)
				}
			}
			if len(got.msg.Questions) != 1 || got.msg.Questions[0].Name.String() != tt.qname {
				t.Errorf("questions = %v, want the query's", got.msg.Questions)
			}
			hasOPT := len(got.msg.Additionals) == 1 && got.msg.Additionals[0].Header.Type == dnsmessage.TypeOPT
			if wantOPT := tt.opts.edns != 0; hasOPT != wantOPT || len(got.msg.Additionals) > 1 {
				t.Errorf("additionals = %v, want an OPT record: %v", got.msg.Additionals, wantOPT)
			}
		})
	}
}

func TestTruncation(t *testing.T) {
	s := newUnstarted()
	var many []netip.Addr
	for i := range 100 { // about 1,600 bytes of answers
		many = append(many, netip.AddrFrom4([4]byte{10, 0, 0, byte(i)}))
	}
	s.Set("many.test", many)
	tests := []struct {
		name          string
		edns          int
		wantTruncated bool
	}{
		{"no EDNS: 512 bytes", 0, true},
		{"EDNS 1232", 1232, true},
		{"EDNS smaller than 512", 100, true},
		{"EDNS 4096", 4096, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ask(t, s, "many.test.", dnsmessage.TypeA, queryOpts{edns: tt.edns})
			if got.msg.Truncated != tt.wantTruncated {
				t.Fatalf("Truncated = %v, want %v", got.msg.Truncated, tt.wantTruncated)
			}
			if wantN := map[bool]int{true: 0, false: len(many)}[tt.wantTruncated]; len(got.addrs) != wantN {
				t.Errorf("%d answers, want %d", len(got.addrs), wantN)
			}
		})
	}
	resp := s.respond(packQuery(t, "many.test.", dnsmessage.TypeA, queryOpts{}), maxMessageSize)
	var msg dnsmessage.Message
	if err := msg.Unpack(resp); err != nil || msg.Truncated || len(msg.Answers) != len(many) {
		t.Errorf("over TCP: unpack error %v, truncated %v, %d answers; want all %d answers", err, msg.Truncated, len(msg.Answers), len(many))
	}
}

// FuzzRespond checks that respond never panics and that whatever it returns
// is a well-formed response to the query, within the size limit.
func FuzzRespond(f *testing.F) {
	f.Add(packQuery(f, "host.test.", dnsmessage.TypeA, queryOpts{}))
	f.Add(packQuery(f, "HOST.test.", dnsmessage.TypeAAAA, queryOpts{edns: 1232}))
	f.Add(packQuery(f, "other.test.", dnsmessage.TypeA, queryOpts{}))
	f.Add(packQuery(f, "host.test.", dnsmessage.TypeA, queryOpts{opCode: 4}))
	f.Add([]byte{})
	f.Add([]byte("garbage"))
	s := newUnstarted()
	s.Set("host.test", []netip.Addr{netip.MustParseAddr("192.0.2.1"), netip.MustParseAddr("2001:db8::1")}, nil)
	f.Fuzz(func(t *testing.T, query []byte) {
		resp := s.respond(query, udpLimit)
		if resp == nil {
			return
		}
		var p dnsmessage.Parser
		qh, err := p.Start(query)
		if err != nil {
			t.Fatalf("answered a query whose header does not parse: %v", err)
		}
		question, err := p.Question()
		if err != nil {
			t.Fatalf("answered a query whose question does not parse: %v", err)
		}
		var r dnsmessage.Message
		if err := r.Unpack(resp); err != nil {
			t.Fatalf("response does not unpack: %v", err)
		}
		if !r.Response || r.ID != qh.ID || len(r.Questions) != 1 || r.Questions[0] != question {
			t.Fatalf("response %+v does not answer query %+v", r.Header, qh)
		}
		if len(resp) > udpLimit && len(r.Additionals) == 0 {
			t.Fatalf("response of %d bytes to a query without EDNS", len(resp))
		}
	})
}
