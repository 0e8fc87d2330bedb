package sqlite

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/agentwarden/warden"
)

// TestBusy holds the write lock from another connection (as another process
// would) and checks that Record waits, gives up when its context ends with an
// actionable *warden.Error, stores nothing, and succeeds once the lock is free.
func TestBusy(t *testing.T) {
	s, path := openTest(t)
	c := rawConn(t, path)
	if err := c.Exec(`BEGIN IMMEDIATE`); err != nil {
		t.Fatal(err)
	}
	tctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	e := &warden.AuditEntry{Capability: warden.CapShell, Action: "exec", Resource: "ls"}
	err := s.Record(tctx, e, nil)
	var we *warden.Error
	if !errors.As(err, &we) || we.Code != warden.EUnavailable {
		t.Fatalf("Record while another connection holds the write lock = %v, want a *warden.Error with code %s", err, warden.EUnavailable)
	}
	if waited := time.Since(start); waited < 150*time.Millisecond {
		t.Errorf("Record gave up after %v; want it to wait for the lock until its context ended", waited)
	}
	if err := c.Exec(`ROLLBACK`); err != nil {
		t.Fatal(err)
	}
	if err := s.Record(ctx, e, nil); err != nil {
		t.Fatalf("Record after the lock was released: %v", err)
	}
	if e.Seq != 1 {
		t.Errorf("Seq = %d, want 1: the refused attempt must have stored nothing", e.Seq)
	}
}

// TestEventGoesToTheSpoolWhenTheDatabaseStaysLocked: a security event the
// database stays locked for (another connection holds the write lock past
// the caller's patience) is appended to the spool instead, not lost, and
// enters the chain once the lock is free and the spool is drained.
func TestEventGoesToTheSpoolWhenTheDatabaseStaysLocked(t *testing.T) {
	s, path := openTest(t)
	c := rawConn(t, path)
	if err := c.Exec(`BEGIN IMMEDIATE`); err != nil {
		t.Fatal(err)
	}
	tctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	ev := &warden.SecurityEvent{Type: warden.EventActionResult, Severity: warden.SevInfo, Summary: "trade executed: buy WETH"}
	if err := s.AppendEvent(tctx, ev); err != nil {
		t.Fatalf("AppendEvent while another connection holds the write lock = %v, want it spooled", err)
	}
	if ev.Seq != 0 {
		t.Errorf("a spooled event has Seq %d, want 0 until the spool is drained", ev.Seq)
	}
	if err := c.Exec(`ROLLBACK`); err != nil {
		t.Fatal(err)
	}
	evs, err := s.Events(ctx, warden.EventFilter{})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, e := range evs {
		found = found || e.ID == ev.ID && e.Seq > 0
	}
	if !found {
		t.Fatalf("the spooled event is not in the chain after the lock was freed: %+v", evs)
	}
}
