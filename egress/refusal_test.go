package egress_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/egress"
)

// TestRefusalIsStoredBeforeItIsSent: a refusal reaches the client only once
// its egress_request event is stored, also when its body is larger than
// net/http's buffers (a CONNECT to a 20,000-byte authority, which the
// refusal quotes), which net/http sends while the handler still runs.
func TestRefusalIsStoredBeforeItIsSent(t *testing.T) {
	var stored atomic.Bool
	p := &egress.Proxy{Events: func(_ context.Context, typ string, _ warden.Severity, _ string, _ json.RawMessage) error {
		if typ == warden.EventEgressRequest {
			time.Sleep(100 * time.Millisecond) // a slow commit
			stored.Store(true)
		}
		return nil
	}}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = p.Serve(l) }()
	defer p.Close()
	c, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	host := strings.Repeat("a", 20000)
	if _, err := c.Write([]byte("CONNECT " + host + " HTTP/1.1\r\nHost: " + host + "\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(waitFor))
	status, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		t.Fatalf("reading the refusal: %v", err)
	}
	if !strings.HasPrefix(status, "HTTP/1.1 403") {
		t.Fatalf("CONNECT to a malformed authority answered %q, want 403", status)
	}
	if !stored.Load() {
		t.Fatal("the refusal reached the client before its egress_request event was stored")
	}
}
