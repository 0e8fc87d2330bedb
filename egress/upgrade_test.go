package egress_test

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"testing"

	"github.com/agentwarden/warden/egress"
	"github.com/agentwarden/warden/internal/dnstest"
)

// upgradeEcho answers "Upgrade: echo" with 101 and then echoes bytes; the
// connections it takes over are closed when the test ends.
func upgradeEcho(t *testing.T) http.HandlerFunc {
	var mu sync.Mutex
	var conns []net.Conn
	t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Upgrade") != "echo" {
			http.Error(w, "want Upgrade: echo", http.StatusBadRequest)
			return
		}
		c, brw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		mu.Lock()
		conns = append(conns, c)
		mu.Unlock()
		defer c.Close()
		_, _ = io.WriteString(c, "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n")
		_, _ = io.Copy(c, brw)
	}
}

// openUpgraded sends an upgrade request for app.test through h and returns
// the connection once the answer has been read.
func openUpgraded(t *testing.T, h *harness, port uint16) (net.Conn, *bufio.Reader, *http.Response) {
	t.Helper()
	c := h.dial()
	authority := hostPort("app.test", port)
	req := "GET http://" + authority + "/ws HTTP/1.1\r\nHost: " + authority + "\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n"
	if _, err := io.WriteString(c, req); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodGet})
	if err != nil {
		t.Fatalf("read the answer to the upgrade: %v", err)
	}
	return c, br, resp
}

func upgradeSetup(t *testing.T, s *egress.Secrets) (*harness, uint16) {
	t.Helper()
	app := startUpstream(t, "127.0.0.1:0", upgradeEcho(t), nil)
	dns := dnstest.Start(t)
	dns.Set("app.test", []netip.Addr{loopback})
	return newHarness(t, dns, privatePolicy(hostPort("app.test", app.port)), options{secrets: s}), app.port
}

// TestForwardUpgrade: a protocol upgrade (WebSocket) to an allowed host
// through the forward proxy works, whether or not the proxy holds secrets
// for other hosts.
func TestForwardUpgrade(t *testing.T) {
	unrelated, err := egress.NewSecrets([]egress.SecretSpec{{Name: "OTHER", Value: "ghp_0123456789abcdef", Hosts: []string{"api.test"}, Header: "Authorization"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		secrets *egress.Secrets
	}{
		{"no secrets", nil},
		{"a secret for another host", unrelated},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, port := upgradeSetup(t, tc.secrets)
			c, br, resp := openUpgraded(t, h, port)
			if resp.StatusCode != http.StatusSwitchingProtocols {
				body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
				t.Fatalf("upgrade answered %d %s (%q), want 101", resp.StatusCode, resp.Header.Get("X-Warden-Rule"), body)
			}
			if _, err := io.WriteString(c, "ping"); err != nil {
				t.Fatal(err)
			}
			got := make([]byte, 4)
			if _, err := io.ReadFull(br, got); err != nil || string(got) != "ping" {
				t.Errorf("read %q (%v) after the upgrade, want the echo ping", got, err)
			}
		})
	}
}

// TestCloseEndsUpgradedConnection: Close ends every open connection,
// including one the forward proxy handed over to an upgraded protocol.
func TestCloseEndsUpgradedConnection(t *testing.T) {
	h, port := upgradeSetup(t, nil)
	c, br, resp := openUpgraded(t, h, port)
	if resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("upgrade answered %d, want 101", resp.StatusCode)
	}
	if err := h.proxy.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if ended, err := readEnds(c, br, waitFor/2); !ended {
		t.Errorf("the upgraded connection is still open %v after Close (%v)", waitFor/2, err)
	}
}
