package app

import (
	"context"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/httpapi"
	"github.com/agentwarden/warden/signing/keystore"
)

// TestServeStartsWithoutSigningWhenTheKeyIsLocked: with a signing key and no
// passphrase source, the daemon still starts and decides; the signing
// endpoints refuse saying why, and a critical event records it.
func TestServeStartsWithoutSigningWhenTheKeyIsLocked(t *testing.T) {
	ctx := context.Background()
	home := Home(filepath.Join(t.TempDir(), "h"))
	if _, err := Init(ctx, home, false); err != nil {
		t.Fatal(err)
	}
	if _, _, err := keystore.Create(filepath.Join(string(home), "keys"), []byte("a passphrase"), keystore.Light); err != nil {
		t.Fatal(err)
	}
	d, err := NewDaemon(ctx, home, Options{}) // no prompt: no terminal
	if err != nil {
		t.Fatalf("NewDaemon with a locked key: %v; want it to start without signing", err)
	}
	d.ProxyListen = ""
	sctx, stop := context.WithCancel(ctx)
	ready, done := make(chan struct{}), make(chan error, 1)
	go func() { done <- d.Serve(sctx, func(Listening) { close(ready) }) }()
	<-ready
	defer func() { stop(); <-done; d.Close() }()
	if d.Signing != nil {
		t.Fatal("the daemon serves signing without an unlocked key")
	}

	hc := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var dl net.Dialer
		return dl.DialContext(ctx, "unix", filepath.Join(string(home), SocketFile))
	}}}
	for _, p := range [][2]string{{"POST", "/api/sandbox/sign"}, {"GET", "/api/sandbox/sign/address"}} {
		req, _ := http.NewRequest(p[0], "http://warden"+p[1], strings.NewReader(`{"method":"personal_sign"}`))
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(b), "could not be unlocked") || !strings.Contains(string(b), "no passphrase source") {
			t.Errorf("%s %s = %d %s; want 503 saying the key could not be unlocked and why", p[0], p[1], resp.StatusCode, b)
		}
	}
	// Everything else still serves.
	if dec, err := d.Check(ctx, &warden.Request{Capability: warden.CapTool, Action: "call", Resource: "get_price"}, httpapi.CheckOptions{}); err != nil || dec.Verdict != warden.Allow {
		t.Errorf("a check while signing is off: %v %v; want allowed", dec.Verdict, err)
	}
	evs, err := d.App.Store.Events(ctx, warden.EventFilter{Type: warden.EventSigningUnavailable})
	if err != nil || len(evs) != 1 || evs[0].Severity != warden.SevCritical {
		t.Fatalf("signing_unavailable events = %+v, %v; want one critical", evs, err)
	}
}
