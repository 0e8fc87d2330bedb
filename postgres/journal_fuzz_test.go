package postgres

import (
	"bytes"
	"testing"
	"time"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/audit"
)

// FuzzParseJournal: any bytes parse without a panic; whatever parses is a
// prefix of whole records, each of which frames again to the same bytes
// (so a replay reads back exactly what was appended).
func FuzzParseJournal(f *testing.F) {
	e := &warden.AuditEntry{ID: "id", TraceID: "t", CreatedAt: time.UnixMilli(1), Resource: "rm -rf /\x00\xff", Verdict: warden.Deny,
		Stages: []warden.StageAnswer{{Stage: "s", Verdict: warden.Deny}}}
	ev := &warden.SecurityEvent{ID: "ev", CreatedAt: time.UnixMilli(2), Type: "x", Severity: warden.SevInfo}
	whole := append(journalRecord(journalEntry, audit.AppendEntry(nil, e)), journalRecord(journalEvent, audit.AppendEvent(nil, ev))...)
	f.Add(whole)
	f.Add(whole[:len(whole)-3])
	f.Add([]byte{})
	f.Add([]byte{'E', 0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, data []byte) {
		rows, err := parseJournal(data)
		var again []byte
		for _, r := range rows {
			if r.entry != nil {
				again = append(again, journalRecord(journalEntry, audit.AppendEntry(nil, r.entry))...)
			} else {
				again = append(again, journalRecord(journalEvent, audit.AppendEvent(nil, r.event))...)
			}
		}
		if !bytes.HasPrefix(data, again) {
			t.Fatalf("the %d rows parsed (err %v) do not frame back to a prefix of the input", len(rows), err)
		}
	})
}
