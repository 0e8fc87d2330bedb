package audittest

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/audit"
)

func testRecordFillsChain(t *testing.T, s Store) {
	prev := audit.GenesisHash
	for i := 1; i <= 3; i++ {
		e := simple(i, time.Duration(i)*time.Second)
		record(t, s, e)
		if e.Seq != int64(i) {
			t.Errorf("entry %d: Seq = %d, want %d", i, e.Seq, i)
		}
		if e.PrevHash != prev {
			t.Errorf("entry %d: PrevHash = %q, want %q", i, e.PrevHash, prev)
		}
		if want := audit.HashEntry(e.PrevHash, e); e.Hash != want {
			t.Errorf("entry %d: Hash = %q, want audit.HashEntry = %q", i, e.Hash, want)
		}
		prev = e.Hash
	}
}

func testRecordFillsIDAndTime(t *testing.T, s Store) {
	before := time.Now().Add(-time.Millisecond)
	a, b := simple(1, 0), simple(2, 0)
	a.CreatedAt, b.CreatedAt = time.Time{}, time.Time{}
	record(t, s, a)
	record(t, s, b)
	after := time.Now().Add(time.Millisecond)
	if a.ID == "" || b.ID == "" || a.ID == b.ID {
		t.Errorf("Record gave IDs %q and %q, want two distinct non-empty IDs", a.ID, b.ID)
	}
	for _, e := range []*warden.AuditEntry{a, b} {
		if e.CreatedAt.Before(before) || e.CreatedAt.After(after) {
			t.Errorf("CreatedAt = %v, want the time of Record (between %v and %v)", e.CreatedAt, before, after)
		}
		if !e.CreatedAt.Equal(audit.Timestamp(e.CreatedAt)) {
			t.Errorf("CreatedAt = %v has more than %v precision", e.CreatedAt, audit.TimePrecision)
		}
	}
	c := simple(3, 0)
	c.CreatedAt = t0.Add(1234567 * time.Nanosecond)
	record(t, s, c)
	if want := t0.Add(time.Millisecond); !c.CreatedAt.Equal(want) {
		t.Errorf("CreatedAt = %v, want %v (kept at %v precision)", c.CreatedAt, want, audit.TimePrecision)
	}
	sameEntries(t, "Entries", entries(t, s, warden.AuditFilter{}), []*warden.AuditEntry{a, b, c})
}

func testRoundTrip(t *testing.T, s Store) {
	e := full()
	want := clone(e)
	record(t, s, e)
	want.Seq, want.PrevHash, want.Hash = e.Seq, e.PrevHash, e.Hash
	want.Output = audit.Truncate(want.Output)
	if len(want.Output) > warden.OutputLimit || e.Output != want.Output {
		t.Errorf("Record kept %d output bytes, want audit.Truncate's %d", len(e.Output), len(want.Output))
	}
	if d := diffEntry(e, want); len(d) > 0 {
		t.Errorf("Record changed the entry beyond Seq, PrevHash, Hash and Output: %v", d)
	}
	sameEntries(t, "Entries after Record", entries(t, s, warden.AuditFilter{}), []*warden.AuditEntry{want})
	verifyOK(t, s, 1, 0)
}

func testRoundTripEmpty(t *testing.T, s Store) {
	// The zero request, denied: every optional field empty, no stages.
	e := &warden.AuditEntry{CreatedAt: t0}
	record(t, s, e)
	got := entries(t, s, warden.AuditFilter{})
	sameEntries(t, "Entries", got, []*warden.AuditEntry{e})
	if len(got) == 1 && got[0].Verdict != warden.Deny {
		t.Errorf("zero entry read back with verdict %v, want deny", got[0].Verdict)
	}
}

func testRecordRefusesInvalid(t *testing.T, s Store) {
	record(t, s, simple(1, 0))
	for _, tc := range []struct {
		name string
		e    *warden.AuditEntry
	}{
		{"bad verdict", &warden.AuditEntry{Verdict: 42}},
		{"bad stage verdict", &warden.AuditEntry{Stages: []warden.StageAnswer{{Stage: "x", Verdict: 42}}}},
		{"bad args JSON", &warden.AuditEntry{Args: json.RawMessage(`{"a":`)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := s.Record(ctx, tc.e, nil); err == nil {
				t.Fatalf("Record(%s) = nil, want an error", tc.name)
			}
			if tc.e.Seq != 0 || tc.e.Hash != "" {
				t.Errorf("failed Record set Seq=%d Hash=%q, want them zero", tc.e.Seq, tc.e.Hash)
			}
		})
	}
	if n := len(entries(t, s, warden.AuditFilter{})); n != 1 {
		t.Errorf("%d entries after refused Records, want 1", n)
	}
	verifyOK(t, s, 1, 0)
}

