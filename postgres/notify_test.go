package postgres

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/internal/pgtest"
)

// TestListenHearsTheFleet: a store listening hears the approvals another
// store (another daemon) creates and answers, and the emergency stop it
// turns; Killed reads the stop's newest state.
func TestListenHearsTheFleet(t *testing.T) {
	a, owner := openTest(t)
	b := openDSN(t, pgtest.WithRole(t, owner, writerRole))
	lctx, stop := context.WithCancel(ctx)
	defer stop()
	ids := make(chan string, 10)
	kills := make(chan bool, 10)
	go a.Listen(lctx, func(id string) { ids <- id }, func(on bool) { kills <- on })
	// Listen has no "ready" signal: keep announcing until it hears one.
	now := time.Now()
	req := warden.Request{Capability: warden.CapShell, Action: "exec", Resource: "make deploy", Session: "s"}
	var heard string
	for i := 0; heard == "" && i < 100; i++ {
		ap := &warden.Approval{ID: fmt.Sprintf("appr-%d", i), TraceID: "t", Request: req,
			Decision: warden.Decision{Verdict: warden.Ask, Tier: 3}, InputHash: warden.InputHash(&req), CreatedAt: now, ExpiresAt: now.Add(time.Hour), Channel: "api"}
		if err := b.CreateApproval(ctx, ap); err != nil {
			t.Fatal(err)
		}
		select {
		case <-ids:
			heard = ap.ID // the last created; earlier ones may be announced too
		case <-time.After(100 * time.Millisecond):
		}
	}
	if heard == "" {
		t.Fatal("the listening store never heard an approval the other store created")
	}
	if _, err := b.ResolveApproval(ctx, warden.Resolution{ID: heard, State: warden.ApprovalApproved, Answer: warden.AnswerOnce, By: "b", At: now}, nil); err != nil {
		t.Fatal(err)
	}
	select {
	case id := <-ids:
		for id != heard {
			id = <-ids
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the answer on the other store was not announced")
	}
	if on, err := a.Killed(ctx); err != nil || on {
		t.Fatalf("Killed on a fresh fleet = %v, %v; want off", on, err)
	}
	if err := b.SetKill(ctx, true, "ops", "drill", now); err != nil {
		t.Fatal(err)
	}
	select {
	case on := <-kills:
		if !on {
			t.Errorf("the stop turned on was announced as off")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the stop turned on was not announced")
	}
	if on, err := a.Killed(ctx); err != nil || !on {
		t.Errorf("Killed after SetKill(on) on the other store = %v, %v; want on", on, err)
	}
	if err := b.SetKill(ctx, false, "ops", "", now); err != nil {
		t.Fatal(err)
	}
	if on, err := a.Killed(ctx); err != nil || on {
		t.Errorf("Killed after SetKill(off) = %v, %v; want off", on, err)
	}
}
