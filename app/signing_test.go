package app

import (
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/config"
	"github.com/agentwarden/warden/signing"
	"github.com/agentwarden/warden/signing/keystore"
)

// TestExecSignerForwardsOnlySigning: `warden exec --signer` gives the
// sandbox a token of its own and an endpoint that reaches the daemon's
// signing calls and nothing else; without a running daemon it refuses.
func TestExecSignerForwardsOnlySigning(t *testing.T) {
	ctx := context.Background()
	home := Home(filepath.Join(t.TempDir(), "h"))
	if _, err := Init(ctx, home, false); err != nil {
		t.Fatal(err)
	}
	pass := filepath.Join(t.TempDir(), "pass")
	if err := os.WriteFile(pass, []byte("a passphrase"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := config.Set(home.PolicyPath(), "signing.passphraseFile", pass); err != nil {
		t.Fatal(err)
	}
	addr, _, err := keystore.Create(filepath.Join(string(home), "keys"), []byte("a passphrase"), keystore.Light)
	if err != nil {
		t.Fatal(err)
	}
	a, err := Open(ctx, home, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if _, err := a.sandboxSpec("default", t.TempDir(), ExecOverride{Signer: true}, &warden.Request{}, nil); err == nil || !strings.Contains(err.Error(), "needs the warden daemon") {
		t.Fatalf("--signer without a daemon: %v; want a refusal naming the daemon", err)
	}

	d, err := NewDaemon(ctx, home, Options{})
	if err != nil {
		t.Fatal(err)
	}
	d.ProxyListen = "" // this test needs no egress proxy
	sctx, stop := context.WithCancel(ctx)
	ready, done := make(chan struct{}), make(chan error, 1)
	go func() { done <- d.Serve(sctx, func(Listening) { close(ready) }) }()
	<-ready
	defer func() { stop(); <-done; d.Close() }()

	s, err := a.sandboxSpec("default", t.TempDir(), ExecOverride{Signer: true}, &warden.Request{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.Signer == nil {
		t.Fatal("--signer gave the sandbox no signer")
	}
	var token, url string
	for _, e := range s.Env {
		if v, ok := strings.CutPrefix(e, "WARDEN_SIGNER_TOKEN="); ok {
			token = v
		}
		if v, ok := strings.CutPrefix(e, "WARDEN_SIGNER_URL="); ok {
			url = v
		}
	}
	if len(token) < 32 || url != "http://127.0.0.1:8553" {
		t.Fatalf("signer env: token %d chars, url %q", len(token), url)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go s.Signer.Serve(l)
	defer l.Close()
	base := "http://" + l.Addr().String()
	call := func(method, path, tok string) (int, string) {
		req, _ := http.NewRequest(method, base+path, strings.NewReader(`{"id":"x"}`))
		if tok != "" {
			req.Header.Set("Authorization", "Bearer "+tok)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := call("GET", "/api/sandbox/sign/address", token); code != 200 || !strings.Contains(body, signing.Checksum(addr)) {
		t.Errorf("address with the token: %d %s", code, body)
	}
	if code, _ := call("GET", "/api/sandbox/sign/address", ""); code != http.StatusUnauthorized {
		t.Errorf("without the token: %d, want 401", code)
	}
	if code, _ := call("GET", "/api/sandbox/sign/address", "wrong"+token); code != http.StatusUnauthorized {
		t.Errorf("with a wrong token: %d, want 401", code)
	}
	for _, p := range [][2]string{{"POST", "/api/sandbox/sign/approve"}, {"POST", "/api/sandbox/sign/reject"}, {"POST", "/v1/kill"}, {"GET", "/v1/approvals"}, {"POST", "/v1/check"}} {
		if code, _ := call(p[0], p[1], token); code != http.StatusNotFound {
			t.Errorf("%s %s through the sandbox's endpoint: %d, want 404 (only signing is forwarded)", p[0], p[1], code)
		}
	}
}
