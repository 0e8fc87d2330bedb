package sqlite

import (
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentwarden/warden"
	"github.com/ncruces/go-sqlite3"
)

func TestFloorCeilTo(t *testing.T) {
	for _, c := range []struct{ ms, span, floor, ceil int64 }{
		{0, minuteMillis, 0, 0},
		{1, minuteMillis, 0, minuteMillis},
		{minuteMillis - 1, minuteMillis, 0, minuteMillis},
		{minuteMillis, minuteMillis, minuteMillis, minuteMillis},
		{-1, minuteMillis, -minuteMillis, 0},
		{-minuteMillis, minuteMillis, -minuteMillis, -minuteMillis},
		{-minuteMillis - 1, minuteMillis, -2 * minuteMillis, -minuteMillis},
		{hourMillis + 5, hourMillis, hourMillis, 2 * hourMillis},
		{math.MaxInt64 - 5, hourMillis, floorTo(math.MaxInt64, hourMillis), math.MaxInt64},
	} {
		if got := floorTo(c.ms, c.span); got != c.floor {
			t.Errorf("floorTo(%d, %d) = %d, want %d", c.ms, c.span, got, c.floor)
		}
		if got := ceilTo(c.ms, c.span); got != c.ceil {
			t.Errorf("ceilTo(%d, %d) = %d, want %d", c.ms, c.span, got, c.ceil)
		}
	}
}

// naiveSpent is the ledger's sum since ms as the store computed it before the
// running totals: every unreleased row at or after ms.
func naiveSpent(t *testing.T, c *sqlite3.Conn, ms int64) int64 {
	t.Helper()
	st, _, err := c.Prepare(`SELECT COALESCE(SUM(l.amount_micros), 0) FROM spend_ledger l
	WHERE l.created_at >= ? AND NOT EXISTS (SELECT 1 FROM spend_releases r WHERE r.trace_id = l.trace_id)`)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.BindInt64(1, ms); err != nil {
		t.Fatal(err)
	}
	if !st.Step() {
		t.Fatal(st.Err())
	}
	return st.ColumnInt64(0)
}

// checkSpentSince compares SpentSince with the ledger's own sum at every
// moment of ats and at the millisecond on each side of it.
func checkSpentSince(t *testing.T, s *Store, c *sqlite3.Conn, ats []int64) {
	t.Helper()
	for _, at := range ats {
		for _, ms := range []int64{at - 1, at, at + 1} {
			got, err := s.SpentSince(ctx, time.UnixMilli(ms))
			if err != nil {
				t.Fatal(err)
			}
			if want := naiveSpent(t, c, ms); int64(got) != want {
				t.Fatalf("SpentSince(%d) = %d µ$, the ledger holds %d µ$ since then", ms, got, want)
			}
		}
	}
	// A moment between whole milliseconds counts from the next one.
	got, err := s.SpentSince(ctx, time.UnixMilli(ats[0]).Add(time.Microsecond))
	if err != nil {
		t.Fatal(err)
	}
	if want := naiveSpent(t, c, ats[0]+1); int64(got) != want {
		t.Fatalf("SpentSince(%d ms + 1 µs) = %d µ$, want %d", ats[0], got, want)
	}
}

