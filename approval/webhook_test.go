package approval_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/approval"
)

// TestWebhookSignsEachPost: a receiver that recomputes the signature over
// the timestamp and the exact body accepts every post; one byte of another
// secret does not verify, and a receiver's error is reported.
func TestWebhookSignsEachPost(t *testing.T) {
	secret := []byte("s3cret")
	var got []map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		ts, sig := r.Header.Get(approval.WebhookTimestamp), r.Header.Get(approval.WebhookSignature)
		if sig != approval.WebhookSign(secret, ts, body) || sig == approval.WebhookSign([]byte("s3creT"), ts, body) {
			http.Error(w, "bad signature", http.StatusUnauthorized)
			return
		}
		var m map[string]any
		if err := json.Unmarshal(body, &m); err != nil {
			http.Error(w, "bad body", http.StatusBadRequest)
			return
		}
		got = append(got, m)
	}))
	defer srv.Close()
	a := warden.Approval{ID: "a1", Request: warden.Request{Capability: warden.CapShell, Action: "exec", Resource: "make deploy"},
		Decision: warden.Decision{Verdict: warden.Ask, Tier: 3}, State: warden.ApprovalPending}
	w := &approval.Webhook{URL: srv.URL, Secret: secret}
	if err := w.Asked(ctx, a); err != nil {
		t.Fatal(err)
	}
	a.State = warden.ApprovalDenied
	if err := w.Ended(ctx, a); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0]["event"] != "asked" || got[1]["event"] != "ended" {
		t.Fatalf("received %v; want asked then ended", got)
	}
	if ap, _ := got[1]["approval"].(map[string]any); ap["state"] != "denied" || ap["id"] != "a1" {
		t.Errorf("ended post carries %v", ap)
	}
	bad := &approval.Webhook{URL: srv.URL, Secret: []byte("wrong")}
	if err := bad.Asked(ctx, a); err == nil {
		t.Error("a post the receiver refused was reported as delivered")
	}
}
