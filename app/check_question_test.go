package app

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/config"
	"github.com/agentwarden/warden/httpapi"
)

// TestRemoteCheckIsAQuestion: the daemon's check with dry_run (what `warden
// check --remote` sends) reserves nothing and says so; the same check
// without it (a hook about to run its tool) debits the ledger.
func TestRemoteCheckIsAQuestion(t *testing.T) {
	ctx := context.Background()
	home := Home(filepath.Join(t.TempDir(), "h"))
	if _, err := Init(ctx, home, false); err != nil {
		t.Fatal(err)
	}
	if err := config.Set(home.PolicyPath(), "safety.autopilotEnabled", "true"); err != nil {
		t.Fatal(err)
	}
	d, err := NewDaemon(ctx, home, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	spent := func() warden.USD {
		t.Helper()
		s, err := d.App.Store.SpentSince(ctx, time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	for i := range 2 {
		req, err := warden.DecodeRequest(strings.NewReader(`{"capability":"tool","action":"call","resource":"buy_token","autonomous":true,"params":{"amount_usd":50}}`))
		if err != nil {
			t.Fatal(err)
		}
		dec, err := d.Check(ctx, req, httpapi.CheckOptions{Channel: "api", DryRun: true})
		if err != nil || dec.Verdict != warden.Allow || !strings.Contains(dec.Reason, "nothing was reserved") {
			t.Fatalf("question %d: %v %v (%s); want allowed, saying nothing was reserved", i, dec.Verdict, err, dec.Reason)
		}
	}
	if s := spent(); s != 0 {
		t.Fatalf("two questions left $%s in the ledger, want $0", s)
	}
	req, err := warden.DecodeRequest(strings.NewReader(`{"capability":"tool","action":"call","resource":"buy_token","autonomous":true,"params":{"amount_usd":50}}`))
	if err != nil {
		t.Fatal(err)
	}
	if dec, err := d.Check(ctx, req, httpapi.CheckOptions{Channel: "api"}); err != nil || dec.Verdict != warden.Allow {
		t.Fatalf("reserving check: %v %v", dec.Verdict, err)
	}
	if s := spent(); s != 50*warden.MicrosPerDollar {
		t.Fatalf("a reserving check left $%s in the ledger, want $50", s)
	}
}
