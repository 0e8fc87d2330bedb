package app

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/postgres"
	"github.com/agentwarden/warden/safety"
)

// TestFleetStopUnreadableCountsAsOn: a fleet's emergency stop that cannot
// be read (its database out of reach) is on, whatever was read before the
// outage and however long ago: another host may have turned it on since.
// Tier 2 requests are denied saying why; tier 1 ones still run.
func TestFleetStopUnreadableCountsAsOn(t *testing.T) {
	home := Home(t.TempDir())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// Nothing listens on port 1: the connection is refused at once. With a
	// journal, Open succeeds and leaves the schema for first contact.
	pg, err := postgres.Open(ctx, "postgres://warden@127.0.0.1:1/warden?connect_timeout=2", postgres.Options{Journal: filepath.Join(string(home), JournalFile)})
	if err != nil {
		t.Fatalf("open a fleet store whose database is down, with a journal: %v", err)
	}
	store := newFleetStore(ctx, pg, home)
	defer store.Close()

	engaged, unread := killEngaged(home, store), killUnread(home, store)
	if !engaged() || !unread() {
		t.Fatalf("a fleet stop never read (database down): engaged %v, unread %v; want both true", engaged(), unread())
	}
	// Read off before the outage, longer ago than killFresh: not trusted.
	store.kill.set(false)
	store.kill.mu.Lock()
	store.kill.at = time.Now().Add(-time.Minute)
	store.kill.mu.Unlock()
	if !engaged() {
		t.Fatal("a fleet stop read off a minute ago, unreadable now, counts as off; want on")
	}
	// Read off within killFresh: that read stands.
	store.kill.set(false)
	if engaged() || unread() {
		t.Error("a fleet stop read off just now counts as on")
	}

	store.kill.store(true, true)
	ks := safety.KillSwitch{Engaged: engaged, Unread: unread}
	d, err := ks.Check(ctx, &warden.Request{Capability: warden.CapTool, Action: "call", Resource: "write_file", Tier: warden.TierConfirmOnce})
	if err != nil || d.Verdict != warden.Deny || !strings.Contains(d.Reason, "cannot be read") {
		t.Errorf("tier 2 with the fleet stop unreadable = %v %q, %v; want deny saying the stop cannot be read", d.Verdict, d.Reason, err)
	}
	d, err = ks.Check(ctx, &warden.Request{Capability: warden.CapTool, Action: "call", Resource: "read_file", Tier: warden.TierReadOnly})
	if err != nil || d.Verdict != warden.Allow {
		t.Errorf("tier 1 with the fleet stop unreadable = %v %q, %v; want allow", d.Verdict, d.Reason, err)
	}
}