// TestSpentSinceMatchesTheLedger records debits at random times around minute
// and hour boundaries (before 1970 too, and two rows under one trace),
// releases some, and asks SpentSince from every debit's time and every
// boundary: the running totals must give exactly what summing the ledger
// gives.
func TestSpentSinceMatchesTheLedger(t *testing.T) {
	s, path := openTest(t)
	c := rawConn(t, path)
	rng := rand.New(rand.NewPCG(1, 26))
	base := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC).UnixMilli()
	ats := []int64{math.MinInt64 / 4, -hourMillis - 1, -1, 0, base - 24*hourMillis, base}
	for i := range 300 {
		var at int64
		switch i % 4 {
		case 0: // exactly on a minute or an hour
			at = base + int64(rng.IntN(180)-90)*minuteMillis
		case 1:
			at = base + rng.Int64N(6*hourMillis) - 3*hourMillis
		case 2: // within a second of a boundary, or its last millisecond
			at = base + int64(rng.IntN(10)-5)*minuteMillis + rng.Int64N(2000) - 1000
			if i%8 == 2 {
				at = base + int64(rng.IntN(180)-90)*minuteMillis - 1
			}
		case 3: // before 1970
			at = -rng.Int64N(2 * hourMillis)
		}
		trace := fmt.Sprintf("t%d", i)
		if i%50 == 7 {
			trace = "t0" // a second row under one trace
		}
		e := &warden.AuditEntry{TraceID: trace, CreatedAt: time.UnixMilli(at), Capability: warden.CapTrade,
			Action: "buy", Resource: "WETH", Verdict: warden.Allow}
		amount := warden.USD(rng.Int64N(1000*warden.MicrosPerDollar) + 1)
		if err := s.Record(ctx, e, &warden.Debit{Amount: amount, Cap: math.MaxInt64 / 2}); err != nil {
			t.Fatal(err)
		}
		ats = append(ats, at)
	}
	for m := base - 4*hourMillis; m <= base+4*hourMillis; m += minuteMillis {
		ats = append(ats, m, m+minuteMillis/2)
	}
	for m := int64(-3 * hourMillis); m <= hourMillis; m += minuteMillis {
		ats = append(ats, m)
	}
	checkSpentSince(t, s, c, ats)
	for i := range 300 {
		if i%3 == 0 && i%50 != 7 { // t0 holds two rows; t57 none
			if err := s.Release(ctx, fmt.Sprintf("t%d", i), "test", time.UnixMilli(base)); err != nil {
				t.Fatal(err)
			}
		}
	}
	checkSpentSince(t, s, c, ats)
}

// TestMigrationBuildsSpendTotals opens a version 7 database whose ledger holds
// debits, one of them released: its totals are built from the ledger, and
// new debits and releases keep them exact.
func TestMigrationBuildsSpendTotals(t *testing.T) {
	path := filepath.Join(t.TempDir(), "warden.db")
	old, err := sqlite3.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := setWAL(old); err != nil {
		t.Fatal(err)
	}
	for v := range 7 {
		if err := migrations[v](old); err != nil {
			t.Fatalf("migration %d: %v", v, err)
		}
	}
	base := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC).UnixMilli()
	ats := []int64{base - 25*hourMillis, base - 90*minuteMillis - 1, base - 30*minuteMillis, base - 1, base, base + 59_999}
	for i, at := range ats {
		if err := old.Exec(fmt.Sprintf(`INSERT INTO spend_ledger (created_at, trace_id, amount_micros) VALUES (%d, 'v7-%d', %d)`,
			at, i, (i+1)*1_000_000)); err != nil {
			t.Fatal(err)
		}
	}
	if err := old.Exec(`INSERT INTO spend_releases (trace_id, created_at, reason) VALUES ('v7-2', 0, 'refused');
		PRAGMA user_version = 7`); err != nil {
		t.Fatal(err)
	}
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatalf("Open a version 7 database: %v", err)
	}
	defer s.Close()
	c := rawConn(t, path)
	for m := base - 26*hourMillis; m <= base+2*hourMillis; m += minuteMillis {
		ats = append(ats, m, m+minuteMillis/2)
	}
	checkSpentSince(t, s, c, ats)
	if got, err := s.SpentSince(ctx, time.UnixMilli(base-24*hourMillis)); err != nil || got != 17*warden.MicrosPerDollar {
		t.Errorf("SpentSince(24 h before) = %v, %v; want $17 (2+4+5+6: $3 released, $1 outside the window)", got, err)
	}
	e := &warden.AuditEntry{TraceID: "new", CreatedAt: time.UnixMilli(base - 10*minuteMillis), Capability: warden.CapTrade, Verdict: warden.Allow}
	if err := s.Record(ctx, e, &warden.Debit{Amount: 7 * warden.MicrosPerDollar, Cap: 100 * warden.MicrosPerDollar}); err != nil {
		t.Fatal(err)
	}
	if err := s.Release(ctx, "v7-4", "refused", time.UnixMilli(base)); err != nil {
		t.Fatal(err)
	}
	checkSpentSince(t, s, c, append(ats, base-10*minuteMillis))
}

