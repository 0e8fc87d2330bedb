package audit

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agentwarden/warden"
)

// chain builds n chained entries the way a store does.
func chain(n int) []warden.AuditEntry {
	es := make([]warden.AuditEntry, n)
	prev := GenesisHash
	for i := range es {
		e := &es[i]
		e.Seq = int64(i + 1)
		e.ID = fmt.Sprintf("id-%d", i+1)
		e.TraceID = fmt.Sprintf("tr-%d", i+1)
		e.CreatedAt = time.UnixMilli(int64(1000 * i)).UTC()
		e.Capability, e.Action, e.Resource = "shell", "exec", fmt.Sprintf("echo %d", i)
		e.Stages = []warden.StageAnswer{{Stage: "shellguard", Verdict: warden.Allow, Rule: "shell.ok"}}
		e.PrevHash = prev
		e.Hash = HashEntry(prev, e)
		prev = e.Hash
	}
	return es
}

func TestVerifyEntries(t *testing.T) {
	for _, tc := range []struct {
		name    string
		tamper  func([]warden.AuditEntry) []warden.AuditEntry
		wantSeq int64 // 0: verifies
		wantWhy string
	}{
		{name: "intact", tamper: func(es []warden.AuditEntry) []warden.AuditEntry { return es }},
		{name: "empty", tamper: func([]warden.AuditEntry) []warden.AuditEntry { return nil }},
		{name: "altered field", wantSeq: 3, wantWhy: "hash does not match",
			tamper: func(es []warden.AuditEntry) []warden.AuditEntry { es[2].Resource = "rm -rf /"; return es }},
		{name: "altered stage", wantSeq: 2, wantWhy: "hash does not match",
			tamper: func(es []warden.AuditEntry) []warden.AuditEntry { es[1].Stages[0].Verdict = warden.Deny; return es }},
		{name: "altered and rehashed", wantSeq: 4, wantWhy: "prev_hash does not match the hash of row 3",
			tamper: func(es []warden.AuditEntry) []warden.AuditEntry {
				es[2].Verdict = warden.Allow
				es[2].Hash = HashEntry(es[2].PrevHash, &es[2])
				return es
			}},
		{name: "middle row removed", wantSeq: 4, wantWhy: "row 3 is missing",
			tamper: func(es []warden.AuditEntry) []warden.AuditEntry { return append(es[:2:2], es[3:]...) }},
		{name: "two rows removed", wantSeq: 5, wantWhy: "rows 3 to 4 are missing",
			tamper: func(es []warden.AuditEntry) []warden.AuditEntry { return append(es[:2:2], es[4:]...) }},
		{name: "first row removed", wantSeq: 2, wantWhy: "row 1 is missing",
			tamper: func(es []warden.AuditEntry) []warden.AuditEntry { return es[1:] }},
		{name: "removed and renumbered", wantSeq: 3, wantWhy: "prev_hash does not match the hash of row 2",
			tamper: func(es []warden.AuditEntry) []warden.AuditEntry {
				es = append(es[:2:2], es[3:]...)
				for i := range es {
					es[i].Seq = int64(i + 1)
				}
				return es
			}},
		{name: "rows swapped", wantSeq: 4, wantWhy: "row 3 is missing",
			tamper: func(es []warden.AuditEntry) []warden.AuditEntry { es[2], es[3] = es[3], es[2]; return es }},
		// A forged row chained onto row 2 verifies itself; the row after it cannot.
		{name: "row inserted", wantSeq: 4, wantWhy: "prev_hash does not match the hash of row 3",
			tamper: func(es []warden.AuditEntry) []warden.AuditEntry {
				fake := es[2]
				fake.Resource = "curl evil"
				fake.Hash = HashEntry(fake.PrevHash, &fake)
				out := append(es[:2:2], fake)
				for _, e := range es[2:] {
					e.Seq++
					out = append(out, e)
				}
				return out
			}},
		{name: "duplicated row", wantSeq: 4, wantWhy: "out of order or duplicated",
			tamper: func(es []warden.AuditEntry) []warden.AuditEntry { return append(es[:4:4], es[3:]...) }},
		{name: "forged first row", wantSeq: 1, wantWhy: "genesis",
			tamper: func(es []warden.AuditEntry) []warden.AuditEntry {
				es[0].PrevHash = strings.Repeat("f", 64)
				es[0].Hash = HashEntry(es[0].PrevHash, &es[0])
				return es
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			es := tc.tamper(chain(6))
			brk := VerifyEntries(es)
			switch {
			case tc.wantSeq == 0 && brk != nil:
				t.Fatalf("VerifyEntries = %+v, want no break", *brk)
			case tc.wantSeq == 0:
			case brk == nil:
				t.Fatalf("VerifyEntries found no break, want seq %d", tc.wantSeq)
			case brk.Seq != tc.wantSeq || !strings.Contains(brk.Why, tc.wantWhy) || brk.Table != TableAudit:
				t.Fatalf("VerifyEntries = %+v, want table %s seq %d why containing %q", *brk, TableAudit, tc.wantSeq, tc.wantWhy)
			}
			if brk != nil && brk.ID == "" {
				t.Errorf("break does not name the row's id")
			}
		})
	}
}

func TestVerifierStopsAtFirstBreak(t *testing.T) {
	es := chain(5)
	es[1].Reason = "x"
	es[3].Reason = "y"
	v := NewVerifier(TableAudit)
	for i := range es {
		v.Entry(&es[i])
	}
	if b := v.Break(); b == nil || b.Seq != 2 {
		t.Fatalf("Break() = %+v, want seq 2", b)
	}
	if v.Rows() != 2 {
		t.Errorf("Rows() = %d, want 2 (checking stops at the break)", v.Rows())
	}
	if h, seq := v.Head(); seq != 1 || h != es[0].Hash {
		t.Errorf("Head() = %s, %d; want row 1", h, seq)
	}
}

func TestVerifyEvents(t *testing.T) {
	evs := make([]warden.SecurityEvent, 3)
	prev := GenesisHash
	for i := range evs {
		evs[i] = warden.SecurityEvent{Seq: int64(i + 1), ID: fmt.Sprint(i), Type: warden.EventConfigChanged, Severity: warden.SevInfo, PrevHash: prev}
		evs[i].Hash = HashEvent(prev, &evs[i])
		prev = evs[i].Hash
	}
	if b := VerifyEvents(evs); b != nil {
		t.Fatalf("VerifyEvents = %+v, want no break", *b)
	}
	evs[1].Severity = warden.SevCritical
	if b := VerifyEvents(evs); b == nil || b.Seq != 2 || b.Table != TableEvents {
		t.Fatalf("VerifyEvents = %+v, want a break at security_events seq 2", b)
	}
}
