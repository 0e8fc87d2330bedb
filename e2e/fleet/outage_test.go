package fleet

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/internal/pgtest"
)

// TestDatabaseStoppedMidLoad: two daemons under a load of trades and file
// reads while the fleet's database is stopped and started again. No trade
// is allowed while it is down; the file reads go on, decided as before, and
// are journaled; once it is back every decision any daemon returned is in
// the audit log exactly once, the ledger holds exactly the allowed trades,
// and audit verify is clean.
func TestDatabaseStoppedMidLoad(t *testing.T) {
	c := pgtest.NewCluster(t)
	dsn := c.Database(t, "warden")
	must(t, nil, "--store", dsn, "migrate")
	homes := fleetHomes(t, dsn, 2)
	for _, h := range homes {
		must(t, nil, "--home", h, "config", "set", "safety.dailySpendCap", "1000000")
	}
	ds := []*daemon{serve(t, homes[0]), serve(t, homes[1])}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	readme := filepath.Join(t.TempDir(), "README")
	read := &warden.Request{Capability: warden.CapFilesystem, Action: "read", Resource: readme, RequestedBy: "agent"}

	type outcome struct {
		trade       bool
		d           warden.Decision
		start, done time.Time
	}
	var (
		mu       sync.Mutex
		outcomes []outcome
		errs     atomic.Int64
		stop     atomic.Bool
		wg       sync.WaitGroup
	)
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; !stop.Load(); i++ {
				trade := (w+i)%2 == 0
				req := read
				if trade {
					req = tradeRequest(i)
				}
				start := time.Now()
				d, err := ds[w%2].client.Check(ctx, req)
				if err != nil {
					errs.Add(1)
					time.Sleep(10 * time.Millisecond)
					continue
				}
				mu.Lock()
				outcomes = append(outcomes, outcome{trade: trade, d: d, start: start, done: time.Now()})
				mu.Unlock()
			}
		}()
	}
	time.Sleep(1500 * time.Millisecond)
	c.Halt(t)
	down := time.Now()
	time.Sleep(2 * time.Second)
	up := time.Now()
	c.Resume(t)
	time.Sleep(1500 * time.Millisecond)
	stop.Store(true)
	wg.Wait()

	// The journals drain once the database answers.
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		pending := false
		for _, h := range homes {
			if fi, err := os.Stat(filepath.Join(h, "fleet.journal")); err == nil && fi.Size() > 0 {
				pending = true
			}
		}
		if !pending {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the daemons' journals were not replayed within 60s of the database coming back")
		}
	}

	var readVerdict *warden.Verdict
	var allowedTrades, tradesDuring, readsDuring int
	for _, o := range outcomes {
		during := o.start.After(down) && o.done.Before(up)
		ok := o.d.Verdict == warden.Allow || o.d.Verdict == warden.Sandbox
		switch {
		case o.trade && ok && during:
			t.Errorf("a trade was allowed while the database was down: %+v", o.d)
		case o.trade && ok:
			allowedTrades++
		case o.trade && during:
			tradesDuring++
		case during:
			readsDuring++
			if readVerdict != nil && o.d.Verdict != *readVerdict {
				t.Errorf("a file read while the database was down was decided %v, before it %v: want it decided as before", o.d.Verdict, *readVerdict)
			}
		case !o.trade && readVerdict == nil && o.done.Before(down):
			v := o.d.Verdict
			readVerdict = &v
		}
	}
	t.Logf("%d decisions (%d transport errors); during the outage %d file reads and %d trades (all denied); %d trades allowed in all",
		len(outcomes), errs.Load(), readsDuring, tradesDuring, allowedTrades)
	if readsDuring == 0 || tradesDuring == 0 {
		t.Fatalf("no file read or no trade was decided while the database was down (%d, %d): the load did not reach the outage", readsDuring, tradesDuring)
	}
	// Every decision returned is in the log exactly once.
	var missing, doubled int
	for _, o := range outcomes {
		switch n := count(t, dsn, fmt.Sprintf(`SELECT count(*) FROM audit WHERE trace_id = '%s'`, o.d.TraceID)); {
		case n == 0:
			missing++
		case n > 1:
			doubled++
		}
	}
	if missing > 0 || doubled > 0 {
		t.Errorf("of %d decisions returned, %d are not in the audit log and %d are in it more than once; want each exactly once", len(outcomes), missing, doubled)
	}
	if n := count(t, dsn, `SELECT count(*) FROM spend_ledger`); n != int64(allowedTrades) {
		t.Errorf("the ledger holds %d debits, want the %d allowed trades", n, allowedTrades)
	}
	for _, d := range ds {
		d.stop(t)
	}
	if r := run(t, nil, "--home", homes[0], "audit", "verify"); r.code != 0 {
		t.Errorf("audit verify after the outage: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}
