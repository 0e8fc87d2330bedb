package audittest

import (
	"errors"
	"testing"
	"time"

	"github.com/agentwarden/warden"
)

const dollar = warden.USD(warden.MicrosPerDollar)

// debitEntry returns a fund-moving trade entry at t0 + offset.
func debitEntry(n int, offset time.Duration) *warden.AuditEntry {
	e := simple(n, offset)
	e.Capability, e.Action, e.Resource = warden.CapTrade, "swap", "SOL"
	return e
}

// window is the spend window the debit cases use: the 24 hours before t0+1h.
var window = t0.Add(time.Hour - warden.SpendWindow)

func testDebitFits(t *testing.T, s Store) {
	if got := spentSince(t, s, time.Time{}); got != 0 {
		t.Fatalf("SpentSince on an empty ledger = $%s, want 0", got)
	}
	record(t, s, simple(1, 0)) // no debit: the ledger does not move
	e := debitEntry(2, time.Minute)
	if err := s.Record(ctx, e, &warden.Debit{Amount: 40 * dollar, Cap: 100 * dollar, Since: window}); err != nil {
		t.Fatalf("Record with a debit that fits: %v", err)
	}
	if got := spentSince(t, s, window); got != 40*dollar {
		t.Errorf("SpentSince = $%s, want $40", got)
	}
	e2 := debitEntry(3, 2*time.Minute)
	if err := s.Record(ctx, e2, &warden.Debit{Amount: 12_345_678, Cap: 100 * dollar, Since: window}); err != nil {
		t.Fatalf("second debit: %v", err)
	}
	if got, want := spentSince(t, s, window), 40*dollar+12_345_678; got != want {
		t.Errorf("SpentSince = $%s, want $%s (the sum of the debits)", got, want)
	}
	if n := len(entries(t, s, warden.AuditFilter{})); n != 3 {
		t.Errorf("%d entries, want 3 (a debit records its entry)", n)
	}
	verifyOK(t, s, 3, 0)
}

func testDebitExceeds(t *testing.T, s Store) {
	ok := debitEntry(1, 0)
	if err := s.Record(ctx, ok, &warden.Debit{Amount: 70 * dollar, Cap: 100 * dollar, Since: window}); err != nil {
		t.Fatal(err)
	}
	e := debitEntry(2, time.Minute)
	err := s.Record(ctx, e, &warden.Debit{Amount: 31 * dollar, Cap: 100 * dollar, Since: window})
	var capErr *warden.CapExceededError
	if !errors.As(err, &capErr) {
		t.Fatalf("Record over the cap = %v, want a *warden.CapExceededError", err)
	}
	if capErr.Spent != 70*dollar || capErr.Amount != 31*dollar || capErr.Cap != 100*dollar {
		t.Errorf("CapExceededError = %+v, want spent $70, amount $31, cap $100", *capErr)
	}
	if e.Seq != 0 || e.Hash != "" || e.PrevHash != "" {
		t.Errorf("refused Record set Seq=%d PrevHash=%q Hash=%q, want them zero", e.Seq, e.PrevHash, e.Hash)
	}
	if got := spentSince(t, s, window); got != 70*dollar {
		t.Errorf("SpentSince after a refused debit = $%s, want $70", got)
	}
	if es := entries(t, s, warden.AuditFilter{}); len(es) != 1 {
		t.Errorf("%d entries after a refused debit, want 1: nothing of the refused entry may be stored", len(es))
	}
	// The refused entry can still be recorded as a denial, without a debit.
	e.Verdict, e.Blocked, e.Reason, e.Rule = warden.Deny, true, capErr.Error(), "finance.daily_cap"
	record(t, s, e)
	if e.Seq != 2 || e.PrevHash != ok.Hash {
		t.Errorf("denial after a refused debit: seq %d, want 2 chained to seq 1", e.Seq)
	}
	verifyOK(t, s, 2, 0)
}

func testDebitBoundary(t *testing.T, s Store) {
	for i, amount := range []warden.USD{60 * dollar, 40 * dollar} {
		if err := s.Record(ctx, debitEntry(i, time.Duration(i)*time.Minute), &warden.Debit{Amount: amount, Cap: 100 * dollar, Since: window}); err != nil {
			t.Fatalf("debit %d ($%s) reaching exactly the cap: %v; want it to fit (the cap is inclusive)", i, amount, err)
		}
	}
	var capErr *warden.CapExceededError
	err := s.Record(ctx, debitEntry(3, 3*time.Minute), &warden.Debit{Amount: 1, Cap: 100 * dollar, Since: window})
	if !errors.As(err, &capErr) {
		t.Fatalf("one micro-dollar over the cap = %v, want *warden.CapExceededError", err)
	}
	// A zero amount always fits, even at the cap.
	if err := s.Record(ctx, debitEntry(4, 4*time.Minute), &warden.Debit{Amount: 0, Cap: 100 * dollar, Since: window}); err != nil {
		t.Errorf("zero debit at the cap: %v", err)
	}
	if got := spentSince(t, s, window); got != 100*dollar {
		t.Errorf("SpentSince = $%s, want $100", got)
	}
}

