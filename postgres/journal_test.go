package postgres

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/internal/pgtest"
)

// TestJournalWhileTheDatabaseIsDown: with the server stopped, what needs
// shared state (a debit, an approval, the ledger) fails, and what does not
// (a decision without a debit, a security event) is journaled and
// acknowledged, by a store that was open and by one opened during the
// outage; when the server is back, the journal is replayed in its order,
// exactly once (a replay repeated from a copy adds nothing), and the chain
// verifies.
func TestJournalWhileTheDatabaseIsDown(t *testing.T) {
	c := pgtest.NewCluster(t)
	dsn := c.Database(t, "warden")
	if _, _, err := Migrate(ctx, dsn, ""); err != nil {
		t.Fatal(err)
	}
	jpath := filepath.Join(t.TempDir(), "fleet.journal")
	open := func() *Store {
		s, err := Open(ctx, dsn, Options{Key: testKey, Journal: jpath})
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	s := open()
	entry := func(i int) *warden.AuditEntry {
		return &warden.AuditEntry{TraceID: fmt.Sprintf("t%03d", i), Capability: warden.CapShell, Action: "exec", Resource: fmt.Sprintf("make step%d", i), Verdict: warden.Sandbox}
	}
	for i := range 3 {
		if err := s.Record(ctx, entry(i), nil); err != nil {
			t.Fatal(err)
		}
	}
	c.Halt(t)
	debit := &warden.Debit{Amount: 10 * dollar, Cap: 100 * dollar, Since: time.Now().Add(-time.Hour)}
	if err := s.Record(ctx, entry(99), debit); warden.ErrorCodeOf(err) != warden.EUnavailable {
		t.Errorf("a debit with the database down = %v; want EUnavailable (a fund-moving request is denied)", err)
	}
	now := time.Now()
	req := warden.Request{Capability: warden.CapShell, Action: "exec", Resource: "git push", Session: "s"}
	if err := s.CreateApproval(ctx, &warden.Approval{ID: "a1", TraceID: "ta", Request: req, Decision: warden.Decision{Verdict: warden.Ask, Tier: 3},
		InputHash: warden.InputHash(&req), CreatedAt: now, ExpiresAt: now.Add(time.Hour), Channel: "api"}); err == nil {
		t.Error("an approval was stored with the database down; want it refused (an ask is denied)")
	}
	if _, err := s.SpentSince(ctx, now.Add(-time.Hour)); err == nil {
		t.Error("SpentSince answered with the database down")
	}
	offline := open() // a process started during the outage
	var journaled []*warden.AuditEntry
	for i := 3; i < 23; i++ {
		e := entry(i)
		st := s
		if i%2 == 1 {
			st = offline
		}
		if err := st.Record(ctx, e, nil); err != nil {
			t.Fatalf("Record without a debit, database down: %v; want it journaled", err)
		}
		if e.Seq != 0 || e.Hash != "" {
			t.Errorf("a journaled entry has seq %d hash %q; want them zero until it is chained", e.Seq, e.Hash)
		}
		journaled = append(journaled, e)
	}
	if err := offline.AppendEvent(ctx, &warden.SecurityEvent{Type: warden.EventSandboxLifecycle, Severity: warden.SevInfo, Summary: "offline"}); err != nil {
		t.Fatalf("AppendEvent, database down: %v; want it journaled", err)
	}
	saved, err := os.ReadFile(jpath)
	if err != nil || len(saved) == 0 {
		t.Fatalf("the journal is empty after the outage: %v", err)
	}
	c.Resume(t)
	n, err := s.Replay(ctx)
	if err != nil || n != 21 {
		t.Fatalf("Replay = %d, %v; want the 21 journaled rows", n, err)
	}
	if fi, _ := os.Stat(jpath); fi.Size() != 0 {
		t.Errorf("the journal holds %d bytes after its replay, want none", fi.Size())
	}
	// A replay cut short after its commit, before emptying the journal:
	// the same rows again are skipped.
	if err := os.WriteFile(jpath, saved, 0o600); err != nil {
		t.Fatal(err)
	}
	es, err := offline.Entries(ctx, warden.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 23 {
		t.Fatalf("%d entries after the replay (and a repeated one), want 3 + 20, each once", len(es))
	}
	for i, e := range es {
		if want := fmt.Sprintf("t%03d", i); e.TraceID != want {
			t.Errorf("entry %d is trace %s, want %s: the journal is replayed in its order", i+1, e.TraceID, want)
		}
	}
	evs, err := s.Events(ctx, warden.EventFilter{})
	if err != nil || len(evs) != 1 {
		t.Errorf("Events = %d, %v; want the journaled event once", len(evs), err)
	}
	if rep, err := s.Verify(ctx); err != nil || !rep.OK() || rep.AuditRows != 23 {
		t.Errorf("Verify = %+v, %v", rep, err)
	}
	// Funds move again.
	if err := s.Record(ctx, entry(23), debit); err != nil {
		t.Errorf("a debit with the database back: %v", err)
	}
}

// TestJournalCutShort: a journal whose last record was cut short (a crash
// while appending, never acknowledged) replays the whole records before it;
// one whose record does not match its checksum is refused.
func TestJournalCutShort(t *testing.T) {
	var recs [][]byte
	var want []string
	for i := range 3 {
		e := &warden.AuditEntry{ID: fmt.Sprintf("id%d", i), CreatedAt: time.UnixMilli(1), Verdict: warden.Allow}
		recs = append(recs, journalRecord(journalEntry, appendEntry(e)))
		want = append(want, e.ID)
	}
	whole := bytes.Join(recs, nil)
	for cut := len(whole) - len(recs[2]) + 1; cut < len(whole); cut++ {
		rows, err := parseJournal(whole[:cut])
		if err != nil || len(rows) != 2 || rows[1].entry.ID != want[1] {
			t.Fatalf("parseJournal(cut at %d of %d) = %d rows, %v; want the 2 whole records", cut, len(whole), len(rows), err)
		}
	}
	bad := bytes.Clone(whole)
	bad[10] ^= 0xff
	if _, err := parseJournal(bad); err == nil {
		t.Error("parseJournal accepted a record that does not match its checksum")
	}
	if rows, err := parseJournal(whole); err != nil || len(rows) != 3 {
		t.Errorf("parseJournal(whole) = %d, %v", len(rows), err)
	}
}

// TestJournalLockWaitIsBounded: a process that holds the journal's lock (a
// replay stuck on a hung connection) makes another's append fail after the
// bounded wait, as unavailable, with nothing appended; once the lock is
// free, the append goes through. Needs no server.
func TestJournalLockWaitIsBounded(t *testing.T) {
	old := journalLockWait
	journalLockWait = 200 * time.Millisecond
	t.Cleanup(func() { journalLockWait = old })
	j := &journal{path: filepath.Join(t.TempDir(), "fleet.journal")}
	held, err := j.lock() // another open file description: flock excludes it
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	err = j.append([]byte("row"))
	if waited := time.Since(start); warden.ErrorCodeOf(err) != warden.EUnavailable || waited < journalLockWait || waited > 5*time.Second {
		t.Fatalf("append while the lock is held: %v after %s; want unavailable after about %s", err, waited, journalLockWait)
	}
	if fi, err := os.Stat(j.path); err != nil || fi.Size() != 0 {
		t.Fatalf("the journal after a refused append: %v, %v; want it empty", fi, err)
	}
	held.Close()
	if err := j.append([]byte("row")); err != nil {
		t.Fatalf("append once the lock is free: %v", err)
	}
	if fi, _ := os.Stat(j.path); fi == nil || fi.Size() == 0 {
		t.Fatal("the append after the lock was freed wrote nothing")
	}
}
