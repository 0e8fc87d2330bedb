package sqlite

import (
	"context"
	"path/filepath"
	"sync"
	"testing"

	"github.com/agentwarden/warden"
)

// TestGroupCommit: concurrent Records on one open store share transactions,
// and every one of them is in the chain exactly once.
func TestGroupCommit(t *testing.T) {
	s, err := Open(context.Background(), filepath.Join(t.TempDir(), "warden.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const goroutines, each = 32, 20
	var wg sync.WaitGroup
	errs := make(chan error, goroutines*each)
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				e := spoolEntry(g*each + i)
				if err := s.Record(context.Background(), e, nil); err != nil {
					errs <- err
				} else if e.Seq == 0 || e.Hash == "" {
					t.Errorf("entry %d acknowledged without seq or hash", g*each+i)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	rows, err := s.Entries(context.Background(), warden.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != goroutines*each {
		t.Fatalf("%d rows, want %d", len(rows), goroutines*each)
	}
	if rep, err := s.Verify(context.Background()); err != nil || !rep.OK() {
		t.Fatalf("Verify: %+v %v", rep.FirstBreak, err)
	}
	if b := s.batches.Load(); b >= goroutines*each {
		t.Fatalf("%d transactions for %d concurrent records: nothing was grouped", b, goroutines*each)
	} else {
		t.Logf("%d records in %d transactions", goroutines*each, b)
	}
}