func testDebitWindow(t *testing.T, s Store) {
	now := t0.Add(48 * time.Hour)
	since := now.Add(-warden.SpendWindow)
	old := debitEntry(1, 48*time.Hour-25*time.Hour) // 25 hours before now: outside the window
	if err := s.Record(ctx, old, &warden.Debit{Amount: 90 * dollar, Cap: 1000 * dollar, Since: old.CreatedAt.Add(-warden.SpendWindow)}); err != nil {
		t.Fatal(err)
	}
	edge := debitEntry(2, 48*time.Hour-warden.SpendWindow) // exactly at the window's start: inside
	if err := s.Record(ctx, edge, &warden.Debit{Amount: 5 * dollar, Cap: 1000 * dollar, Since: edge.CreatedAt.Add(-warden.SpendWindow)}); err != nil {
		t.Fatal(err)
	}
	e := debitEntry(3, 48*time.Hour)
	if err := s.Record(ctx, e, &warden.Debit{Amount: 90 * dollar, Cap: 100 * dollar, Since: since}); err != nil {
		t.Fatalf("debit whose window excludes an older debit: %v; want it to fit ($5 + $90 <= $100)", err)
	}
	if got := spentSince(t, s, since); got != 95*dollar {
		t.Errorf("SpentSince(window) = $%s, want $95", got)
	}
	if got := spentSince(t, s, since.Add(time.Millisecond)); got != 90*dollar {
		t.Errorf("SpentSince(just after the window start) = $%s, want $90", got)
	}
	if got := spentSince(t, s, now.Add(-48*time.Hour)); got != 185*dollar {
		t.Errorf("SpentSince(48h) = $%s, want $185", got)
	}
}

func testDebitDatedAtEntry(t *testing.T, s Store) {
	e := debitEntry(1, 5*time.Hour+7*time.Millisecond)
	if err := s.Record(ctx, e, &warden.Debit{Amount: 3 * dollar, Cap: 10 * dollar, Since: window}); err != nil {
		t.Fatal(err)
	}
	if got := spentSince(t, s, e.CreatedAt); got != 3*dollar {
		t.Errorf("SpentSince(entry time) = $%s, want $3: the ledger row is dated at the entry's CreatedAt", got)
	}
	if got := spentSince(t, s, e.CreatedAt.Add(time.Millisecond)); got != 0 {
		t.Errorf("SpentSince(entry time + 1ms) = $%s, want 0", got)
	}
	if got := spentSince(t, s, e.CreatedAt.Add(time.Microsecond)); got != 0 {
		t.Errorf("SpentSince(entry time + 1µs) = $%s, want 0", got)
	}
}

func testDebitNegative(t *testing.T, s Store) {
	e := debitEntry(1, 0)
	err := s.Record(ctx, e, &warden.Debit{Amount: -5 * dollar, Cap: 100 * dollar, Since: window})
	if err == nil {
		t.Fatal("Record with a negative debit = nil, want an error")
	}
	var capErr *warden.CapExceededError
	if errors.As(err, &capErr) {
		t.Errorf("negative debit reported as %v, want an invalid-input error", err)
	}
	if n := len(entries(t, s, warden.AuditFilter{})); n != 0 {
		t.Errorf("%d entries after a refused negative debit, want 0", n)
	}
}

// testDebitAfterReleaseRefused: a release gives back every ledger row of its
// trace, so a later debit under the same trace id would be free (left out of
// the sum); the store refuses it (EConflict), stores nothing of it, and the
// window's spend stays what it was.
func testDebitAfterReleaseRefused(t *testing.T, s Store) {
	first := debitEntry(1, 0)
	if err := s.Record(ctx, first, &warden.Debit{Amount: 30 * dollar, Cap: 100 * dollar, Since: window}); err != nil {
		t.Fatal(err)
	}
	if err := s.Release(ctx, first.TraceID, "the swap failed", t0.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	again := debitEntry(2, 2*time.Minute)
	again.TraceID = first.TraceID
	err := s.Record(ctx, again, &warden.Debit{Amount: 50 * dollar, Cap: 100 * dollar, Since: window})
	if warden.ErrorCodeOf(err) != warden.EConflict {
		t.Fatalf("a debit under a released trace: %v; want EConflict", err)
	}
	if again.Seq != 0 || again.Hash != "" {
		t.Errorf("the refused debit's entry got seq %d, hash %q; want nothing stored", again.Seq, again.Hash)
	}
	if got := spentSince(t, s, window); got != 0 {
		t.Errorf("SpentSince = $%s, want $0 (released, and the reuse refused)", got)
	}
	if n := len(entries(t, s, warden.AuditFilter{TraceID: first.TraceID})); n != 1 {
		t.Errorf("%d entries under the trace, want 1", n)
	}
}
