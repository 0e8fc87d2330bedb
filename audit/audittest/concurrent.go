package audittest

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/agentwarden/warden"
)

// testConcurrentDebits records from many goroutines at once, half of them with
// debits against one cap. The ledger must never exceed the cap and must equal
// the sum of the debits that succeeded; every successful Record must be in the
// log, in one unbroken chain.
func testConcurrentDebits(t *testing.T, s Store) {
	const (
		workers = 8
		each    = 25
		capUSD  = 300 * dollar
	)
	since := t0.Add(-warden.SpendWindow)
	var (
		wg                   sync.WaitGroup
		mu                   sync.Mutex
		granted              warden.USD
		recorded, refused    int
		unexpected           []error
		eventsOK, eventsWant int
	)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				e := debitEntry(w*each+i, time.Duration(w*each+i)*time.Millisecond)
				e.TraceID = fmt.Sprintf("w%d-%d", w, i)
				var d *warden.Debit
				if i%2 == 0 {
					d = &warden.Debit{Amount: warden.USD(1+(w*7+i*3)%10) * dollar, Cap: capUSD, Since: since}
				}
				err := s.Record(ctx, e, d)
				var capErr *warden.CapExceededError
				mu.Lock()
				switch {
				case err == nil:
					recorded++
					if d != nil {
						granted += d.Amount
					}
				case errors.As(err, &capErr):
					refused++
					if capErr.Spent+capErr.Amount <= capErr.Cap {
						unexpected = append(unexpected, fmt.Errorf("refused a debit that fits: %+v", *capErr))
					}
				default:
					unexpected = append(unexpected, err)
				}
				mu.Unlock()
				if i%10 == 0 {
					ev := &warden.SecurityEvent{Type: warden.EventConfigChanged, Severity: warden.SevInfo, TraceID: e.TraceID}
					err := s.AppendEvent(ctx, ev)
					mu.Lock()
					eventsWant++
					if err == nil {
						eventsOK++
					} else {
						unexpected = append(unexpected, err)
					}
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	for _, err := range unexpected {
		t.Errorf("concurrent Record: %v", err)
	}
	if refused == 0 {
		t.Errorf("no debit was refused; the test wants the cap to bind (granted $%s of $%s)", granted, capUSD)
	}
	got := spentSince(t, s, since)
	if got > capUSD {
		t.Errorf("ledger holds $%s, over the $%s cap", got, capUSD)
	}
	if got != granted {
		t.Errorf("ledger holds $%s, want $%s (the sum of the debits that succeeded)", got, granted)
	}
	es := entries(t, s, warden.AuditFilter{})
	if len(es) != recorded {
		t.Errorf("%d entries in the log, want %d (every successful Record)", len(es), recorded)
	}
	for i := range es {
		if es[i].Seq != int64(i+1) {
			t.Fatalf("entry %d has seq %d: seqs must run 1..n without gaps", i, es[i].Seq)
		}
	}
	verifyOK(t, s, int64(recorded), int64(eventsOK))
}
