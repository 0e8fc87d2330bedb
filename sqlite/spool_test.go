package sqlite

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/agentwarden/warden"
)

func spoolEntry(i int) *warden.AuditEntry {
	return &warden.AuditEntry{
		ID:         uuid.NewString(),
		TraceID:    fmt.Sprintf("trace-%d", i),
		CreatedAt:  time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Millisecond),
		Capability: "tool", Action: "call", Resource: "get_price", Tool: "get_price", Tier: 1,
		Verdict: warden.Allow, Reason: "tier 1", Rule: "tools.tier1",
		Stages: []warden.StageAnswer{{Stage: "tool-tier", Verdict: warden.Allow, Reason: "tier 1", Rule: "tools.tier1"}},
	}
}

func countEntries(t *testing.T, path string) []warden.AuditEntry {
	t.Helper()
	s, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rows, err := s.Entries(context.Background(), warden.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if rep, err := s.Verify(context.Background()); err != nil || !rep.OK() {
		t.Fatalf("Verify: %+v %v", rep.FirstBreak, err)
	}
	return rows
}

// TestDeferredStoreSpoolsWithoutOpeningTheDatabase: a plain Record on a
// deferred store touches only the spool; the next reader drains it into the
// chain.
func TestDeferredStoreSpoolsWithoutOpeningTheDatabase(t *testing.T) {
	path := filepath.Join(t.TempDir(), "warden.db")
	s := OpenDeferred(path)
	for i := range 3 {
		if err := s.Record(context.Background(), spoolEntry(i), nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("the database was created by spooled records (stat: %v)", err)
	}
	rows := countEntries(t, path)
	if len(rows) != 3 {
		t.Fatalf("%d rows after draining, want 3", len(rows))
	}
	for i, r := range rows {
		if r.Seq != int64(i+1) || r.TraceID != fmt.Sprintf("trace-%d", i) || len(r.Stages) != 1 || r.Hash == "" {
			t.Errorf("row %d = seq %d trace %s stages %d hash %q", i, r.Seq, r.TraceID, len(r.Stages), r.Hash)
		}
	}
	if fi, err := os.Stat(path + spoolSuffix); err != nil || fi.Size() != 0 {
		t.Fatalf("spool after drain: %v, %v; want empty", fi, err)
	}
}

// TestDebitBypassesTheSpool: a debit needs the atomic check, so it goes to the
// database, and the spool is drained first.
func TestDebitBypassesTheSpool(t *testing.T) {
	path := filepath.Join(t.TempDir(), "warden.db")
	s := OpenDeferred(path)
	defer s.Close()
	if err := s.Record(context.Background(), spoolEntry(0), nil); err != nil {
		t.Fatal(err)
	}
	e := spoolEntry(1)
	if err := s.Record(context.Background(), e, &warden.Debit{Amount: 5, Cap: 10}); err != nil {
		t.Fatal(err)
	}
	if e.Seq != 2 {
		t.Fatalf("debited entry got seq %d, want 2 (after the spooled one)", e.Seq)
	}
	if spent, err := s.SpentSince(context.Background(), time.Time{}); err != nil || spent != 5 {
		t.Fatalf("SpentSince = %v, %v; want 5", spent, err)
	}
}

// TestTornFramesAreSkippedAndReported: a process killed mid-write leaves a torn
// frame; the drain keeps every intact record around it and reports the damage.
func TestTornFramesAreSkippedAndReported(t *testing.T) {
	path := filepath.Join(t.TempDir(), "warden.db")
	var data []byte
	for i := range 4 {
		f, err := encodeFrame(spoolEntry(i))
		if err != nil {
			t.Fatal(err)
		}
		switch i {
		case 1:
			f = f[:len(f)/2] // torn: cut short
		case 2:
			f[len(f)-3] ^= 0x20 // damaged: checksum fails
		}
		data = append(data, f...)
	}
	data = append(data, []byte("garbage")...)
	if err := os.WriteFile(path+spoolSuffix, data, 0o600); err != nil {
		t.Fatal(err)
	}
	rows := countEntries(t, path)
	if len(rows) != 2 || rows[0].TraceID != "trace-0" || rows[1].TraceID != "trace-3" {
		t.Fatalf("rows %+v, want trace-0 and trace-3", rows)
	}
	s, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	evs, err := s.Events(context.Background(), warden.EventFilter{Type: "audit_spool_damaged"})
	if err != nil || len(evs) != 1 {
		t.Fatalf("damage events %+v, %v; want one", evs, err)
	}
}

// TestRedrainIsExactlyOnce: a drain that committed but crashed before emptying
// the spool must not record its entries twice.
func TestRedrainIsExactlyOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "warden.db")
	s := OpenDeferred(path)
	for i := range 5 {
		if err := s.Record(context.Background(), spoolEntry(i), nil); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	spooled, err := os.ReadFile(path + spoolSuffix)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(countEntries(t, path)); n != 5 {
		t.Fatalf("%d rows, want 5", n)
	}
	if err := os.WriteFile(path+spoolSuffix, spooled, 0o600); err != nil { // the crash
		t.Fatal(err)
	}
	if n := len(countEntries(t, path)); n != 5 {
		t.Fatalf("%d rows after draining the same spool again, want 5", n)
	}
}

// TestConcurrentSpoolingAndDraining: writers spool while readers drain; every
// record ends up in the chain exactly once.
func TestConcurrentSpoolingAndDraining(t *testing.T) {
	path := filepath.Join(t.TempDir(), "warden.db")
	const writers, each = 6, 40
	var wg sync.WaitGroup
	errs := make(chan error, writers+1)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				s := OpenDeferred(path) // one store per "process"
				err := s.Record(context.Background(), spoolEntry(w*each+i), nil)
				s.Close()
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		r, err := Open(context.Background(), path)
		if err != nil {
			errs <- err
			return
		}
		defer r.Close()
		for range 30 {
			if _, err := r.Entries(context.Background(), warden.AuditFilter{Limit: 1}); err != nil {
				errs <- err
				return
			}
		}
	}()
	wg.Wait()
	<-done
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	rows := countEntries(t, path)
	seen := map[string]int{}
	for _, r := range rows {
		seen[r.TraceID]++
	}
	if len(rows) != writers*each || len(seen) != writers*each {
		t.Fatalf("%d rows with %d distinct traces, want %d each once", len(rows), len(seen), writers*each)
	}
}

func FuzzDecodeFrames(f *testing.F) {
	good, _ := encodeFrame(spoolEntry(1))
	f.Add(good)
	f.Add(append(append([]byte{}, good...), good[:20]...))
	f.Add([]byte(spoolMagic + "\x00\x00\x00\x05\x00\x00\x00\x00{}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		entries, _ := decodeFrames(data)
		for _, e := range entries {
			if e.ID == "" {
				t.Fatal("decoded an entry without an id")
			}
		}
	})
}
