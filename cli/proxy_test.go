package cli

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestProxyServesUntilSignalled runs `warden proxy` as its own process: it
// carries an allowed request, refuses the metadata address, stops cleanly on
// SIGTERM, and leaves both requests in the audit log.
func TestProxyServesUntilSignalled(t *testing.T) {
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, "upstream says hi")
	}))
	defer upstream.Close()
	home := initHome(t, [2]string{"network.allow_private", `["127.0.0.1"]`})

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	cmd := wardenCmd(home, "proxy", "--listen", addr, "--allow-domain", strings.TrimPrefix(upstream.URL, "http://"))
	startUntil(t, cmd, "listening on "+addr)
	defer cmd.Process.Kill()

	proxyURL, _ := url.Parse("http://" + addr)
	client := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(proxyURL)}, Timeout: 10 * time.Second}
	get := func(target string) (int, string) {
		resp, err := client.Get(target)
		if err != nil {
			t.Fatalf("GET %s through the proxy: %v", target, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get(upstream.URL + "/"); code != http.StatusOK || body != "upstream says hi" {
		t.Fatalf("allowed request = %d %q", code, body)
	}
	if code, body := get("http://169.254.169.254/latest/meta-data/"); code != http.StatusForbidden || !strings.Contains(body, "no rule can open") {
		t.Fatalf("metadata request = %d %q, want 403", code, body)
	}

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("warden proxy exited with %v after SIGTERM, want 0", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("warden proxy did not stop within 10 s of SIGTERM")
	}

	out, err := wardenCmd(home, "audit", "events", "--type", "egress_request", "--json").CombinedOutput()
	if err != nil {
		t.Fatalf("audit events: %v\n%s", err, out)
	}
	if n := strings.Count(string(out), `"type":"egress_request"`); n != 2 {
		t.Fatalf("%d egress_request events, want 2:\n%s", n, out)
	}
	for _, want := range []string{`"verdict":"allow"`, `"verdict":"deny"`, `\"agent\":\"agent\"`} {
		if !strings.Contains(string(out), want) && !strings.Contains(string(out), strings.ReplaceAll(want, `\"`, `"`)) {
			t.Errorf("request log lacks %s:\n%s", want, out)
		}
	}
}
