package sqlite

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentwarden/warden"
)

// benchEntry is a typical decision: a shell command with three stage answers.
func benchEntry() *warden.AuditEntry {
	return &warden.AuditEntry{
		TraceID: "0190f3a4-7b1e-7c3d-9a2b-5e6f7a8b9c0d", Capability: warden.CapShell, Action: "exec",
		Resource: "go test ./... -run TestConformance -count=1", Tool: "Bash", Tier: warden.TierConfirmOnce,
		Args:        json.RawMessage(`{"command":"go test ./... -run TestConformance -count=1","timeout":120000}`),
		Context:     "run the tests after the refactor",
		RequestedBy: "agent", Session: "8f2c1e", Host: "claude",
		Raw:     json.RawMessage(`{"session_id":"8f2c1e","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"go test ./... -run TestConformance -count=1"}}`),
		Verdict: warden.Allow, Reason: "go test is allowed in the project", Rule: "shell.allowlist",
		Duration: 412 * time.Microsecond,
		Stages: []warden.StageAnswer{
			{Stage: "killswitch", Verdict: warden.Allow, Rule: "safety.kill_switch_off", Reason: "kill switch is off", Duration: 3 * time.Microsecond},
			{Stage: "tier", Verdict: warden.Allow, Rule: "tier.granted", Reason: "tier 2 granted for this session", Duration: 8 * time.Microsecond},
			{Stage: "shellguard", Verdict: warden.Allow, Rule: "shell.allowlist", Reason: "go test is allowed in the project", Duration: 97 * time.Microsecond},
		},
	}
}

