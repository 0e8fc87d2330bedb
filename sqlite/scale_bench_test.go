package sqlite

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentwarden/warden"
	"github.com/google/uuid"
)

// auditRows are the audit log sizes BenchmarkRecordAtScale runs at:
// $WARDEN_BENCH_AUDIT_ROWS (comma-separated), else 1,000 and 100,000. A
// decision must cost the same at any size (issue 26: 10 million rows as at
// 1,000); filling takes about 25 s and 1.2 GB per million rows, so the
// large sizes are asked for explicitly (in any order, repeated to interleave
// them):
//
//	WARDEN_BENCH_AUDIT_ROWS=1000,1000000,10000000 go test -run XXX -bench RecordAtScale -benchtime 2000x -timeout 2h ./sqlite/
func auditRows(tb testing.TB) []int {
	env := os.Getenv("WARDEN_BENCH_AUDIT_ROWS")
	if env == "" {
		return []int{1_000, 100_000}
	}
	var rows []int
	for _, f := range strings.Split(env, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 0 {
			tb.Fatalf("WARDEN_BENCH_AUDIT_ROWS=%q: %q is not a row count", env, f)
		}
		rows = append(rows, n)
	}
	return rows
}

// fillAudit appends n decisions (benchEntry's shape, each with its own
// time-ordered trace id, as the gate gives them) in batches of 1,000.
func fillAudit(tb testing.TB, s *Store, n int) {
	tb.Helper()
	for done := 0; done < n; {
		es := make([]*warden.AuditEntry, min(1000, n-done))
		for i := range es {
			es[i] = benchEntry()
			es[i].TraceID = uuid.Must(uuid.NewV7()).String()
		}
		if err := s.RecordBatch(ctx, es); err != nil {
			tb.Fatal(err)
		}
		done += len(es)
	}
}

// fsyncFile writes the file at path to the disk.
func fsyncFile(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// BenchmarkRecordAtScale is one durable decision (BenchmarkRecord, with a
// fresh trace id) appended to an audit log that already holds 1,000, 100,000
// or more rows, on a store kept open (a daemon) and on one opened for the
// decision and closed after it (a one-shot process that must open SQLite: a
// debit, a drain of the spool). Both must stay flat as the log grows.
// cpu-µs/op is the process's CPU time per decision: the fsync's wait, which
// dominates ns/op on a busy disk, is not in it.
func BenchmarkRecordAtScale(b *testing.B) {
	for _, rows := range auditRows(b) {
		path := filepath.Join(b.TempDir(), "warden.db")
		s, err := Open(ctx, path)
		if err != nil {
			b.Fatal(err)
		}
		fillAudit(b, s, rows)
		// The fill leaves up to gigabytes of dirty pages; written back
		// during the timed loop, they would be charged to its fsyncs.
		for _, f := range []string{path, path + "-wal"} {
			if err := fsyncFile(f); err != nil {
				b.Fatal(err)
			}
		}
		entry := func() *warden.AuditEntry {
			e := benchEntry()
			e.TraceID = uuid.Must(uuid.NewV7()).String()
			return e
		}
		b.Run(fmt.Sprintf("rows=%d/open", rows), func(b *testing.B) {
			b.ReportAllocs()
			cpu0, n := cpuTime(), 0
			for b.Loop() {
				n++
				if err := s.Record(ctx, entry(), nil); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(n), "cpu-µs/op")
		})
		if err := s.Close(); err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("rows=%d/open-record-close", rows), func(b *testing.B) {
			b.ReportAllocs()
			cpu0, n := cpuTime(), 0
			for b.Loop() {
				n++
				s, err := Open(ctx, path)
				if err != nil {
					b.Fatal(err)
				}
				if err := s.Record(ctx, entry(), &warden.Debit{Amount: 1, Cap: 1 << 60, Since: time.Now().Add(-warden.SpendWindow)}); err != nil {
					b.Fatal(err)
				}
				if err := s.Close(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(n), "cpu-µs/op")
		})
		os.Remove(path)
	}
}
