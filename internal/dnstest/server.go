package dnstest

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"sync"
	"testing"
)

// listenAttempts is how many free UDP ports Start tries before giving up
// because the TCP port of the same number was taken each time.
const listenAttempts = 10

// maxMessageSize is the largest DNS message: the limit of TCP's 2-byte
// length prefix, and more than any UDP datagram the server accepts.
const maxMessageSize = 65535

// Server answers A and AAAA queries for the names it is given, on 127.0.0.1
// over UDP and TCP (same port).
//
// The zero value is not usable: create a Server with [Start]. All methods are
// safe for concurrent use.
type Server struct {
	addr string
	udp  *net.UDPConn
	tcp  *net.TCPListener
	wg   sync.WaitGroup // the serving goroutines

	mu      sync.Mutex
	closed  bool
	names   map[string]*entry // by canonical name
	queries map[string]int    // by canonical name
	conns   map[net.Conn]struct{}
}

// Start starts a server on 127.0.0.1 on a free port, with UDP and TCP on the
// same port number, and registers t.Cleanup to close it. It fails the test if
// no such port can be found.
func Start(t testing.TB) *Server {
	t.Helper()
	s, err := listen()
	if err != nil {
		t.Fatalf("dnstest: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("dnstest: close: %v", err)
		}
	})
	return s
}

// listen opens a UDP socket on a free loopback port and a TCP listener on the
// same port number, retrying with another port when the TCP port is taken,
// and starts serving both.
func listen() (*Server, error) {
	loopback := netip.AddrFrom4([4]byte{127, 0, 0, 1})
	var lastErr error
	for range listenAttempts {
		udp, err := net.ListenUDP("udp4", net.UDPAddrFromAddrPort(netip.AddrPortFrom(loopback, 0)))
		if err != nil {
			return nil, fmt.Errorf("listen udp: %w", err)
		}
		port := udp.LocalAddr().(*net.UDPAddr).AddrPort().Port()
		tcp, err := net.ListenTCP("tcp4", net.TCPAddrFromAddrPort(netip.AddrPortFrom(loopback, port)))
		if err != nil {
			udp.Close()
			lastErr = fmt.Errorf("listen tcp on port %d: %w", port, err)
			continue
		}
		s := &Server{
			addr:    netip.AddrPortFrom(loopback, port).String(),
			udp:     udp,
			tcp:     tcp,
			names:   make(map[string]*entry),
			queries: make(map[string]int),
			conns:   make(map[net.Conn]struct{}),
		}
		s.wg.Add(2)
		go s.serveUDP()
		go s.serveTCP()
		return s, nil
	}
	return nil, fmt.Errorf("no port free for both udp and tcp after %d attempts: %w", listenAttempts, lastErr)
}

// Addr returns the address the server listens on, "127.0.0.1:PORT", for
// both UDP and TCP.
func (s *Server) Addr() string {
	return s.addr
}

// Close stops the server: it closes both sockets and every open TCP
// connection and waits for the serving goroutines to end. Closing a closed
// server does nothing and returns nil.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	conns := s.conns
	s.conns = nil
	s.mu.Unlock()

	err := errors.Join(s.udp.Close(), s.tcp.Close())
	for c := range conns {
		c.Close()
	}
	s.wg.Wait()
	return err
}

// serveUDP answers one datagram at a time until the socket is closed.
func (s *Server) serveUDP() {
	defer s.wg.Done()
	buf := make([]byte, maxMessageSize)
	for {
		n, from, err := s.udp.ReadFromUDPAddrPort(buf)
		if err != nil {
			// The socket was closed; on loopback nothing else fails a read.
			return
		}
		if resp := s.respond(buf[:n], udpLimit); resp != nil {
			// A failed write means the client is gone; it will retry.
			_, _ = s.udp.WriteToUDPAddrPort(resp, from)
		}
	}
}

// serveTCP accepts connections until the listener is closed.
func (s *Server) serveTCP() {
	defer s.wg.Done()
	for {
		c, err := s.tcp.Accept()
		if err != nil {
			return
		}
		if !s.track(c) {
			c.Close()
			return
		}
		s.wg.Add(1)
		go s.serveConn(c)
	}
}

// track records an open connection so that Close can close it, and reports
// false if the server is already closed.
func (s *Server) track(c net.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.conns[c] = struct{}{}
	return true
}

// serveConn answers the length-prefixed messages of one TCP connection until
// the client closes it, a read fails or the server is closed.
func (s *Server) serveConn(c net.Conn) {
	defer s.wg.Done()
	defer func() {
		s.mu.Lock()
		delete(s.conns, c)
		s.mu.Unlock()
		c.Close()
	}()
	r := bufio.NewReader(c)
	var prefix [2]byte
	for {
		if _, err := io.ReadFull(r, prefix[:]); err != nil {
			return
		}
		msg := make([]byte, binary.BigEndian.Uint16(prefix[:]))
		if _, err := io.ReadFull(r, msg); err != nil {
			return
		}
		resp := s.respond(msg, maxMessageSize)
		if resp == nil {
			continue // malformed: ignored, and the framing is still intact
		}
		out := binary.BigEndian.AppendUint16(make([]byte, 0, 2+len(resp)), uint16(len(resp)))
		if _, err := c.Write(append(out, resp...)); err != nil {
			return
		}
	}
}
