package sqlite

import (
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentwarden/warden"
)

// TestProcessesShareCapAndChain runs several processes debiting one cap at
// once. The immediate lock must serialise them: one unbroken chain, the
// ledger within the cap and equal to the sum of the debits each process was
// granted.
func TestProcessesShareCapAndChain(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	path := filepath.Join(t.TempDir(), "warden.db")
	s, err := Open(ctx, path) // create the schema once, so the children race only on writes
	if err != nil {
		t.Fatal(err)
	}
	const procs = 4
	var (
		wg              sync.WaitGroup
		mu              sync.Mutex
		granted         warden.USD
		okCount, capped int
	)
	for range procs {
		cmd, lines := startChild(t, "contend", path)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for lines.Scan() {
				f := strings.Fields(lines.Text())
				mu.Lock()
				if f[0] == "ok" {
					okCount++
					granted += warden.USD(atoi(t, f[1]))
				} else {
					capped++
				}
				mu.Unlock()
			}
			if err := cmd.Wait(); err != nil {
				t.Errorf("child: %v", err)
			}
		}()
	}
	wg.Wait()
	if okCount+capped != procs*childDebits {
		t.Fatalf("children reported %d results, want %d", okCount+capped, procs*childDebits)
	}
	if capped == 0 {
		t.Errorf("no debit was refused; the cap should bind")
	}
	spent, err := s.SpentSince(ctx, time.Now().Add(-time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if spent > childCap || spent != granted {
		t.Errorf("ledger = %d µ$, granted %d µ$, cap %d µ$: want ledger == granted <= cap", spent, granted, childCap)
	}
	rep, err := s.Verify(ctx)
	if err != nil || !rep.OK() || rep.AuditRows != int64(okCount) {
		t.Errorf("Verify = %+v (break %+v), %v; want %d intact rows", rep, rep.FirstBreak, err, okCount)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}
