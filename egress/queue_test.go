package egress_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/netip"
	"testing"
	"time"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/internal/dnstest"
)

// TestQueuedRequestLog: with Queue set, the request log of an answered
// request is queued (in a group, see TestRequestLogGroups) and waited for
// off the client's path (the answer arrives while the store has not stored it);
// a refusal's event still goes through Events; Close waits for every
// queued event to be stored.
func TestQueuedRequestLog(t *testing.T) {
	up := startUpstream(t, "127.0.0.1:0", func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "ok")
	}, nil)
	dns := dnstest.Start(t)
	dns.Set("app.test", []netip.Addr{loopback})
	queued := make(chan string, 4)
	release := make(chan struct{})
	stored := make(chan string, 4)
	queue := func(_ context.Context, typ string, _ warden.Severity, _ string, meta json.RawMessage) func() error {
		queued <- typ
		return func() error {
			<-release
			stored <- string(meta)
			return nil
		}
	}
	h := newHarness(t, dns, privatePolicy(hostPort("app.test", up.port)), options{queue: queue})

	resp, body := h.get(h.client(nil), "http://"+hostPort("app.test", up.port)+"/", nil)
	if resp.StatusCode != http.StatusOK || body != "ok" {
		t.Fatalf("GET = %d %q, want 200 ok", resp.StatusCode, body)
	}
	select {
	case typ := <-queued:
		if typ != warden.EventEgressRequest {
			t.Fatalf("queued a %s event, want %s", typ, warden.EventEgressRequest)
		}
	case <-time.After(waitFor):
		t.Fatal("the answered request's event was never queued")
	}
	if n := len(h.events.ofType(warden.EventEgressRequest)); n != 0 {
		t.Errorf("%d events went through Events for an answered request, want 0 (queued)", n)
	}

	resp, _ = h.get(h.client(nil), "http://blocked.test/", nil)
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("GET blocked.test = %d, want 403", resp.StatusCode)
	}
	if evs := h.events.ofType(warden.EventEgressRequest); len(evs) != 1 || evs[0].meta["verdict"] != warden.Deny.String() {
		t.Fatalf("events through Events = %+v; want the refusal's, written before it was answered", evs)
	}
	if len(queued) != 0 {
		t.Errorf("a refusal's event was queued")
	}

	closed := make(chan error, 1)
	go func() { closed <- h.proxy.Close() }()
	select {
	case <-closed:
		t.Fatal("Close returned while a queued event was not stored")
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	select {
	case <-closed:
	case <-time.After(waitFor):
		t.Fatal("Close did not return once the queued event was stored")
	}
	select {
	case meta := <-stored:
		var m map[string]any
		if err := json.Unmarshal([]byte(meta), &m); err != nil || m["status"] != float64(200) {
			t.Errorf("stored event meta %s, want status 200", meta)
		}
	default:
		t.Error("the queued event was never waited for")
	}
}
