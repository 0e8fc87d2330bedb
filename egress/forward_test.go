package egress_test

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentwarden/warden"
)

// pattern is n bytes that differ from one offset to the next, so a lost,
// doubled or reordered piece changes the digest.
func pattern(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + i>>8 + i>>16)
	}
	return b
}

// TestForwardCarriesBodiesExactly: answers of every framing come back byte
// for byte: a long one with a Content-Length, a chunked one with
// trailers, an empty one, a HEAD; a request body goes up whole and is
// counted in the request log.
func TestForwardCarriesBodiesExactly(t *testing.T) {
	big := pattern(8<<20 + 12345)
	up := startUpstream(t, "127.0.0.1:0", func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/big":
			w.Header().Set("Content-Length", strconv.Itoa(len(big)))
			_, _ = w.Write(big)
		case "/chunked":
			w.Header().Set("Trailer", "X-Sum")
			for i := range 5 {
				_, _ = io.WriteString(w, strings.Repeat(strconv.Itoa(i), 1000))
				w.(http.Flusher).Flush()
			}
			w.Header().Set("X-Sum", "done")
		case "/empty":
			w.WriteHeader(http.StatusNoContent)
		case "/echo":
			body, _ := io.ReadAll(r.Body)
			sum := sha256.Sum256(body)
			w.Header().Set("Content-Length", "32")
			_, _ = w.Write(sum[:])
		}
	}, nil)
	h := newHarness(t, nil, privatePolicy(hostPort("127.0.0.1", up.port)), options{})
	c := h.client(nil)
	base := "http://" + hostPort("127.0.0.1", up.port)

	resp, body := h.get(c, base+"/big", nil)
	if resp.StatusCode != http.StatusOK || resp.ContentLength != int64(len(big)) || sha256.Sum256([]byte(body)) != sha256.Sum256(big) {
		t.Fatalf("/big: status %d, length %d (header %d), want %d bytes exactly", resp.StatusCode, len(body), resp.ContentLength, len(big))
	}

	resp, body = h.get(c, base+"/chunked", nil)
	if want := "0000"; resp.StatusCode != http.StatusOK || len(body) != 5000 || !strings.HasPrefix(body, want) || !strings.HasSuffix(body, "4444") {
		t.Fatalf("/chunked: status %d, %d bytes", resp.StatusCode, len(body))
	}
	if got := resp.Trailer.Get("X-Sum"); got != "done" {
		t.Errorf("/chunked: trailer X-Sum = %q, want done", got)
	}

	if resp, body = h.get(c, base+"/empty", nil); resp.StatusCode != http.StatusNoContent || body != "" {
		t.Errorf("/empty: %d %q", resp.StatusCode, body)
	}

	head, err := c.Head(base + "/big")
	if err != nil {
		t.Fatal(err)
	}
	head.Body.Close()
	if head.StatusCode != http.StatusOK || head.ContentLength != int64(len(big)) {
		t.Errorf("HEAD /big: %d, length %d", head.StatusCode, head.ContentLength)
	}

	upload := pattern(3<<20 + 7)
	post, err := c.Post(base+"/echo", "application/octet-stream", bytes.NewReader(upload))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(post.Body)
	post.Body.Close()
	if sum := sha256.Sum256(upload); !bytes.Equal(got, sum[:]) {
		t.Errorf("POST /echo: the server saw another body")
	}
	evs := h.events.wait(t, warden.EventEgressRequest, 5)
	if n := evs[4].meta["bytes_up"]; n != float64(len(upload)) {
		t.Errorf("the request log counts %v bytes sent up, want %d", n, len(upload))
	}
	if n := evs[0].meta["bytes_down"]; n != float64(len(big)) {
		t.Errorf("the request log counts %v bytes down for /big, want %d", n, len(big))
	}
	if n := up.accepts.connections(t); n != 1 {
		t.Errorf("the server accepted %d connections for 5 requests in a row, want 1 (kept alive)", n)
	}
}

// TestForwardRetriesAClosedIdleConnection: a server that closes each
// connection after answering, without saying so, leaves the proxy an idle
// connection that is already dead; the next request goes out on a new one.
func TestForwardRetriesAClosedIdleConnection(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	accepted := make(chan struct{}, 16)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			accepted <- struct{}{}
			go func() {
				defer c.Close()
				req, err := http.ReadRequest(bufio.NewReader(c))
				if err != nil {
					return
				}
				io.Copy(io.Discard, req.Body)
				_, _ = io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
				time.Sleep(10 * time.Millisecond) // then close, having promised to keep alive
			}()
		}
	}()
	addr := l.Addr().String()
	h := newHarness(t, nil, privatePolicy(addr), options{})
	c := h.client(nil)
	for i := range 3 {
		resp, body := h.get(c, "http://"+addr+"/", nil)
		if resp.StatusCode != http.StatusOK || body != "ok" {
			t.Fatalf("request %d: %d %q", i, resp.StatusCode, body)
		}
		time.Sleep(30 * time.Millisecond) // the server has closed by now
	}
	if n := len(accepted); n != 3 {
		t.Errorf("the server accepted %d connections, want 3 (each dead one replaced)", n)
	}
}

// TestForwardClientGoneClosesUpstream: a client that hangs up in the middle
// of a long answer ends the upstream connection too.
func TestForwardClientGoneClosesUpstream(t *testing.T) {
	closed := make(chan struct{})
	up := startUpstream(t, "127.0.0.1:0", func(w http.ResponseWriter, r *http.Request) {
		defer close(closed)
		w.Header().Set("Content-Length", strconv.Itoa(1<<30))
		chunk := make([]byte, 64<<10)
		for {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	}, nil)
	addr := hostPort("127.0.0.1", up.port)
	h := newHarness(t, nil, privatePolicy(addr), options{})
	resp, err := h.client(nil).Get("http://" + addr + "/")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.CopyN(io.Discard, resp.Body, 1<<20); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	select {
	case <-closed:
	case <-time.After(waitFor):
		t.Fatal("the upstream answer kept going after the client left")
	}
}