// TestVerifyFindsTamperedTotals: Verify passes a ledger with debits and
// releases, and reports a running total lowered outside warden.
func TestVerifyFindsTamperedTotals(t *testing.T) {
	s, path := openTest(t)
	at := time.Date(2026, 11, 28, 10, 30, 0, 0, time.UTC)
	for i, id := range []string{"a", "b", "c"} {
		e := &warden.AuditEntry{TraceID: id, CreatedAt: at.Add(time.Duration(i) * time.Minute), Capability: warden.CapTrade, Verdict: warden.Allow}
		if err := s.Record(ctx, e, &warden.Debit{Amount: 5 * warden.MicrosPerDollar, Cap: 100 * warden.MicrosPerDollar}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Release(ctx, "b", "refused", at); err != nil {
		t.Fatal(err)
	}
	if rep, err := s.Verify(ctx); err != nil || !rep.OK() {
		t.Fatalf("Verify of an untouched ledger = %+v (break %+v), %v", rep, rep.FirstBreak, err)
	}
	if err := rawConn(t, path).Exec(`UPDATE spend_totals SET amount_micros = 0 WHERE span_ms = 3600000`); err != nil {
		t.Fatal(err)
	}
	rep, err := s.Verify(ctx)
	if err != nil || rep.FirstBreak == nil || rep.FirstBreak.Table != "spend_totals" || !strings.Contains(rep.FirstBreak.Why, "hour from 2026-11-28T10:00:00Z") {
		t.Fatalf("Verify after the hour's total was zeroed = break %+v, %v; want a spend_totals break naming the hour", rep.FirstBreak, err)
	}
}

// TestDebitUnderAReleasedTraceIsRefused: a release gives back every ledger
// row of its trace, so a later debit under the same trace id (a client that
// reuses one) would be left out of the ledger's sum but counted in the
// running totals, and Verify would report the totals as tampered. The store
// refuses that debit (the request is denied, nothing stored) and the totals
// stay the ledger's.
func TestDebitUnderAReleasedTraceIsRefused(t *testing.T) {
	s, path := openTest(t)
	at := time.Date(2026, 11, 28, 10, 30, 0, 0, time.UTC)
	debit := func(i int) error {
		e := &warden.AuditEntry{TraceID: "reused", CreatedAt: at.Add(time.Duration(i) * time.Minute), Capability: warden.CapTrade, Verdict: warden.Allow}
		return s.Record(ctx, e, &warden.Debit{Amount: 5 * warden.MicrosPerDollar, Cap: 100 * warden.MicrosPerDollar})
	}
	if err := debit(0); err != nil {
		t.Fatal(err)
	}
	if err := s.Release(ctx, "reused", "refused", at); err != nil {
		t.Fatal(err)
	}
	err := debit(2)
	if warden.ErrorCodeOf(err) != warden.EConflict {
		t.Fatalf("debit under a released trace: err = %v, want EConflict", err)
	}
	if got, err := s.SpentSince(ctx, at.Add(-time.Hour)); err != nil || got != 0 {
		t.Errorf("SpentSince = %v, %v; want $0 (the debit was released, the later one refused)", got, err)
	}
	checkSpentSince(t, s, rawConn(t, path), []int64{at.UnixMilli(), at.Add(2 * time.Minute).UnixMilli(), at.Add(-time.Hour).UnixMilli()})
	if rep, err := s.Verify(ctx); err != nil || !rep.OK() {
		t.Fatalf("Verify = %+v (break %+v), %v", rep, rep.FirstBreak, err)
	}
	if es, err := s.Entries(ctx, warden.AuditFilter{TraceID: "reused"}); err != nil || len(es) != 1 {
		t.Errorf("entries of the trace = %d, %v; want 1 (the refused debit's entry was not stored)", len(es), err)
	}
}
