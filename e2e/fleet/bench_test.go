package fleet

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/internal/pgtest"
)

// BenchmarkFleetDaemons is /v1/check over each daemon's Unix socket, every
// decision recorded durably before it is answered, from 32 clients in a
// closed loop spread over the daemons: the home's SQLite with one daemon,
// then 1, 2 and 3 `warden serve` on one PostgreSQL (a cluster of the
// benchmark's own, fsync on). tier1 is a tier 1 tool call; trade is a $1
// trade, every one checked and debited against the one daily cap.
//
//	go test -run XXX -bench BenchmarkFleetDaemons -benchtime 3000x ./e2e/fleet/
func BenchmarkFleetDaemons(b *testing.B) {
	b.Setenv("WARDEN_PG_DURABLE", "1")
	c := pgtest.NewCluster(b)
	dsn := c.Database(b, "warden")
	must(b, nil, "--store", dsn, "migrate")
	homes := fleetHomes(b, dsn, 3)
	for _, h := range homes {
		must(b, nil, "--home", h, "config", "set", "safety.dailySpendCap", "100000000")
	}
	local := newHome(b, [2]string{"safety.dailySpendCap", "100000000"}, [2]string{"safety.maxTransactionAmount", "100"})
	tool := &warden.Request{Capability: warden.CapTool, Action: "call", Resource: "get_price"}
	trade := tradeRequest(0)
	trade.Params["amount_usd"] = []byte(`"1"`)
	for _, load := range []struct {
		name string
		req  *warden.Request
	}{{"tier1", tool}, {"trade", trade}} {
		b.Run(load.name+"/sqlite-1", func(b *testing.B) { benchDaemons(b, []string{local}, load.req) })
		for n := 1; n <= 3; n++ {
			b.Run(fmt.Sprintf("%s/postgres-%d", load.name, n), func(b *testing.B) { benchDaemons(b, homes[:n], load.req) })
		}
	}
}

func benchDaemons(b *testing.B, homes []string, req *warden.Request) {
	var ds []*daemon
	for _, h := range homes {
		ds = append(ds, serve(b, h))
	}
	const clients = 32
	var (
		mu   sync.Mutex
		lats []time.Duration
		wg   sync.WaitGroup
		next = make(chan struct{}, b.N)
	)
	for range b.N {
		next <- struct{}{}
	}
	close(next)
	ctx := context.Background()
	b.ResetTimer()
	start := time.Now()
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cl := ds[i%len(ds)].client
			var mine []time.Duration
			for range next {
				t0 := time.Now()
				d, err := cl.Check(ctx, req)
				if err != nil || (d.Verdict != warden.Allow && d.Verdict != warden.Sandbox) {
					b.Errorf("check = %v (%s), %v", d.Verdict, d.Reason, err)
					return
				}
				mine = append(mine, time.Since(t0))
			}
			mu.Lock()
			lats = append(lats, mine...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	slices.Sort(lats)
	if len(lats) > 0 {
		b.ReportMetric(float64(len(lats))/elapsed.Seconds(), "decisions/s")
		b.ReportMetric(float64(lats[len(lats)/2].Microseconds()), "p50-µs")
		b.ReportMetric(float64(lats[len(lats)*99/100].Microseconds()), "p99-µs")
	}
	for _, d := range ds {
		d.stop(b)
	}
}

// BenchmarkOneShotCheck is one `warden check` process per decision (what a
// hook without a daemon costs): the home's SQLite (the decision spooled)
// against a fleet home on a durable PostgreSQL of the benchmark's own
// (connect, check the schema, read the emergency stop, record, close).
//
//	go test -run XXX -bench BenchmarkOneShotCheck -benchtime 100x ./e2e/fleet/
func BenchmarkOneShotCheck(b *testing.B) {
	b.Setenv("WARDEN_PG_DURABLE", "1")
	c := pgtest.NewCluster(b)
	dsn := c.Database(b, "warden")
	must(b, nil, "--store", dsn, "migrate")
	homes := map[string]string{"sqlite": newHome(b), "postgres": newHome(b, [2]string{"store.dsn", dsn})}
	for _, name := range []string{"sqlite", "postgres"} {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				must(b, nil, "--home", homes[name], "check", "tool", "call", "get_price")
			}
		})
	}
}
