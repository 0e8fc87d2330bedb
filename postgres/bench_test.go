package postgres

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/internal/pgtest"
)

// benchStore opens a store on a durable cluster of the benchmark's own
// (fsync on), as a daemon opens it.
func benchStore(b *testing.B) *Store {
	b.Setenv("WARDEN_PG_DURABLE", "1")
	c := pgtest.NewCluster(b)
	dsn := c.Database(b, "warden")
	if _, _, err := Migrate(ctx, dsn, ""); err != nil {
		b.Fatal(err)
	}
	s, err := Open(ctx, dsn, Options{Key: testKey, LongLived: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}

// BenchmarkRecordParallel is Record without a debit from 32 goroutines
// (group commit shares their transactions).
//
//	go test -run XXX -bench 'RecordParallel|RecordDebitContended' -benchtime 5000x ./postgres/
func BenchmarkRecordParallel(b *testing.B) {
	s := benchStore(b)
	var n atomic.Int64
	b.SetParallelism(16)
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			e := &warden.AuditEntry{TraceID: fmt.Sprint(n.Add(1)), Capability: warden.CapTool, Action: "call", Resource: "get_price", Verdict: warden.Allow}
			if err := s.Record(ctx, e, nil); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "records/s")
}

// BenchmarkRecordDebitContended is Record with a $1 debit against one cap
// from 32 goroutines: every one checks and debits the same ledger under the
// fleet's lock.
func BenchmarkRecordDebitContended(b *testing.B) {
	s := benchStore(b)
	var n atomic.Int64
	b.SetParallelism(16)
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			e := &warden.AuditEntry{TraceID: fmt.Sprint(n.Add(1)), Capability: warden.CapTrade, Action: "buy", Resource: "WETH", Verdict: warden.Allow}
			d := &warden.Debit{Amount: dollar, Cap: 1 << 50, Since: time.Now().Add(-warden.SpendWindow)}
			if err := s.Record(ctx, e, d); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "debits/s")
}
