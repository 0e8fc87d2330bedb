package postgres

import (
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agentwarden/warden"
)

// TestGroupCommitPanicFailsOnlyItsRecord: a record whose commit panics
// fails its own caller with an error; the others in its group are stored
// alone and acknowledged, the lead is given up (a later Record commits), and
// the panicking transaction left nothing behind. Before, the panic left the
// store "committing" forever: every caller in the group and every later
// Record waited for an answer that never came.
func TestGroupCommitPanicFailsOnlyItsRecord(t *testing.T) {
	s, _ := openTest(t)
	entry := func(i int) *warden.AuditEntry {
		e := &warden.AuditEntry{TraceID: fmt.Sprintf("t%03d", i), Capability: warden.CapShell, Action: "exec", Resource: fmt.Sprintf("make step%d", i), Verdict: warden.Sandbox}
		if err := s.prepareEntry(e); err != nil {
			t.Fatal(err)
		}
		return e
	}
	first, last := entry(1), entry(3)
	batch := []*pendingRecord{
		{es: []*warden.AuditEntry{first}, done: make(chan error, 1)},
		{debit: &warden.Debit{}, done: make(chan error, 1)}, // a debit without its entry: recording it panics
		{es: []*warden.AuditEntry{last}, done: make(chan error, 1)},
	}
	led := make(chan any, 1)
	go func() {
		defer func() { led <- recover() }()
		s.commitGroup(ctx, batch)
	}()
	select {
	case r := <-led:
		if r != nil {
			t.Fatalf("the group commit panicked: %v", r)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the group commit did not return")
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
	done := make(chan error, 1)
	go func() {
		done <- s.Record(ctx, &warden.AuditEntry{TraceID: "t004", Capability: warden.CapShell, Action: "exec", Resource: "make", Verdict: warden.Allow}, nil)
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Record after the panic: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Record after the panic did not return: the lead was left taken")
	}
	rows, err := s.Entries(ctx, auditAll)
	if err != nil || len(rows) != 3 {
		t.Fatalf("%d entries, %v; want 3 (the two around the panic and the one after)", len(rows), err)
	}
	if rep, err := s.Verify(ctx); err != nil || !rep.OK() {
		t.Fatalf("Verify: %+v %v", rep.FirstBreak, err)
	}
}

// TestGroupTimeoutBoundsEachCommitNotTheLead: the timeout of a group
// commit bounds each group, not the whole time one caller leads. Here the
// leader's first group waits 1.5 s for the chain lock and the next group
// (a debit, queued meanwhile) waits 1.5 s more for spend_releases: each
// is within the 2 s timeout, and both are stored. Before, the timeout
// started with the lead, so under steady load every group after it failed
// (a debit refused, an entry not stored) until the queue ran dry.
func TestGroupTimeoutBoundsEachCommitNotTheLead(t *testing.T) {
	s, dsn := openTest(t)
	old := groupTimeout
	groupTimeout = 2 * time.Second
	t.Cleanup(func() { groupTimeout = old })
	hold := func(sql string, args ...any) pgx.Tx {
		c, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close(ctx) })
		tx, err := c.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec(ctx, sql, args...); err != nil {
			t.Fatal(err)
		}
		return tx
	}
	chain := hold(`SELECT pg_advisory_xact_lock($1)`, lockChains)
	releases := hold(`LOCK TABLE spend_releases IN ACCESS EXCLUSIVE MODE`)
	waitFor := func(what string, ok func() bool) {
		for deadline := time.Now().Add(10 * time.Second); !ok(); time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("timed out waiting for " + what)
			}
		}
	}
	queued := func(n int, leading bool) func() bool {
		return func() bool {
			s.gmu.Lock()
			defer s.gmu.Unlock()
			return s.committing == leading && len(s.queue) == n
		}
	}
	start := time.Now()
	errs := make(chan error, 2)
	go func() {
		errs <- s.Record(ctx, &warden.AuditEntry{TraceID: "lead", Capability: warden.CapShell, Action: "exec", Resource: "make", Verdict: warden.Allow}, nil)
	}()
	waitFor("the leader to take its group", queued(0, true))
	go func() {
		errs <- s.Record(ctx, &warden.AuditEntry{TraceID: "next", Capability: warden.CapTrade, Action: "buy", Resource: "x", Verdict: warden.Allow},
			&warden.Debit{Amount: dollar, Cap: 1000 * dollar, Since: time.Now().Add(-time.Hour)})
	}()
	waitFor("the debit to queue", queued(1, true))
	time.Sleep(time.Until(start.Add(1500 * time.Millisecond)))
	if err := chain.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	waitFor("the leader to take the debit's group", queued(0, true))
	time.Sleep(time.Until(start.Add(3000 * time.Millisecond)))
	if err := releases.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Errorf("Record: %v; want both groups stored, each within its own timeout", err)
		}
	}
	if rows, err := s.Entries(ctx, auditAll); err != nil || len(rows) != 2 {
		t.Fatalf("%d entries, %v; want 2", len(rows), err)
	}
}

// TestLeaderReturnsWithItsOwnGroup: a caller that leads a group commit
// returns once its own group is committed, and hands the lead to the
// oldest caller queued meanwhile, as the SQLite store does. Before, the
// leader committed group after group until the queue ran dry: under the
// steady load of a daemon's or proxy's clients a caller held the lead (and
// its answer) for as long as others kept coming, past a hook's timeout,
// which its host takes as no objection. Here the group queued behind the
// leader's waits on a lock; the leader's answer must not wait with it.
func TestLeaderReturnsWithItsOwnGroup(t *testing.T) {
	s, dsn := openTest(t)
	hold := func(sql string, args ...any) pgx.Tx {
		c, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close(ctx) })
		tx, err := c.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec(ctx, sql, args...); err != nil {
			t.Fatal(err)
		}
		return tx
	}
	waitFor := func(what string, ok func() bool) {
		for deadline := time.Now().Add(10 * time.Second); !ok(); time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("timed out waiting for " + what)
			}
		}
	}
	queued := func(n int) func() bool {
		return func() bool {
			s.gmu.Lock()
			defer s.gmu.Unlock()
			return s.committing && len(s.queue) == n
		}
	}
	chain := hold(`SELECT pg_advisory_xact_lock($1)`, lockChains)
	releases := hold(`LOCK TABLE spend_releases IN ACCESS EXCLUSIVE MODE`)
	lead, next := make(chan error, 1), make(chan error, 1)
	go func() {
		lead <- s.Record(ctx, &warden.AuditEntry{TraceID: "lead", Capability: warden.CapShell, Action: "exec", Resource: "make", Verdict: warden.Allow}, nil)
	}()
	waitFor("the leader to take its group", queued(0))
	go func() {
		next <- s.Record(ctx, &warden.AuditEntry{TraceID: "next", Capability: warden.CapTrade, Action: "buy", Resource: "x", Verdict: warden.Allow},
			&warden.Debit{Amount: dollar, Cap: 1000 * dollar, Since: time.Now().Add(-time.Hour)})
	}()
	waitFor("the debit to queue", queued(1))
	if err := chain.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-lead:
		if err != nil {
			t.Fatalf("the leader's Record: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the leader's Record did not return while the group queued behind it waited: it kept the lead")
	}
	if err := releases.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-next:
		if err != nil {
			t.Fatalf("the queued debit's Record: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the queued debit's Record did not return: the lead was not handed on")
	}
	if rows, err := s.Entries(ctx, auditAll); err != nil || len(rows) != 2 {
		t.Fatalf("%d entries, %v; want 2", len(rows), err)
	}
}
