package postgres

import (
	"fmt"
	"testing"
	"time"

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
