package sqlite

import (
	"fmt"
	"math"
	"time"

	"github.com/agentwarden/warden"
	"github.com/ncruces/go-sqlite3"
)

// The spend cap's running totals. The cap check asks what the ledger holds
// since a moment t (now less 24 hours); summing the ledger's rows made that
// cost grow with the number of debits in the window (10 ms at 10,000). So
// every debit also adds its amount to two buckets of spend_totals, the minute
// and the hour it is dated in, and every release takes the released rows'
// amounts back out of the same buckets, in the same transaction as the ledger
// row or the release: the totals are exactly the ledger's, committed or rolled
// back with it, under the same write lock.
//
// spentSince(t) then reads three bounded ranges that partition [t, ∞):
//
//	[t, minute after t)          the ledger's own rows (under a minute of them)
//	[minute after t, hour after) at most 59 minute buckets
//	[hour after t, ∞)            hour buckets (25 for a 24-hour window)
//
// Buckets are never pruned: a bucket is 3 integers, 1,464 of them a day at
// most, and SpentSince takes any t.
const (
	minuteMillis = 60_000
	hourMillis   = 3_600_000
)

// schemaV8 adds spend_totals and backfills it from the ledger. It also
// indexes the ledger by trace_id, which Release looks rows up by.
var schemaV8 = `
CREATE TABLE spend_totals (
	span_ms       INTEGER NOT NULL CHECK (span_ms IN (60000, 3600000)), -- a minute or an hour
	start_ms      INTEGER NOT NULL,     -- the bucket's first Unix millisecond, a multiple of span_ms
	amount_micros INTEGER NOT NULL,     -- debits dated in the bucket, less the released ones
	PRIMARY KEY (span_ms, start_ms)
) STRICT, WITHOUT ROWID;
CREATE INDEX spend_ledger_trace_id ON spend_ledger (trace_id);
INSERT INTO spend_totals (span_ms, start_ms, amount_micros)
SELECT s.span, l.created_at - ((l.created_at % s.span) + s.span) % s.span, SUM(l.amount_micros)
FROM spend_ledger l, (SELECT 60000 AS span UNION ALL SELECT 3600000) s
WHERE NOT EXISTS (SELECT 1 FROM spend_releases r WHERE r.trace_id = l.trace_id)
GROUP BY 1, 2;
`

const (
	// sqlSpentSince's parameters: 1 the first millisecond counted, 2 the
	// first whole minute at or after it, 3 the first whole hour at or after it.
	sqlSpentSince = `SELECT
	(SELECT COALESCE(SUM(amount_micros), 0) FROM spend_totals WHERE span_ms = 3600000 AND start_ms >= ?3)
	+ (SELECT COALESCE(SUM(amount_micros), 0) FROM spend_totals WHERE span_ms = 60000 AND start_ms >= ?2 AND start_ms < ?3)
	+ (SELECT COALESCE(SUM(l.amount_micros), 0) FROM spend_ledger l
		WHERE l.created_at >= ?1 AND l.created_at < ?2
		AND NOT EXISTS (SELECT 1 FROM spend_releases r WHERE r.trace_id = l.trace_id))`
	sqlAddTotals = `INSERT INTO spend_totals (span_ms, start_ms, amount_micros) VALUES (60000, ?1, ?3), (3600000, ?2, ?3)
	ON CONFLICT (span_ms, start_ms) DO UPDATE SET amount_micros = amount_micros + excluded.amount_micros`
	sqlTraceDebits = `SELECT created_at, amount_micros FROM spend_ledger WHERE trace_id = ?`
)

// floorTo returns the largest multiple of span at or below ms.
func floorTo(ms, span int64) int64 {
	return ms - ((ms%span)+span)%span
}

// ceilTo returns the smallest multiple of span at or above ms, or ms itself
// when that multiple would not fit in an int64 (then no bucket starts at or
// after it, and the ledger's rows are read instead).
func ceilTo(ms, span int64) int64 {
	f := floorTo(ms, span)
	if f == ms {
		return ms
	}
	if f > math.MaxInt64-span {
		return math.MaxInt64
	}
	return f + span
}

// addTotals adds amount (negative for a release) to the minute and the hour
// buckets of a ledger row dated at ms.
func addTotals(w *conn, ms int64, amount int64) error {
	st, err := w.prepare(sqlAddTotals)
	if err != nil {
		return err
	}
	b := binder{st: st}
	b.int(floorTo(ms, minuteMillis))
	b.int(floorTo(ms, hourMillis))
	b.int(amount)
	if err := b.exec(); err != nil {
		return fmt.Errorf("update spend totals: %w", err)
	}
	return nil
}

// releaseTotals takes the ledger rows of traceID out of their buckets. The
// caller inserts the release in the same transaction.
func releaseTotals(w *conn, traceID string) error {
	st, err := w.prepare(sqlTraceDebits)
	if err != nil {
		return err
	}
	if err := st.BindText(1, traceID); err != nil {
		st.Reset()
		return err
	}
	type row struct{ at, amount int64 }
	var rows []row
	for st.Step() {
		rows = append(rows, row{st.ColumnInt64(0), st.ColumnInt64(1)})
	}
	err = st.Err()
	st.Reset()
	if err != nil {
		return fmt.Errorf("read ledger rows of %s: %w", traceID, err)
	}
	for _, r := range rows {
		if err := addTotals(w, r.at, -r.amount); err != nil {
			return err
		}
	}
	return nil
}

// sqlTotalsMismatch finds the first bucket whose running total is not what
// the ledger holds in it (its debits less the released ones).
const sqlTotalsMismatch = `WITH want AS (
	SELECT s.span AS span_ms, l.created_at - ((l.created_at % s.span) + s.span) % s.span AS start_ms, SUM(l.amount_micros) AS amount
	FROM spend_ledger l, (SELECT 60000 AS span UNION ALL SELECT 3600000) s
	WHERE NOT EXISTS (SELECT 1 FROM spend_releases r WHERE r.trace_id = l.trace_id)
	GROUP BY 1, 2)
SELECT span_ms, start_ms, SUM(w), SUM(h) FROM (
	SELECT span_ms, start_ms, amount AS w, 0 AS h FROM want
	UNION ALL SELECT span_ms, start_ms, 0, amount_micros FROM spend_totals)
GROUP BY span_ms, start_ms HAVING SUM(w) != SUM(h) ORDER BY start_ms, span_ms LIMIT 1`

// verifyTotals checks the running totals against the ledger: a total
// written outside warden (lowered, to let more be spent) is reported as a
// break in spend_totals.
func verifyTotals(r *conn) (*warden.ChainBreak, error) {
	if v, err := userVersion(r.c); err != nil || v < 8 {
		return nil, err // a database from before the totals
	}
	var brk *warden.ChainBreak
	err := query(r, sqlTotalsMismatch, nil, func(st *sqlite3.Stmt) error {
		span := "minute"
		if st.ColumnInt64(0) == hourMillis {
			span = "hour"
		}
		brk = &warden.ChainBreak{Table: "spend_totals", Why: fmt.Sprintf(
			"the running total of the %s from %s is %s µ$ but the ledger's debits in it, less the released ones, are %s µ$ (the totals were written outside warden)",
			span, time.UnixMilli(st.ColumnInt64(1)).UTC().Format(time.RFC3339), st.ColumnText(3), st.ColumnText(2))}
		return nil
	})
	return brk, err
}
