//go:build amd64 || arm64

package sandbox

import (
	"io"
	"net"
	"os"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// listenPair is the socket pair the host and the init share: the host's end
// as a file, the init's as a bare descriptor (sendListeners closes it).
func listenPair(t *testing.T) (*os.File, int) {
	t.Helper()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	host := os.NewFile(uintptr(fds[0]), "listen-host")
	t.Cleanup(func() { host.Close() })
	return host, fds[1]
}

// services are loopback services at addrs, for the handoff tests.
func services(addrs ...string) []loopbackService {
	var svcs []loopbackService
	for _, a := range addrs {
		svcs = append(svcs, loopbackService{addr: a})
	}
	return svcs
}

// TestListenerHandoff sends two listeners and a UDP socket in one message,
// as the init does for the egress proxy, its name server and the signer,
// and checks that each arrives, in order, listening where it was made.
// (Port 0 here: this runs in the host's own network namespace.)
func TestListenerHandoff(t *testing.T) {
	host, child := listenPair(t)
	errc := make(chan error, 1)
	addrs := []string{"127.0.0.1:0", udpPrefix + "127.0.0.1:0", "127.0.0.1:0"}
	go func() { errc <- sendListeners(child, addrs) }()
	socks, ok, err := receiveListeners(host, services(addrs...))
	if err := <-errc; err != nil {
		t.Fatalf("sendListeners: %v", err)
	}
	if err != nil || !ok || len(socks) != 3 {
		t.Fatalf("receiveListeners = %d sockets, %v, %v; want 3", len(socks), ok, err)
	}
	pc, isUDP := socks[1].(net.PacketConn)
	if !isUDP {
		t.Fatalf("the second socket is a %T, want a net.PacketConn", socks[1])
	}
	defer pc.Close()
	c, err := net.Dial("udp", pc.LocalAddr().String())
	if err != nil {
		t.Fatal(err)
	}
	_, _ = c.Write([]byte("ping"))
	c.Close()
	buf := make([]byte, 8)
	if n, _, err := pc.ReadFrom(buf); err != nil || string(buf[:n]) != "ping" {
		t.Fatalf("the UDP socket read %q, %v; want ping", buf[:n], err)
	}
	var ls []net.Listener
	for _, s := range []io.Closer{socks[0], socks[2]} {
		l, ok := s.(net.Listener)
		if !ok {
			t.Fatalf("a TCP service's socket is a %T, want a net.Listener", s)
		}
		ls = append(ls, l)
	}
	for i, l := range ls {
		defer l.Close()
		c, err := net.Dial("tcp", l.Addr().String())
		if err != nil {
			t.Fatalf("dial listener %d at %s: %v", i, l.Addr(), err)
		}
		c.Close()
		a, err := l.Accept()
		if err != nil {
			t.Fatalf("accept on listener %d: %v", i, err)
		}
		a.Close()
	}
	if ls[0].Addr().String() == ls[1].Addr().String() {
		t.Errorf("both listeners are at %s; want two", ls[0].Addr())
	}
}

// TestListenerHandoffFailures: an init that sends the wrong number of
// listeners is an error; one that ends without sending any (its setup
// failed, and its report says why) is not ok; a bad address is refused.
func TestListenerHandoffFailures(t *testing.T) {
	t.Run("too few", func(t *testing.T) {
		host, child := listenPair(t)
		if err := sendListeners(child, []string{"127.0.0.1:0"}); err != nil {
			t.Fatal(err)
		}
		ls, ok, err := receiveListeners(host, services("127.0.0.1:0", "127.0.0.1:0"))
		if err == nil || ok || ls != nil {
			t.Fatalf("one listener where two were wanted: %d listeners, %v, %v; want an error", len(ls), ok, err)
		}
	})
	t.Run("none", func(t *testing.T) {
		host, child := listenPair(t)
		unix.Close(child)
		ls, ok, err := receiveListeners(host, services("127.0.0.1:0"))
		if err != nil || ok || ls != nil {
			t.Fatalf("an init that sent nothing: %d listeners, %v, %v; want not ok and no error", len(ls), ok, err)
		}
	})
	t.Run("bad address", func(t *testing.T) {
		host, child := listenPair(t)
		err := sendListeners(child, []string{"127.0.0.1:0", "localhost:http"})
		if err == nil || !strings.Contains(err.Error(), "localhost:http") {
			t.Fatalf("sendListeners with a bad address: %v; want it refused, naming the address", err)
		}
		if ls, ok, err := receiveListeners(host, services("127.0.0.1:0", "127.0.0.1:0")); err != nil || ok || ls != nil {
			t.Fatalf("after a failed send: %d listeners, %v, %v; want nothing sent", len(ls), ok, err)
		}
	})
}

func TestBypassProxyFor(t *testing.T) {
	proxy := []string{"PATH=/bin", "HTTP_PROXY=http://127.0.0.1:3128"}
	for _, c := range []struct {
		name    string
		env     []string
		noProxy []string // the NO_PROXY and no_proxy entries wanted, in order
	}{
		{"no proxy", []string{"PATH=/bin"}, nil},
		{"proxy", proxy, []string{"NO_PROXY=127.0.0.1", "no_proxy=127.0.0.1"}},
		{"caller's list", append(slices.Clone(proxy), "NO_PROXY=a.example, b.example", "no_proxy="),
			[]string{"NO_PROXY=a.example, b.example,127.0.0.1", "no_proxy=127.0.0.1"}},
		{"already there", append(slices.Clone(proxy), "NO_PROXY=a.example, 127.0.0.1", "no_proxy=*"),
			[]string{"NO_PROXY=a.example, 127.0.0.1", "no_proxy=*"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := slices.Clone(c.env)
			got := bypassProxyFor(c.env, "127.0.0.1")
			if !slices.Equal(c.env, before) {
				t.Errorf("bypassProxyFor changed its argument: %q", c.env)
			}
			var noProxy []string
			for _, kv := range got {
				if strings.HasPrefix(strings.ToUpper(kv), "NO_PROXY=") {
					noProxy = append(noProxy, kv)
				}
			}
			if !slices.Equal(noProxy, c.noProxy) {
				t.Errorf("bypassProxyFor(%q) set %q, want %q", c.env, noProxy, c.noProxy)
			}
		})
	}
}