// BenchmarkRecord measures one durable Record (BEGIN IMMEDIATE, chain, insert,
// fsync of the WAL on COMMIT).
func BenchmarkRecord(b *testing.B) {
	s, _ := openTest(b)
	b.ReportAllocs()
	for b.Loop() {
		if err := s.Record(ctx, benchEntry(), nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRecordDebit measures one durable Record with a spend-cap check and
// debit in the same transaction.
func BenchmarkRecordDebit(b *testing.B) {
	s, _ := openTest(b)
	b.ReportAllocs()
	for b.Loop() {
		e := benchEntry()
		d := &warden.Debit{Amount: 1, Cap: 1 << 60, Since: time.Now().Add(-warden.SpendWindow)}
		if err := s.Record(ctx, e, d); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRecordBatch measures group commit: 100 entries per transaction.
func BenchmarkRecordBatch(b *testing.B) {
	const batch = 100
	s, _ := openTest(b)
	b.ReportAllocs()
	rows := 0
	start := time.Now()
	for b.Loop() {
		es := make([]*warden.AuditEntry, batch)
		for i := range es {
			es[i] = benchEntry()
		}
		if err := s.RecordBatch(ctx, es); err != nil {
			b.Fatal(err)
		}
		rows += batch
	}
	b.ReportMetric(float64(rows)/time.Since(start).Seconds(), "rows/s")
}

// BenchmarkOpen measures opening an existing, current database and closing it:
// the fixed cost every warden process pays before its first write.
func BenchmarkOpen(b *testing.B) {
	path := filepath.Join(b.TempDir(), "warden.db")
	s, err := Open(ctx, path)
	if err != nil {
		b.Fatal(err)
	}
	for range 10 {
		if err := s.Record(ctx, benchEntry(), nil); err != nil {
			b.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		s, err := Open(ctx, path)
		if err != nil {
			b.Fatal(err)
		}
		if err := s.Close(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkOpenRecordClose is what one warden process does with the store:
// open, record one decision durably, close.
func BenchmarkOpenRecordClose(b *testing.B) {
	path := filepath.Join(b.TempDir(), "warden.db")
	s, err := Open(ctx, path)
	if err != nil {
		b.Fatal(err)
	}
	s.Close()
	b.ReportAllocs()
	for b.Loop() {
		s, err := Open(ctx, path)
		if err != nil {
			b.Fatal(err)
		}
		if err := s.Record(ctx, benchEntry(), nil); err != nil {
			b.Fatal(err)
		}
		if err := s.Close(); err != nil {
			b.Fatal(err)
		}
	}
}

// benchEvent is a typical security event: a policy problem found at startup.
func benchEvent() *warden.SecurityEvent {
	return &warden.SecurityEvent{
		TraceID: "0190f3a4-7b1e-7c3d-9a2b-5e6f7a8b9c0d", Type: warden.EventConfigInvalid, Severity: warden.SevError,
		Summary:  "policy.yaml: line 12: shell.allow[3]: unknown key \"pattern\"",
		Metadata: json.RawMessage(`{"path":"/home/dev/.warden/policy.yaml","line":12,"field":"shell.allow[3]"}`),
	}
}

// BenchmarkAppendEvent measures one durable AppendEvent on an open store
// (BEGIN IMMEDIATE, chain, insert, fsync of the WAL on COMMIT).
func BenchmarkAppendEvent(b *testing.B) {
	s, _ := openTest(b)
	b.ReportAllocs()
	for b.Loop() {
		if err := s.AppendEvent(ctx, benchEvent()); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkOpenAppendEventClose is what a one-shot process appending an event
// paid before events were spooled: open the database, append, close.
func BenchmarkOpenAppendEventClose(b *testing.B) {
	path := filepath.Join(b.TempDir(), "warden.db")
	s, err := Open(ctx, path)
	if err != nil {
		b.Fatal(err)
	}
	s.Close()
	b.ReportAllocs()
	for b.Loop() {
		s, err := Open(ctx, path)
		if err != nil {
			b.Fatal(err)
		}
		if err := s.AppendEvent(ctx, benchEvent()); err != nil {
			b.Fatal(err)
		}
		if err := s.Close(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAppendEventSpooled is what a one-shot process appending an event
// pays now: a deferred store, one spooled frame (write and fdatasync), close.
// Every spoolDrainBytes of frames, one iteration also drains the spool.
func BenchmarkAppendEventSpooled(b *testing.B) {
	path := filepath.Join(b.TempDir(), "warden.db")
	s, err := Open(ctx, path)
	if err != nil {
		b.Fatal(err)
	}
	s.Close()
	b.ReportAllocs()
	for b.Loop() {
		s := OpenDeferred(path)
		if err := s.AppendEvent(ctx, benchEvent()); err != nil {
			b.Fatal(err)
		}
		if err := s.Close(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkVerify measures walking and rehashing a 1,000-row chain.
func BenchmarkVerify(b *testing.B) {
	s, _ := openTest(b)
	es := make([]*warden.AuditEntry, 1000)
	for i := range es {
		es[i] = benchEntry()
	}
	if err := s.RecordBatch(ctx, es); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		rep, err := s.Verify(ctx)
		if err != nil || !rep.OK() {
			b.Fatal(rep, err)
		}
	}
}

// BenchmarkEntriesUnindexedFilter measures the `warden audit` filters that
// have no index (capability, tool, verdict, requested_by) on 100,000 rows:
// "rare" finds the newest 50 of 1,000 denials spread through the log, "none"
// matches nothing and so reads every row.
func BenchmarkEntriesUnindexedFilter(b *testing.B) {
	const rows, batch = 100_000, 1_000
	s, _ := openTest(b)
	for n := 0; n < rows; n += batch {
		es := make([]*warden.AuditEntry, batch)
		for i := range es {
			es[i] = benchEntry()
			if (n+i)%100 == 0 {
				es[i].Verdict, es[i].Blocked = warden.Deny, true
			}
		}
		if err := s.RecordBatch(ctx, es); err != nil {
			b.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name string
		f    warden.AuditFilter
		want int
	}{
		{"rare", warden.AuditFilter{Verdict: "deny", Limit: 50}, 50},
		{"none", warden.AuditFilter{Capability: "nosuch", Limit: 50}, 0},
	} {
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				got, err := s.Entries(ctx, tc.f)
				if err != nil || len(got) != tc.want {
					b.Fatalf("Entries = %d rows, %v; want %d", len(got), err, tc.want)
				}
			}
		})
	}
}

// BenchmarkRecordDebitWindow is BenchmarkRecordDebit with the 24-hour window
// already holding 10 or 10,000 debits, spread over the last 23 hours, every
// tenth released. The cap check must not grow with the window: the figures
// of the two sub-benchmarks should match.
//
//	go test -run XXX -bench RecordDebitWindow -count 3 ./sqlite/
func BenchmarkRecordDebitWindow(b *testing.B) {
	for _, debits := range []int{10, 10_000} {
		b.Run(fmt.Sprintf("debits=%d", debits), func(b *testing.B) {
			s, _ := openTest(b)
			fillLedger(b, s, debits, time.Now())
			b.ReportAllocs()
			cpu0, n := cpuTime(), 0
			for b.Loop() {
				n++
				d := &warden.Debit{Amount: 1, Cap: 1 << 60, Since: time.Now().Add(-warden.SpendWindow)}
				if err := s.Record(ctx, benchEntry(), d); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(n), "cpu-µs/op")
		})
	}
}

// BenchmarkSpentSince is the cap check's read alone (no commit, no fsync, so
// the disk's noise is out of it) with 10 or 10,000 debits in the window.
func BenchmarkSpentSince(b *testing.B) {
	for _, debits := range []int{10, 10_000} {
		b.Run(fmt.Sprintf("debits=%d", debits), func(b *testing.B) {
			s, _ := openTest(b)
			now := time.Now()
			fillLedger(b, s, debits, now)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := s.SpentSince(ctx, now.Add(-warden.SpendWindow)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// fillLedger records n debits of $1 spread over the 23 hours before now and
// releases every tenth.
func fillLedger(tb testing.TB, s *Store, n int, now time.Time) {
	tb.Helper()
	step := 23 * time.Hour / time.Duration(n)
	for i := range n {
		e := benchEntry()
		e.TraceID = fmt.Sprintf("fill-%d", i)
		e.CreatedAt = now.Add(-23*time.Hour + time.Duration(i)*step)
		if err := s.Record(ctx, e, &warden.Debit{Amount: warden.MicrosPerDollar, Cap: 1 << 60, Since: e.CreatedAt.Add(-warden.SpendWindow)}); err != nil {
			tb.Fatal(err)
		}
		if i%10 == 0 {
			if err := s.Release(ctx, e.TraceID, "bench", e.CreatedAt); err != nil {
				tb.Fatal(err)
			}
		}
	}
}
