package audit

import (
	"fmt"

	"github.com/agentwarden/warden"
)

// Table names a chain in a warden.ChainBreak.
const (
	TableAudit  = "audit"
	TableEvents = "security_events"
)

// A Verifier walks one chain in log order and keeps the first row that does not
// verify. Feed it every row, oldest first, with Entry or Event; it checks that
// Seq follows the previous row's without a gap, that PrevHash is the previous
// row's hash (GenesisHash for the first), and that Hash is the hash of the row's
// contents. Use NewVerifier; the zero value is not ready for use.
type Verifier struct {
	table string
	prev  string // hash of the last row that verified
	last  int64  // seq of the last row that verified
	rows  int64
	brk   *warden.ChainBreak
}

// NewVerifier returns a Verifier for the chain stored in table (TableAudit or
// TableEvents), positioned before its first row.
func NewVerifier(table string) *Verifier {
	return &Verifier{table: table, prev: GenesisHash}
}

// Entry checks the next audit row. It reports whether the chain still verifies;
// after the first break it checks nothing more and returns false.
func (v *Verifier) Entry(e *warden.AuditEntry) bool {
	return v.check(e.Seq, e.ID, e.TraceID, e.PrevHash, e.Hash, func(prev string) string { return HashEntry(prev, e) })
}

// Event checks the next security-event row, as Entry does for audit rows.
func (v *Verifier) Event(ev *warden.SecurityEvent) bool {
	return v.check(ev.Seq, ev.ID, ev.TraceID, ev.PrevHash, ev.Hash, func(prev string) string { return HashEvent(prev, ev) })
}

// Fail records a break found outside the hash chain itself (for example a
// store's detail row that belongs to no row), unless an earlier break is already
// recorded. It always returns false.
func (v *Verifier) Fail(seq int64, id, traceID, why string) bool {
	if v.brk == nil {
		v.brk = &warden.ChainBreak{Table: v.table, Seq: seq, ID: id, TraceID: traceID, Why: why}
	}
	return false
}

// Break returns the first row that did not verify, or nil.
func (v *Verifier) Break() *warden.ChainBreak { return v.brk }

// Rows returns how many rows were checked, the breaking row included.
func (v *Verifier) Rows() int64 { return v.rows }

// Head returns the hash and seq of the last row that verified (GenesisHash and 0
// before the first).
func (v *Verifier) Head() (hash string, seq int64) { return v.prev, v.last }

func (v *Verifier) check(seq int64, id, traceID, prevHash, hash string, compute func(prev string) string) bool {
	if v.brk != nil {
		return false
	}
	v.rows++
	fail := func(format string, args ...any) bool {
		return v.Fail(seq, id, traceID, fmt.Sprintf(format, args...))
	}
	switch want := v.last + 1; {
	case seq < want && v.last == 0:
		return fail("seq %d: the first row must have seq 1", seq)
	case seq < want:
		return fail("seq %d follows seq %d: rows are out of order or duplicated", seq, v.last)
	case seq == want+1:
		return fail("seq %d follows seq %d: row %d is missing", seq, v.last, want)
	case seq > want:
		return fail("seq %d follows seq %d: rows %d to %d are missing", seq, v.last, want, seq-1)
	}
	if prevHash != v.prev {
		if v.last == 0 {
			return fail("prev_hash is not the genesis hash: rows before it were removed or it was altered")
		}
		return fail("prev_hash does not match the hash of row %d: a row was removed, inserted or reordered, or this row was altered", v.last)
	}
	if got := compute(v.prev); got != hash {
		return fail("hash does not match the row's contents: the row was altered")
	}
	v.prev, v.last = hash, seq
	return true
}

// VerifyEntries walks es (in log order) and returns the first break, or nil.
func VerifyEntries(es []warden.AuditEntry) *warden.ChainBreak {
	v := NewVerifier(TableAudit)
	for i := range es {
		if !v.Entry(&es[i]) {
			break
		}
	}
	return v.Break()
}

// VerifyEvents walks evs (in log order) and returns the first break, or nil.
func VerifyEvents(evs []warden.SecurityEvent) *warden.ChainBreak {
	v := NewVerifier(TableEvents)
	for i := range evs {
		if !v.Event(&evs[i]) {
			break
		}
	}
	return v.Break()
}
