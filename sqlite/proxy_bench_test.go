package sqlite

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/agentwarden/warden"
)

// BenchmarkProxyPattern stores what the egress proxy stores for each
// request, from 16 clients at once: the decision (Record, waited for, as
// before an answer), then its egress_request event (QueueEvent, waited for
// off the client's path, as after the answer); decision-only leaves the
// event out, to show what it costs; proxy-row stores, decision only, the
// row the proxy really stores (its seven stage answers, its args and
// session, a trace id of its own), in a store opened as the proxy opens
// it (anchor and checkpoint key). It reports the process's CPU
// a request, the group commits a request, and the 50th and 99th percentile
// of the decision's wait (what a client waits before its answer).
func BenchmarkProxyPattern(b *testing.B) {
	b.Run("decision+event", func(b *testing.B) { benchProxyPattern(b, true, false) })
	b.Run("decision-only", func(b *testing.B) { benchProxyPattern(b, false, false) })
	b.Run("proxy-row", func(b *testing.B) { benchProxyPattern(b, false, true) })
}

func benchProxyPattern(b *testing.B, events, proxyRow bool) {
	// Long-lived, as the proxy's store is.
	dir := b.TempDir()
	opt := Options{LongLived: true}
	if proxyRow {
		opt.Create, opt.Anchor, opt.Key = true, filepath.Join(dir, "audit.anchor"), filepath.Join(dir, "audit.key")
	}
	s, err := OpenWith(ctx, filepath.Join(dir, "warden.db"), opt)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	const clients = 16
	var (
		waits sync.WaitGroup
		next  = make(chan int)
		done  sync.WaitGroup
		mu    sync.Mutex
		lats  []time.Duration
	)
	batches0, cpu0 := s.batches.Load(), cpuTime()
	b.ResetTimer()
	for range clients {
		done.Add(1)
		go func() {
			defer done.Done()
			var mine []time.Duration
			defer func() {
				mu.Lock()
				lats = append(lats, mine...)
				mu.Unlock()
			}()
			for i := range next {
				e := benchEntry()
				e.Capability, e.Action, e.Resource, e.Tool = warden.CapNetwork, "fetch", "http://127.0.0.1:18080", ""
				if proxyRow {
					e = proxyEntry()
				}
				t0 := time.Now()
				if err := s.Record(context.Background(), e, nil); err != nil {
					b.Error(err)
					return
				}
				mine = append(mine, time.Since(t0))
				if !events {
					continue
				}
				ev := &warden.SecurityEvent{TraceID: e.TraceID, Type: warden.EventEgressRequest, Severity: warden.SevInfo,
					Summary:  "GET 127.0.0.1:18080 allow, status 200, 0 bytes up, 16 down",
					Metadata: json.RawMessage(fmt.Sprintf(`{"agent":"agent","bytes_down":16,"bytes_up":0,"host":"127.0.0.1","n":%d,"status":200}`, i))}
				wait := s.QueueEvent(context.Background(), ev)
				waits.Add(1)
				go func() {
					defer waits.Done()
					if err := wait(); err != nil {
						b.Error(err)
					}
				}()
			}
		}()
	}
	for i := range b.N {
		next <- i
	}
	close(next)
	done.Wait()
	waits.Wait()
	b.StopTimer()
	b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(b.N), "cpu-µs/op")
	b.ReportMetric(float64(s.batches.Load()-batches0)/float64(b.N), "commits/op")
	slices.Sort(lats)
	if len(lats) > 0 {
		b.ReportMetric(float64(lats[len(lats)*50/100].Microseconds()), "p50-µs")
		b.ReportMetric(float64(lats[len(lats)*99/100].Microseconds()), "p99-µs")
	}
}

// proxyEntry is the audit row of a request the egress proxy allows under the
// default policy.
func proxyEntry() *warden.AuditEntry {
	return &warden.AuditEntry{
		TraceID: uuid.Must(uuid.NewV7()).String(), Capability: warden.CapNetwork, Action: "fetch",
		Resource: "http://127.0.0.1:18080", Tier: warden.TierAlwaysConfirm,
		Args:        json.RawMessage(`{"addresses":["127.0.0.1"],"method":"GET"}`),
		RequestedBy: "agent", Session: "egress-01a22149-184c-7249-998f-90ad9fd52df5",
		Verdict: warden.Allow, Reason: proxyStages[6].Reason, Rule: proxyStages[6].Rule,
		Duration: 10405 * time.Nanosecond, Stages: slices.Clone(proxyStages),
	}
}

// BenchmarkDrainSpool measures what a row costs when the spool is drained
// into the database in one large transaction: what a request journal
// drained in the background would still cost for each of the proxy's rows
// (issue 26). Each op drains a spool of 512 rows (a decision and an event
// for each of 256 requests), written beforehand with one write and no sync;
// cpu-µs/row is the drain's CPU a row.
func BenchmarkDrainSpool(b *testing.B) {
	path := filepath.Join(b.TempDir(), "warden.db")
	s, err := Open(ctx, path)
	if err != nil {
		b.Fatal(err)
	}
	const requests = 256
	var cpu time.Duration
	for b.Loop() {
		b.StopTimer()
		var spool []byte
		for i := range requests {
			e := benchEntry()
			e.Capability, e.Action, e.Resource, e.Tool = warden.CapNetwork, "fetch", "http://127.0.0.1:18080", ""
			if err := s.prepareEntry(e); err != nil {
				b.Fatal(err)
			}
			f, err := encodeFrame(e)
			if err != nil {
				b.Fatal(err)
			}
			spool = append(spool, f...)
			ev := &warden.SecurityEvent{ID: e.ID + "-ev", TraceID: e.TraceID, CreatedAt: e.CreatedAt, Type: warden.EventEgressRequest, Severity: warden.SevInfo,
				Summary:  "GET 127.0.0.1:18080 allow, status 200, 0 bytes up, 16 down",
				Metadata: json.RawMessage(fmt.Sprintf(`{"agent":"agent","bytes_down":16,"bytes_up":0,"host":"127.0.0.1","n":%d,"status":200}`, i))}
			if f, err = encodeEventFrame(ev); err != nil {
				b.Fatal(err)
			}
			spool = append(spool, f...)
		}
		if err := os.WriteFile(path+spoolSuffix, spool, 0o600); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		cpu0 := cpuTime()
		if err := s.catchUp(ctx); err != nil {
			b.Fatal(err)
		}
		cpu += cpuTime() - cpu0
	}
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N*2*requests), "cpu-µs/row")
	if err := s.Close(); err != nil {
		b.Fatal(err)
	}
}