func testRecordDuplicateID(t *testing.T, s Store) {
	a := simple(1, 0)
	a.ID = "0190f3a4-0000-7000-8000-00000000000a"
	record(t, s, a)
	b := simple(2, time.Second)
	b.ID = a.ID
	if err := s.Record(ctx, b, nil); err == nil {
		t.Fatal("Record with a duplicate ID = nil, want an error")
	}
	if b.Seq != 0 || b.Hash != "" {
		t.Errorf("failed Record set Seq=%d Hash=%q, want them zero", b.Seq, b.Hash)
	}
	c := simple(3, 2*time.Second)
	record(t, s, c)
	if c.Seq != 2 || c.PrevHash != a.Hash {
		t.Errorf("after a failed Record the next entry got seq %d prev %q, want seq 2 chained to seq 1", c.Seq, c.PrevHash)
	}
	verifyOK(t, s, 2, 0)
}

func testRecordCanceled(t *testing.T, s Store) {
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	e := simple(1, 0)
	if err := s.Record(cctx, e, &warden.Debit{Amount: 1, Cap: 10}); err == nil {
		t.Fatal("Record with a canceled context = nil, want an error")
	}
	if n := len(entries(t, s, warden.AuditFilter{})); n != 0 {
		t.Errorf("%d entries after a canceled Record, want 0", n)
	}
	if got := spentSince(t, s, time.Time{}); got != 0 {
		t.Errorf("ledger holds $%s after a canceled Record, want 0", got)
	}
}

func testRecordBatch(t *testing.T, s Store) {
	if err := s.RecordBatch(ctx, nil); err != nil {
		t.Fatalf("RecordBatch(nil): %v", err)
	}
	first := simple(1, 0)
	record(t, s, first)
	batch := []*warden.AuditEntry{simple(2, time.Second), full(), simple(4, 3*time.Second)}
	batch[2].CreatedAt = time.Time{}
	if err := s.RecordBatch(ctx, batch); err != nil {
		t.Fatalf("RecordBatch: %v", err)
	}
	prev := first.Hash
	for i, e := range batch {
		if e.Seq != int64(i+2) || e.PrevHash != prev || e.Hash != audit.HashEntry(prev, e) || e.ID == "" || e.CreatedAt.IsZero() {
			t.Errorf("batch[%d]: seq %d prev %q hash %q id %q created %v; want seq %d chained to the previous entry, ID and time filled",
				i, e.Seq, e.PrevHash, e.Hash, e.ID, e.CreatedAt, i+2)
		}
		prev = e.Hash
	}
	last := simple(5, 4*time.Second)
	record(t, s, last)
	if last.Seq != 5 || last.PrevHash != batch[2].Hash {
		t.Errorf("entry after the batch: seq %d prev %q, want seq 5 chained to the batch", last.Seq, last.PrevHash)
	}
	sameEntries(t, "Entries", entries(t, s, warden.AuditFilter{}), append([]*warden.AuditEntry{first}, append(batch, last)...))

	// A batch with one invalid entry stores none of them.
	bad := []*warden.AuditEntry{simple(6, 5*time.Second), {Verdict: 99}}
	if err := s.RecordBatch(ctx, bad); err == nil {
		t.Fatal("RecordBatch with an invalid entry = nil, want an error")
	}
	if bad[0].Seq != 0 || bad[0].Hash != "" {
		t.Errorf("failed RecordBatch set Seq=%d Hash=%q on its valid entry, want them zero", bad[0].Seq, bad[0].Hash)
	}
	if n := len(entries(t, s, warden.AuditFilter{})); n != 5 {
		t.Errorf("%d entries after a failed batch, want 5", n)
	}
	verifyOK(t, s, 5, 0)
}
