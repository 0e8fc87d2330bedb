package sqlite

import (
	"path/filepath"
	"testing"
)

// The anchor's cost, beside the benchmarks without one (see
// docs/benchmarks.md):
//
//	go test -run XXX -bench 'Record$|RecordAnchored$|RecordSpooled' -count 5 ./sqlite/

// BenchmarkRecordAnchored is BenchmarkRecord in a home's store: the file
// identity check before the transaction, both chain heads read inside it,
// a checkpoint every CheckpointEvery rows, the anchor's pwrite after it.
func BenchmarkRecordAnchored(b *testing.B) {
	h := newAnchoredHome(b)
	s := h.mustOpen(b)
	b.ReportAllocs()
	for b.Loop() {
		if err := s.Record(ctx, benchEntry(), nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRecordSpooled is what a one-shot `warden check` pays for its
// audit record: a deferred store, one spooled frame (write and
// fdatasync), close. Every spoolDrainBytes, one iteration also drains.
func BenchmarkRecordSpooled(b *testing.B) {
	path := filepath.Join(b.TempDir(), "warden.db")
	s, err := Open(ctx, path)
	if err != nil {
		b.Fatal(err)
	}
	s.Close()
	b.ReportAllocs()
	for b.Loop() {
		s := OpenDeferred(path)
		if err := s.Record(ctx, benchEntry(), nil); err != nil {
			b.Fatal(err)
		}
		if err := s.Close(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRecordSpooledAnchored is BenchmarkRecordSpooled in a home's
// store: plus a stat of the database and a read of the anchor before, and
// the spool's claim read and written under the spool's lock.
func BenchmarkRecordSpooledAnchored(b *testing.B) {
	h := newAnchoredHome(b)
	b.ReportAllocs()
	for b.Loop() {
		s := OpenDeferredWith(h.db, h.opt)
		if err := s.Record(ctx, benchEntry(), nil); err != nil {
			b.Fatal(err)
		}
		if err := s.Close(); err != nil {
			b.Fatal(err)
		}
	}
}
