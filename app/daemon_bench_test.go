package app_test

import (
	"bytes"
	"fmt"
	"io"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/app"
	"github.com/agentwarden/warden/httpapi"
)

// BenchmarkDaemonCheck is /v1/check over the Unix socket with the durable
// audit log, each decision recorded before it is answered, from 16, 32 and 64
// concurrent clients in a closed loop. It reports decisions per second and the
// p50/p99 latency; by Little's law the latency grows with the number of
// clients once the daemon is saturated.
//
//	go test -run XXX -bench BenchmarkDaemonCheck -benchtime 20000x ./app/
func BenchmarkDaemonCheck(b *testing.B) {
	dm := startDaemon(b)
	for _, clients := range []int{16, 32, 64} {
		b.Run(fmt.Sprintf("clients=%d", clients), func(b *testing.B) {
			var (
				mu   sync.Mutex
				lats []time.Duration
			)
			b.SetParallelism(max(1, clients/runtime.GOMAXPROCS(0)))
			b.ResetTimer()
			start := time.Now()
			b.RunParallel(func(pb *testing.PB) {
				c := httpapi.UnixClient(dm.socket, "")
				var mine []time.Duration
				for pb.Next() {
					t0 := time.Now()
					d, err := c.Check(ctx, &warden.Request{Capability: warden.CapTool, Action: "call", Resource: "get_price"})
					if err != nil || d.Verdict != warden.Allow {
						b.Errorf("check = %v, %v", d.Verdict, err)
						return
					}
					mine = append(mine, time.Since(t0))
				}
				mu.Lock()
				lats = append(lats, mine...)
				mu.Unlock()
			})
			elapsed := time.Since(start)
			b.StopTimer()
			slices.Sort(lats)
			if len(lats) > 0 {
				b.ReportMetric(float64(len(lats))/elapsed.Seconds(), "decisions/s")
				b.ReportMetric(float64(lats[len(lats)/2].Microseconds()), "p50-µs")
				b.ReportMetric(float64(lats[len(lats)*99/100].Microseconds()), "p99-µs")
			}
		})
	}
}

// BenchmarkHookDecision compares what one hook invocation costs to decide a
// Claude Code Bash payload: opening the home in-process (what `warden hook
// claude` does without a daemon) against asking a running daemon.
//
//	go test -run XXX -bench BenchmarkHookDecision ./app/
func BenchmarkHookDecision(b *testing.B) {
	dm := startDaemon(b)
	payload := []byte(`{"session_id":"s1","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls -la"},"cwd":"/tmp"}`)
	b.Run("in-process", func(b *testing.B) {
		for b.Loop() {
			if code := app.RunHook(ctx, dm.home, app.Options{}, "claude", bytes.NewReader(payload), io.Discard, io.Discard); code != 0 {
				b.Fatalf("hook exit %d", code)
			}
		}
	})
	b.Run("daemon", func(b *testing.B) {
		for b.Loop() {
			if code := app.RunHookRemote(ctx, dm.home, "claude", bytes.NewReader(payload), io.Discard, io.Discard); code != 0 {
				b.Fatalf("hook exit %d", code)
			}
		}
	})
}
