// Package audittest is the conformance suite for warden's audit stores. Every
// backend (sqlite now, postgres later) runs the same Run from its own tests, so
// they all keep the contracts of warden.AuditStore and warden.Ledger the same
// way:
//
//	func TestConformance(t *testing.T) {
//		audittest.Run(t, func(t *testing.T) audittest.Store { return openTestStore(t) })
//	}
//
// The suite pins down what store.go leaves implicit: Seq starts at 1 and has no
// gaps; Record fills an empty ID and a zero CreatedAt (now) and keeps CreatedAt
// at audit.TimePrecision; Output is cut by audit.Truncate; AuditFilter.Since is
// inclusive and Until exclusive; an unknown verdict or severity name in a filter
// is an error; a Debit's ledger row is dated at the entry's CreatedAt and a
// negative amount is refused; after any error from Record the entry's Seq,
// PrevHash and Hash are left zero.
//
// What the interfaces cannot observe (append-only enforcement, tamper
// detection on stored rows, durability across a crash) each backend tests
// itself.
package audittest

import (
	"context"
	"testing"
	"time"

	"github.com/agentwarden/warden"
)

// Store is what a backend under test provides: the audit log, the ledger and
// the rate slots.
type Store interface {
	warden.AuditStore
	warden.Ledger
	warden.SlotReader
}

// Run runs the conformance suite. open must return a new, empty store for each
// call and arrange for it to be closed when t ends.
func Run(t *testing.T, open func(t *testing.T) Store) {
	t.Helper()
	tests := []struct {
		name string
		fn   func(t *testing.T, s Store)
	}{
		{"RecordFillsChain", testRecordFillsChain},
		{"RecordFillsIDAndTime", testRecordFillsIDAndTime},
		{"RoundTrip", testRoundTrip},
		{"RoundTripEmpty", testRoundTripEmpty},
		{"RecordRefusesInvalid", testRecordRefusesInvalid},
		{"RecordDuplicateID", testRecordDuplicateID},
		{"RecordCanceled", testRecordCanceled},
		{"RecordBatch", testRecordBatch},
		{"Filters", testFilters},
		{"FilterBadVerdict", testFilterBadVerdict},
		{"Events", testEvents},
		{"EventFilters", testEventFilters},
		{"EventRefusesInvalid", testEventRefusesInvalid},
		{"VerifyFresh", testVerifyFresh},
		{"VerifyPopulated", testVerifyPopulated},
		{"DebitFits", testDebitFits},
		{"DebitExceeds", testDebitExceeds},
		{"DebitBoundary", testDebitBoundary},
		{"DebitWindow", testDebitWindow},
		{"DebitDatedAtEntry", testDebitDatedAtEntry},
		{"DebitNegative", testDebitNegative},
		{"DebitAfterReleaseRefused", testDebitAfterReleaseRefused},
		{"ConcurrentDebits", testConcurrentDebits},
		{"SlotLimits", testSlotLimits},
		{"SlotWindowSlides", testSlotWindowSlides},
		{"SlotHoldLapses", testSlotHoldLapses},
		{"SlotHoldBecomesSpent", testSlotHoldBecomesSpent},
		{"SlotHoldsBounded", testSlotHoldsBounded},
		{"SlotReplay", testSlotReplay},
		{"SlotRelease", testSlotRelease},
		{"ConcurrentSlots", testConcurrentSlots},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, open(t)) })
	}
}

var ctx = context.Background()

// entries returns every entry, failing the test on error.
func entries(t *testing.T, s Store, f warden.AuditFilter) []warden.AuditEntry {
	t.Helper()
	es, err := s.Entries(ctx, f)
	if err != nil {
		t.Fatalf("Entries(%+v): %v", f, err)
	}
	return es
}

// record records e without a debit, failing the test on error.
func record(t *testing.T, s Store, e *warden.AuditEntry) {
	t.Helper()
	if err := s.Record(ctx, e, nil); err != nil {
		t.Fatalf("Record(%s %s %s): %v", e.Capability, e.Action, e.Resource, err)
	}
}

// verifyOK fails the test unless Verify reports both chains intact with the
// given row counts.
func verifyOK(t *testing.T, s Store, auditRows, eventRows int64) {
	t.Helper()
	rep, err := s.Verify(ctx)
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	if !rep.OK() {
		t.Fatalf("Verify found a break in an untouched store: %+v", *rep.FirstBreak)
	}
	if rep.AuditRows != auditRows || rep.EventRows != eventRows {
		t.Fatalf("Verify counted %d audit and %d event rows, want %d and %d", rep.AuditRows, rep.EventRows, auditRows, eventRows)
	}
}

// spentSince returns s.SpentSince(since), failing the test on error.
func spentSince(t *testing.T, s Store, since time.Time) warden.USD {
	t.Helper()
	u, err := s.SpentSince(ctx, since)
	if err != nil {
		t.Fatalf("SpentSince(%v): %v", since, err)
	}
	return u
}
