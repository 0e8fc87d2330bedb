package sqlite

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

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

// TestGroupCommitSharesEventsAndEntries: concurrent Records and AppendEvents
// on one open store share transactions, every one of them is in its chain
// exactly once, and both chains verify.
func TestGroupCommitSharesEventsAndEntries(t *testing.T) {
	s, err := Open(context.Background(), filepath.Join(t.TempDir(), "warden.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const goroutines, each = 32, 20
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				n := g*each + i
				if g%2 == 0 {
					e := spoolEntry(n)
					if err := s.Record(context.Background(), e, nil); err != nil || e.Seq == 0 {
						t.Errorf("Record %d: seq %d, %v", n, e.Seq, err)
					}
					continue
				}
				ev := testEvent(n)
				if err := s.AppendEvent(context.Background(), ev); err != nil || ev.Seq == 0 {
					t.Errorf("AppendEvent %d: seq %d, %v", n, ev.Seq, err)
				}
			}
		}()
	}
	wg.Wait()
	rows, err := s.Entries(context.Background(), warden.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	evs, err := s.Events(context.Background(), warden.EventFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if want := goroutines / 2 * each; len(rows) != want || len(evs) != want {
		t.Fatalf("%d entries and %d events, want %d of each", len(rows), len(evs), want)
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

// TestGroupCommitOneBadRecordFailsAlone: a batch holding a record that
// cannot be stored (an id already in the chain) fails that record's caller
// only; the others in the batch are stored and acknowledged.
func TestGroupCommitOneBadRecordFailsAlone(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "warden.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	first := spoolEntry(0)
	if err := s.Record(ctx, first, nil); err != nil {
		t.Fatal(err)
	}
	good, dup, ev := spoolEntry(1), spoolEntry(2), testEvent(3)
	dup.ID = first.ID
	batch := []*pendingEntry{
		{e: good, done: make(chan error, 1)},
		{e: dup, done: make(chan error, 1)},
		{ev: ev, done: make(chan error, 1)},
	}
	for _, p := range batch[:2] {
		if err := s.prepareEntry(p.e); err != nil {
			t.Fatal(err)
		}
	}
	// One batch, as if all three had queued behind a commit in flight.
	s.gmu.Lock()
	s.queue, s.committing = batch, true
	s.gmu.Unlock()
	s.lead(ctx)
	if err := <-batch[0].done; err != nil || good.Seq == 0 {
		t.Errorf("good entry: seq %d, %v; want stored", good.Seq, err)
	}
	if err := <-batch[1].done; err == nil || dup.Seq != 0 || dup.Hash != "" {
		t.Errorf("entry with a used id: seq %d, hash %q, %v; want an error and nothing set", dup.Seq, dup.Hash, err)
	}
	if err := <-batch[2].done; err != nil || ev.Seq == 0 {
		t.Errorf("event: seq %d, %v; want stored", ev.Seq, err)
	}
	if s.committing {
		t.Error("no commit is in flight, yet the store says one is")
	}
	rows, err := s.Entries(ctx, warden.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 {
		t.Fatalf("%d entries, want 2 (the first and the good one)", len(rows))
	}
	if rep, err := s.Verify(ctx); err != nil || !rep.OK() {
		t.Fatalf("Verify: %+v %v", rep.FirstBreak, err)
	}
}

// TestQueueEventKeepsOrder: an event queued with QueueEvent is stored no
// later than a Record queued after it, before anyone waits for the event;
// its wait then returns the result.
func TestQueueEventKeepsOrder(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "warden.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i := range 20 {
		ev := testEvent(i)
		wait := s.QueueEvent(ctx, ev)
		e := spoolEntry(i)
		recorded := make(chan error, 1)
		go func() { recorded <- s.Record(ctx, e, nil) }()
		if i%2 == 0 {
			// The Record may queue behind the event's commit, which waits
			// for its leader: the event's wait.
			time.Sleep(time.Millisecond)
		}
		if err := wait(); err != nil || ev.Seq == 0 {
			t.Fatalf("event %d: seq %d, %v", i, ev.Seq, err)
		}
		if err := <-recorded; err != nil {
			t.Fatal(err)
		}
		evs, err := s.Events(ctx, warden.EventFilter{})
		if err != nil {
			t.Fatal(err)
		}
		if len(evs) != i+1 {
			t.Fatalf("after event %d and the Record queued after it: %d events stored, want %d", i, len(evs), i+1)
		}
	}
	if rep, err := s.Verify(ctx); err != nil || !rep.OK() {
		t.Fatalf("Verify: %+v %v", rep.FirstBreak, err)
	}
}

// TestGroupCommitOutlivesTheLeadersContext: a leader whose context is
// cancelled (its client went away) still commits the batch, so the other
// callers in it are not failed by someone else's cancellation.
func TestGroupCommitOutlivesTheLeadersContext(t *testing.T) {
	s, err := Open(context.Background(), filepath.Join(t.TempDir(), "warden.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	mine, other := spoolEntry(1), spoolEntry(2)
	batch := []*pendingEntry{{e: mine, done: make(chan error, 1)}, {e: other, done: make(chan error, 1)}}
	for _, p := range batch {
		if err := s.prepareEntry(p.e); err != nil {
			t.Fatal(err)
		}
	}
	gone, cancel := context.WithCancel(context.Background())
	cancel()
	s.gmu.Lock()
	s.queue, s.committing = batch, true
	s.gmu.Unlock()
	s.lead(gone)
	for i, p := range batch {
		if err := <-p.done; err != nil || p.e.Seq == 0 {
			t.Errorf("record %d: seq %d, %v; want stored although the leader's context was cancelled", i, p.e.Seq, err)
		}
	}
}

// TestOpenStoreJoinsTheNextCommitWithoutTheWritersLock: once the database
// is open, a Record asking whether to spool does not wait for the writer's
// lock, which a commit holds through its fdatasync; it joins the queue of
// the next commit instead.
func TestOpenStoreJoinsTheNextCommitWithoutTheWritersLock(t *testing.T) {
	s, err := Open(context.Background(), filepath.Join(t.TempDir(), "warden.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Record(context.Background(), spoolEntry(0), nil); err != nil {
		t.Fatal(err)
	}
	s.mu.Lock() // as a commit in flight holds it
	answered := make(chan bool, 1)
	go func() { answered <- s.spooling() }()
	select {
	case spool := <-answered:
		if spool {
			t.Error("an open store says it spools")
		}
	case <-time.After(5 * time.Second):
		t.Error("spooling() waited for the writer's lock")
	}
	s.mu.Unlock()
}

// TestGroupCommitPanicFailsOnlyItsRecord: a record whose commit panics
// fails its own caller with an error; the others in its batch are stored
// alone and acknowledged, the lead is given up (a later Record commits), and
// the panicking transaction left nothing behind. Before, the panic left the
// store "committing" forever: every caller in the batch and every later
// Record waited for an answer that never came.
func TestGroupCommitPanicFailsOnlyItsRecord(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "warden.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	good, ev := spoolEntry(1), testEvent(2)
	if err := s.prepareEntry(good); err != nil {
		t.Fatal(err)
	}
	batch := []*pendingEntry{
		{e: good, done: make(chan error, 1)},
		{done: make(chan error, 1)}, // neither an entry nor an event: inserting it panics
		{ev: ev, done: make(chan error, 1)},
	}
	s.gmu.Lock()
	s.queue, s.committing = batch, true
	s.gmu.Unlock()
	led := make(chan any, 1)
	go func() {
		defer func() { led <- recover() }()
		s.lead(ctx)
	}()
	select {
	case r := <-led:
		if r != nil {
			t.Fatalf("lead panicked: %v", r)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("lead did not return")
	}
	for i, p := range batch {
		select {
		case err := <-p.done:
			if (i == 1) != (err != nil) {
				t.Errorf("record %d: %v; want an error only for the one that panics", i, err)
			}
		default:
			t.Fatalf("record %d got no answer", i)
		}
	}
	if good.Seq == 0 || ev.Seq == 0 {
		t.Errorf("entry seq %d, event seq %d; want both stored", good.Seq, ev.Seq)
	}
	s.gmu.Lock()
	committing := s.committing
	s.gmu.Unlock()
	if committing {
		t.Fatal("no commit is in flight, yet the store says one is")
	}
	done := make(chan error, 1)
	go func() { done <- s.Record(ctx, spoolEntry(3), nil) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Record after the panic: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Record after the panic did not return")
	}
	rows, err := s.Entries(ctx, warden.AuditFilter{})
	if err != nil || len(rows) != 2 {
		t.Fatalf("%d entries, %v; want 2", len(rows), err)
	}
	if rep, err := s.Verify(ctx); err != nil || !rep.OK() {
		t.Fatalf("Verify: %+v %v", rep.FirstBreak, err)
	}
}

// TestGroupCommitGathersAfterABigCommit: after a commit of 8 records, a
// leader that finds only its own record queued waits for the queue to hold
// 4 (half of 8) and commits them in one transaction, instead of committing
// its record alone while the others queue behind it.
func TestGroupCommitGathersAfterABigCommit(t *testing.T) {
	s := gatherStore(t, 8, time.Minute)
	defer setMaxGather(time.Minute)()
	before := s.batches.Load()
	results := make(chan error, 4)
	record := func(i int) { results <- s.Record(context.Background(), spoolEntry(i), nil) }
	go record(0)
	waitGathering(t, s)
	for i := 1; i < 4; i++ {
		go record(i)
	}
	for range 4 {
		if err := waitResult(t, results); err != nil {
			t.Fatal(err)
		}
	}
	if n := s.batches.Load() - before; n != 1 {
		t.Fatalf("4 records after a commit of 8 took %d transactions, want 1 (the leader gathers half of 8)", n)
	}
}

// TestGroupCommitGatherIsBounded: a gathering leader whose others never come
// commits its record alone once the previous commit's duration has passed.
func TestGroupCommitGatherIsBounded(t *testing.T) {
	s := gatherStore(t, 8, 5*time.Millisecond)
	before := s.batches.Load()
	results := make(chan error, 1)
	go func() { results <- s.Record(context.Background(), spoolEntry(0), nil) }()
	if err := waitResult(t, results); err != nil {
		t.Fatal(err)
	}
	if n := s.batches.Load() - before; n != 1 {
		t.Fatalf("a lone record took %d transactions, want 1", n)
	}
}

// TestGroupCommitGatherIsCappedByMaxGather: after a commit that took a
// minute (a slow disk's fdatasync), a leader whose others never come waits
// at most maxGather, not the previous commit's duration.
func TestGroupCommitGatherIsCappedByMaxGather(t *testing.T) {
	s := gatherStore(t, 8, time.Minute)
	defer setMaxGather(10 * time.Millisecond)()
	results := make(chan error, 1)
	go func() { results <- s.Record(context.Background(), spoolEntry(0), nil) }()
	if err := waitResult(t, results); err != nil {
		t.Fatal(err)
	}
}

// TestGroupCommitLoneCallersDoNotGather: after a commit of fewer than 4
// records, a leader commits at once, however long the previous commit took:
// a lone caller pays what a plain transaction costs.
func TestGroupCommitLoneCallersDoNotGather(t *testing.T) {
	s := gatherStore(t, 3, time.Minute)
	defer setMaxGather(time.Minute)()
	results := make(chan error, 1)
	go func() { results <- s.Record(context.Background(), spoolEntry(0), nil) }()
	if err := waitResult(t, results); err != nil {
		t.Fatal(err)
	}
}

// gatherStore opens a store whose previous group commit held batch records
// and took took.
func gatherStore(t *testing.T, batch int, took time.Duration) *Store {
	t.Helper()
	s, err := Open(context.Background(), filepath.Join(t.TempDir(), "warden.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	s.gmu.Lock()
	s.lastBatch, s.lastCommit = batch, took
	s.gmu.Unlock()
	return s
}

// setMaxGather sets maxGather and returns what restores it.
func setMaxGather(d time.Duration) (restore func()) {
	old := maxGather
	maxGather = d
	return func() { maxGather = old }
}

// waitGathering waits until a leader of s is gathering.
func waitGathering(t *testing.T, s *Store) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		s.gmu.Lock()
		gathering := s.grown != nil
		s.gmu.Unlock()
		if gathering {
			return
		}
	}
	t.Fatal("no leader gathered within 10 s")
}

// waitResult returns the next result, failing the test when none comes
// within 10 s (a leader gathering for minutes).
func waitResult(t *testing.T, results <-chan error) error {
	t.Helper()
	select {
	case err := <-results:
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("a Record did not return within 10 s")
		return nil
	}
}
