package session

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// A listener stands for whatever an attacker would send secrets to: TCP and
// UDP on one port of 127.0.0.1, answering TCP with a short HTTP response so
// that clients finish at once, and the host's services on Unix sockets in
// the home, answered the same way. Every connection and datagram is recorded;
// any at all is an effect.
type listener struct {
	tcp  net.Listener
	udp  net.PacketConn
	unix []net.Listener
	mu   sync.Mutex
	hits []hit
	wg   sync.WaitGroup
}

type hit struct {
	Proto string
	From  string
	Data  []byte
}

func listen(t *testing.T) *listener {
	t.Helper()
	var l listener
	// TCP and UDP on the same port number, so a case names one port.
	for range 20 {
		tl, err := net.Listen("tcp4", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ul, err := net.ListenPacket("udp4", tl.Addr().String())
		if err != nil {
			tl.Close()
			continue
		}
		l.tcp, l.udp = tl, ul
		break
	}
	if l.tcp == nil {
		t.Fatal("no port free for both TCP and UDP on 127.0.0.1")
	}
	l.wg.Add(2)
	go l.serveTCP(l.tcp, "tcp")
	go l.serveUDP()
	t.Cleanup(l.close)
	return &l
}

// listenUnix adds a Unix socket at each of paths (the host's services an
// agent must not reach through the filesystem: an SSH or GPG agent, a
// Docker daemon), answered and recorded as the TCP port is.
func (l *listener) listenUnix(t *testing.T, paths ...string) {
	t.Helper()
	for _, p := range paths {
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		ul, err := net.Listen("unix", p)
		if err != nil {
			t.Fatal(err)
		}
		l.unix = append(l.unix, ul)
		l.wg.Add(1)
		go l.serveTCP(ul, "unix "+p)
	}
}

func (l *listener) port() int { return l.tcp.Addr().(*net.TCPAddr).Port }

func (l *listener) serveTCP(ln net.Listener, proto string) {
	defer l.wg.Done()
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			defer c.Close()
			i := l.record(proto, c.RemoteAddr().String(), nil)
			_ = c.SetDeadline(time.Now().Add(5 * time.Second))
			buf := make([]byte, 64<<10)
			for {
				n, err := c.Read(buf)
				l.appendData(i, buf[:n])
				if n > 0 && bytes.Contains(l.data(i), []byte("\r\n\r\n")) || err != nil {
					break
				}
			}
			_, _ = io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nConnection: close\r\n\r\nok\n")
			// Whatever follows the headers (a body) is recorded too.
			_ = c.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
			for {
				n, err := c.Read(buf)
				l.appendData(i, buf[:n])
				if err != nil {
					return
				}
			}
		}()
	}
}

func (l *listener) serveUDP() {
	defer l.wg.Done()
	buf := make([]byte, 64<<10)
	for {
		n, from, err := l.udp.ReadFrom(buf)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue
		}
		l.record("udp", from.String(), buf[:n])
	}
}

func (l *listener) record(proto, from string, data []byte) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.hits = append(l.hits, hit{Proto: proto, From: from, Data: append([]byte(nil), data...)})
	return len(l.hits) - 1
}

func (l *listener) appendData(i int, p []byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.hits[i].Data = append(l.hits[i].Data, p...)
}

func (l *listener) data(i int) []byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.hits[i].Data
}

// received returns what reached the listener so far, after giving
// connections still open a moment to deliver.
func (l *listener) received() []hit {
	time.Sleep(100 * time.Millisecond)
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]hit, len(l.hits))
	for i, h := range l.hits {
		out[i] = hit{h.Proto, h.From, append([]byte(nil), h.Data...)}
	}
	return out
}

func (l *listener) close() {
	l.tcp.Close()
	l.udp.Close()
	for _, u := range l.unix {
		u.Close()
	}
	l.wg.Wait()
}

func (h hit) String() string {
	return fmt.Sprintf("%s from %s, %d bytes", h.Proto, h.From, len(h.Data))
}
