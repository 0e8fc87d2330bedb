package audittest

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/agentwarden/warden"
)

// signingLimits are the signing service's defaults: 10 an hour, 50 a day.
var signingLimits = []warden.RateLimit{{Window: time.Hour, Max: 10}, {Window: 24 * time.Hour, Max: 50}}

// slotEntry returns an allowed signing entry for trace at t0 + offset.
func slotEntry(trace string, offset time.Duration) *warden.AuditEntry {
	e := simple(0, offset)
	e.ID, e.TraceID = "", trace
	e.Capability, e.Action, e.Resource = warden.CapSign, "eth_signTransaction", "0x7a3f…9e21"
	return e
}

// take records an entry for trace at t0 + offset taking one signing slot.
func take(s Store, trace string, offset time.Duration, key string, hold time.Time) error {
	return s.Record(ctx, slotEntry(trace, offset), &warden.Debit{Slot: &warden.RateSlot{
		Kind: "signing", Key: key, Limits: signingLimits, HoldUntil: hold}})
}

func held(t *testing.T, s Store, window time.Duration, at time.Time) int {
	t.Helper()
	n, err := s.HeldSlots(ctx, "signing", at.Add(-window), at, "")
	if err != nil {
		t.Fatalf("HeldSlots: %v", err)
	}
	return n
}

// testSlotLimits: the eleventh slot in an hour is refused with the limit it
// broke, and the refused Record stores nothing.
func testSlotLimits(t *testing.T, s Store) {
	for i := range 10 {
		if err := take(s, fmt.Sprint("t", i), time.Duration(i)*time.Minute, "", time.Time{}); err != nil {
			t.Fatalf("slot %d: %v", i, err)
		}
	}
	err := take(s, "t10", 10*time.Minute, "", time.Time{})
	var rate *warden.RateExceededError
	if !errors.As(err, &rate) {
		t.Fatalf("11th slot in an hour: err = %v, want *RateExceededError", err)
	}
	if rate.Limit.Window != time.Hour || rate.Held != 10 {
		t.Errorf("refusal = %+v, want the hourly limit with 10 held", *rate)
	}
	if got := entries(t, s, warden.AuditFilter{}); len(got) != 10 {
		t.Errorf("log has %d entries after a refused slot, want 10", len(got))
	}
	if n := held(t, s, time.Hour, t0.Add(10*time.Minute)); n != 10 {
		t.Errorf("HeldSlots = %d, want 10", n)
	}
	// Records without a slot are not limited.
	if err := s.Record(ctx, simple(99, 11*time.Minute), nil); err != nil {
		t.Errorf("a record without a slot: %v", err)
	}
}

// testSlotWindowSlides: a slot taken more than the window ago stops counting
// (10 signed, the oldest 61 minutes ago: the next one fits), while the daily
// limit still sees it.
func testSlotWindowSlides(t *testing.T, s Store) {
	if err := take(s, "old", 0, "", time.Time{}); err != nil {
		t.Fatal(err)
	}
	for i := range 9 {
		if err := take(s, fmt.Sprint("t", i), 30*time.Minute+time.Duration(i)*time.Second, "", time.Time{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := take(s, "late", 61*time.Minute, "", time.Time{}); err != nil {
		t.Errorf("slot once the oldest left the hour: %v", err)
	}
	if n := held(t, s, 24*time.Hour, t0.Add(61*time.Minute)); n != 11 {
		t.Errorf("slots in the day = %d, want 11", n)
	}
}

// testSlotHoldLapses: a held slot counts until its hold ends, then not.
func testSlotHoldLapses(t *testing.T, s Store) {
	for i := range 9 {
		if err := take(s, fmt.Sprint("t", i), time.Duration(i)*time.Second, "", time.Time{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := take(s, "pending", 10*time.Second, "", t0.Add(5*time.Minute)); err != nil {
		t.Fatal(err)
	}
	var rate *warden.RateExceededError
	if err := take(s, "while-held", time.Minute, "", time.Time{}); !errors.As(err, &rate) {
		t.Errorf("while a pending approval holds the 10th slot: err = %v, want *RateExceededError", err)
	}
	if err := take(s, "after-hold", 5*time.Minute, "", time.Time{}); err != nil {
		t.Errorf("after the hold lapsed: %v", err)
	}
}

// testSlotHoldBecomesSpent: the held trace's own re-check turns its hold into
// a spent slot without counting itself; once spent it no longer lapses.
func testSlotHoldBecomesSpent(t *testing.T, s Store) {
	for i := range 9 {
		if err := take(s, fmt.Sprint("t", i), time.Duration(i)*time.Second, "", time.Time{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := take(s, "pending", 10*time.Second, "k1", t0.Add(5*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if err := take(s, "pending", 2*time.Minute, "k1", time.Time{}); err != nil {
		t.Fatalf("the approved re-check of the held slot (10/10 with itself): %v", err)
	}
	if n := held(t, s, time.Hour, t0.Add(6*time.Minute)); n != 10 {
		t.Errorf("after the hold's time, spent slots = %d, want 10 (the approved one stays)", n)
	}
}

// testSlotReplay: a key is accepted once, by one trace, for all time; the
// same trace may present it again.
func testSlotReplay(t *testing.T, s Store) {
	if err := take(s, "first", 0, "req-dup", time.Time{}); err != nil {
		t.Fatal(err)
	}
	err := take(s, "second", time.Minute, "req-dup", time.Time{})
	var replay *warden.ReplayError
	if !errors.As(err, &replay) || replay.TraceID != "first" {
		t.Fatalf("reused key: err = %v, want *ReplayError naming trace first", err)
	}
	if tr, err := s.SlotKeyTrace(ctx, "signing", "req-dup"); err != nil || tr != "first" {
		t.Errorf("SlotKeyTrace = %q, %v; want first", tr, err)
	}
	if tr, err := s.SlotKeyTrace(ctx, "signing", "unused"); err != nil || tr != "" {
		t.Errorf("SlotKeyTrace(unused) = %q, %v; want empty", tr, err)
	}
	if err := s.Release(ctx, "first", "test", t0.Add(2*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if err := take(s, "third", 3*time.Minute, "req-dup", time.Time{}); !errors.As(err, &replay) {
		t.Errorf("key of a released slot: err = %v, want *ReplayError (a request id is used once)", err)
	}
	if err := take(s, "other-kind", 4*time.Minute, "", time.Time{}); err != nil {
		t.Fatal(err)
	}
}

// testSlotRelease: a released slot stops counting; releasing twice does
// nothing; a trace with no slot and no debit is ENotFound.
func testSlotRelease(t *testing.T, s Store) {
	for i := range 10 {
		if err := take(s, fmt.Sprint("t", i), time.Duration(i)*time.Second, "", time.Time{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Release(ctx, "t3", "signing failed", t0.Add(time.Minute)); err != nil {
		t.Fatalf("Release: %v", err)
	}
	if err := s.Release(ctx, "t3", "again", t0.Add(time.Minute)); err != nil {
		t.Errorf("second Release: %v", err)
	}
	if err := take(s, "after-release", 2*time.Minute, "", time.Time{}); err != nil {
		t.Errorf("slot after a release: %v", err)
	}
	if err := s.Release(ctx, "nobody", "x", t0); warden.ErrorCodeOf(err) != warden.ENotFound {
		t.Errorf("Release(unknown) = %v, want ENotFound", err)
	}
}

// testConcurrentSlots: 60 requests at once never take more than 10 slots of
// the hour, and every taken slot has its entry in the log.
func testConcurrentSlots(t *testing.T, s Store) {
	const n = 60
	var (
		wg            sync.WaitGroup
		mu            sync.Mutex
		taken, denied int
		unexpected    []error
	)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := take(s, fmt.Sprint("c", i), time.Duration(i)*time.Millisecond, fmt.Sprint("key-", i), time.Time{})
			var rate *warden.RateExceededError
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				taken++
			case errors.As(err, &rate):
				denied++
			default:
				unexpected = append(unexpected, err)
			}
		}()
	}
	wg.Wait()
	if len(unexpected) > 0 {
		t.Fatalf("unexpected errors: %v", unexpected)
	}
	if taken != 10 || denied != n-10 {
		t.Errorf("taken %d, refused %d; want 10 and %d", taken, denied, n-10)
	}
	if got := entries(t, s, warden.AuditFilter{}); len(got) != taken {
		t.Errorf("log has %d entries, want %d (one per taken slot)", len(got), taken)
	}
}

// holdBy records an ask by requester (requested_by "agent", session) at t0 +
// offset holding a signing slot for five minutes, at most 3 per requester.
func holdBy(s Store, trace, session string, offset time.Duration) error {
	e := slotEntry(trace, offset)
	e.RequestedBy, e.Session, e.Verdict = "agent", session, warden.Ask
	return s.Record(ctx, e, &warden.Debit{Slot: &warden.RateSlot{
		Kind: "signing", Limits: signingLimits, HoldUntil: t0.Add(offset + 5*time.Minute), MaxHolds: 3}})
}

// testSlotHoldsBounded: one requester holds at most MaxHolds pending slots,
// pending holds of all requesters at most half of a limit, and the rest of
// the limit stays for slots taken outright; a lapsed hold frees its place.
func testSlotHoldsBounded(t *testing.T, s Store) {
	for i := range 3 {
		if err := holdBy(s, fmt.Sprint("a", i), "a", time.Duration(i)*time.Second); err != nil {
			t.Fatalf("hold %d of requester a: %v", i, err)
		}
	}
	var holds *warden.HoldsExceededError
	err := holdBy(s, "a3", "a", 10*time.Second)
	if !errors.As(err, &holds) || holds.Requester == "" || holds.Held != 3 || holds.Max != 3 {
		t.Fatalf("4th hold of requester a: err = %v, want *HoldsExceededError naming the requester, 3 of 3", err)
	}
	if err := holdBy(s, "b0", "b", 11*time.Second); err != nil {
		t.Fatalf("requester b's first hold: %v", err)
	}
	if err := holdBy(s, "b1", "b", 12*time.Second); err != nil {
		t.Fatalf("requester b's second hold: %v", err)
	}
	err = holdBy(s, "c0", "c", 13*time.Second)
	if !errors.As(err, &holds) || holds.Requester != "" || holds.Held != 5 || holds.Max != 5 || holds.Window != time.Hour {
		t.Fatalf("a hold with 5 of 10 pending: err = %v, want *HoldsExceededError for half the hourly limit", err)
	}
	for i := range 5 {
		if err := take(s, fmt.Sprint("t", i), 14*time.Second+time.Duration(i)*time.Second, "", time.Time{}); err != nil {
			t.Fatalf("slot %d taken outright: %v", i, err)
		}
	}
	if got := entries(t, s, warden.AuditFilter{}); len(got) != 10 {
		t.Errorf("log has %d entries, want 10 (refused holds store nothing)", len(got))
	}
	// Once a's holds lapse, a may ask again (the taken slots still count).
	if err := holdBy(s, "a4", "a", 6*time.Minute); err != nil {
		t.Errorf("requester a's ask after its holds lapsed: %v", err)
	}
}
