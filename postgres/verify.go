package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/audit"
)

// Verify walks both chains in seq order inside one snapshot: each row's
// hash is recomputed from its stored encoding (enc), and the query columns
// must say what the encoding says (a row whose columns were changed to
// mislead a SQL query is a break too). With a key it checks every keyed
// checkpoint: its MAC, no gap in their seq, and that the chains pass
// through it. Rows cut from the end after the last checkpoint are not
// detectable from the database alone. An error means the walk could not be
// done, not that a row is bad.
func (s *Store) Verify(ctx context.Context) (warden.VerifyReport, error) {
	var rep warden.VerifyReport
	if err := s.ready(ctx); err != nil {
		return rep, readErr("verify the fleet audit log", err)
	}
	// The host anchor is read before the snapshot starts: written after
	// each commit, it can then only lag what the snapshot holds.
	var anchor *anchorRead
	if s.anchor != nil {
		af, ok, err := s.anchor.read()
		anchor = &anchorRead{file: af, ok: ok, err: err}
	}
	tx, err := s.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return rep, readErr("verify the fleet audit log", err)
	}
	defer tx.Rollback(context.Background()) //nolint:errcheck // read only
	f := &findings{}
	if rep.AuditRows, rep.FirstBreak, err = verifyAudit(ctx, tx); err != nil {
		return warden.VerifyReport{}, readErr("verify the fleet audit log", err)
	}
	var brk *warden.ChainBreak
	if rep.EventRows, brk, err = verifyEvents(ctx, tx); err != nil {
		return warden.VerifyReport{}, readErr("verify the fleet audit log", err)
	}
	if rep.FirstBreak == nil {
		rep.FirstBreak = brk
	}
	if s.opt.Key != nil {
		if rep.Checkpoints, err = verifyCheckpoints(ctx, tx, s.opt.Key, f); err != nil {
			return warden.VerifyReport{}, readErr("verify the fleet audit log", err)
		}
	}
	if anchor != nil {
		if err := verifyAnchor(ctx, tx, s.anchor, anchor, f); err != nil {
			return warden.VerifyReport{}, readErr("verify the fleet audit log", err)
		}
	}
	if err := verifyTotals(ctx, tx, f); err != nil {
		return warden.VerifyReport{}, readErr("verify the fleet audit log", err)
	}
	if rep.FirstBreak == nil {
		rep.FirstBreak = f.brk
	}
	rep.Missing = f.missing
	return rep, nil
}

// verifyTotals checks the spend ledger's running totals, which the cap
// check reads, against the ledger's rows: a total lowered behind warden's
// back would let more through the cap.
func verifyTotals(ctx context.Context, tx pgx.Tx, f *findings) error {
	var minute, total, rows int64
	err := tx.QueryRow(ctx, `SELECT minute, coalesce(m.amount_micros, 0), coalesce(l.amount, 0)
FROM spend_minutes m FULL JOIN (
	SELECT floor(created_at / 60000.0)::bigint AS minute,
		sum(amount_micros) FILTER (WHERE NOT EXISTS (SELECT 1 FROM spend_releases r WHERE r.trace_id = spend_ledger.trace_id)) AS amount
	FROM spend_ledger GROUP BY 1) l USING (minute)
WHERE coalesce(m.amount_micros, 0) <> coalesce(l.amount, 0)
ORDER BY minute LIMIT 1`).Scan(&minute, &total, &rows)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil
	}
	if err != nil {
		return err
	}
	f.breakAt("spend_minutes", minute, fmt.Sprintf("the running total of minute %s says $%s but the ledger's rows of that minute say $%s: the totals the spend cap reads were altered",
		time.UnixMilli(minute*60000).UTC().Format(time.RFC3339), warden.USD(total), warden.USD(rows)))
	return nil
}

func verifyAudit(ctx context.Context, tx pgx.Tx) (int64, *warden.ChainBreak, error) {
	v := audit.NewVerifier(audit.TableAudit)
	rows, err := tx.Query(ctx, `SELECT seq, id, trace_id, created_at, capability, action, resource, tool, tier, requested_by,
	autonomous, session, host, verdict, blocked, reason, rule, enc, prev_hash, hash FROM audit ORDER BY seq`)
	if err != nil {
		return 0, nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var (
			r       warden.AuditEntry
			tier    int16
			verdict string
			ms      int64
			enc     []byte
		)
		if err := rows.Scan(&r.Seq, &r.ID, &r.TraceID, &ms, &r.Capability, &r.Action, &r.Resource, &r.Tool, &tier,
			&r.RequestedBy, &r.Autonomous, &r.Session, &r.Host, &verdict, &r.Blocked, &r.Reason, &r.Rule, &enc, &r.PrevHash, &r.Hash); err != nil {
			return 0, nil, err
		}
		e, derr := audit.DecodeEntry(enc)
		if derr != nil {
			v.Fail(r.Seq, r.ID, r.TraceID, "the stored encoding cannot be read: "+derr.Error())
			break
		}
		e.PrevHash, e.Hash = r.PrevHash, r.Hash
		if !v.Entry(e) {
			break
		}
		if why := entryColumnsDiffer(e, &r, ms, tier, verdict); why != "" {
			v.Fail(r.Seq, r.ID, r.TraceID, why)
			break
		}
	}
	return walked(ctx, tx, rows, v, audit.TableAudit)
}

// walked ends the walk of table's chain: the rows' error, else how many
// rows the chain holds (all of them when the walk stopped at a break) and
// the break.
func walked(ctx context.Context, tx pgx.Tx, rows pgx.Rows, v *audit.Verifier, table string) (int64, *warden.ChainBreak, error) {
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, nil, err
	}
	if v.Break() == nil {
		return v.Rows(), nil, nil
	}
	var n int64
	err := tx.QueryRow(ctx, `SELECT count(*) FROM `+pgx.Identifier{table}.Sanitize()).Scan(&n)
	return n, v.Break(), err
}

// entryColumnsDiffer names the first query column of row r that does not
// say what the row's encoding e says.
func entryColumnsDiffer(e, r *warden.AuditEntry, ms int64, tier int16, verdict string) string {
	for _, c := range []struct {
		name      string
		got, want any
	}{
		{"seq", r.Seq, e.Seq}, {"id", r.ID, col(e.ID)}, {"trace_id", r.TraceID, col(e.TraceID)},
		{"created_at", ms, e.CreatedAt.UnixMilli()}, {"capability", r.Capability, col(e.Capability)}, {"action", r.Action, col(e.Action)},
		{"resource", r.Resource, col(e.Resource)}, {"tool", r.Tool, col(e.Tool)}, {"tier", tier, int16(e.Tier)},
		{"requested_by", r.RequestedBy, col(e.RequestedBy)}, {"autonomous", r.Autonomous, e.Autonomous},
		{"session", r.Session, col(e.Session)}, {"host", r.Host, col(e.Host)}, {"verdict", verdict, e.Verdict.String()},
		{"blocked", r.Blocked, e.Blocked}, {"reason", r.Reason, col(e.Reason)}, {"rule", r.Rule, col(e.Rule)},
	} {
		if c.got != c.want {
			return fmt.Sprintf("the %s column says %v but the row's hashed contents say %v: the column was altered", c.name, c.got, c.want)
		}
	}
	return ""
}

func verifyEvents(ctx context.Context, tx pgx.Tx) (int64, *warden.ChainBreak, error) {
	v := audit.NewVerifier(audit.TableEvents)
	rows, err := tx.Query(ctx, `SELECT seq, id, trace_id, created_at, type, severity, summary, enc, prev_hash, hash FROM security_events ORDER BY seq`)
	if err != nil {
		return 0, nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var (
			r   warden.SecurityEvent
			sev string
			ms  int64
			enc []byte
		)
		if err := rows.Scan(&r.Seq, &r.ID, &r.TraceID, &ms, &r.Type, &sev, &r.Summary, &enc, &r.PrevHash, &r.Hash); err != nil {
			return 0, nil, err
		}
		ev, derr := audit.DecodeEvent(enc)
		if derr != nil {
			v.Fail(r.Seq, r.ID, r.TraceID, "the stored encoding cannot be read: "+derr.Error())
			break
		}
		ev.PrevHash, ev.Hash = r.PrevHash, r.Hash
		if !v.Event(ev) {
			break
		}
		for _, c := range []struct {
			name      string
			got, want any
		}{
			{"seq", r.Seq, ev.Seq}, {"id", r.ID, col(ev.ID)}, {"trace_id", r.TraceID, col(ev.TraceID)},
			{"created_at", ms, ev.CreatedAt.UnixMilli()}, {"type", r.Type, col(ev.Type)}, {"severity", sev, string(ev.Severity)},
			{"summary", r.Summary, col(ev.Summary)},
		} {
			if c.got != c.want {
				v.Fail(r.Seq, r.ID, r.TraceID, fmt.Sprintf("the %s column says %v but the row's hashed contents say %v: the column was altered", c.name, c.got, c.want))
				break
			}
		}
		if v.Break() != nil {
			break
		}
	}
	return walked(ctx, tx, rows, v, audit.TableEvents)
}

// findings is what Verify found beside the chains themselves.
type findings struct {
	missing []string
	brk     *warden.ChainBreak
}

func (f *findings) breakAt(table string, seq int64, why string) {
	if f.brk == nil {
		f.brk = &warden.ChainBreak{Table: table, Seq: seq, Why: why}
	}
}

// verifyCheckpoints checks every keyed checkpoint in order and returns how
// many verified.
func verifyCheckpoints(ctx context.Context, tx pgx.Tx, key []byte, f *findings) (int64, error) {
	type row struct {
		seq int64
		ck  audit.Checkpoint
		mac string
	}
	rows, err := tx.Query(ctx, `SELECT seq, audit_rows, audit_head, event_rows, event_head, mac FROM chain_checkpoints ORDER BY seq`)
	if err != nil {
		return 0, err
	}
	var cks []row
	for rows.Next() {
		var r row
		if err := rows.Scan(&r.seq, &r.ck.AuditRows, &r.ck.AuditHead, &r.ck.EventRows, &r.ck.EventHead, &r.mac); err != nil {
			rows.Close()
			return 0, err
		}
		cks = append(cks, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, err
	}
	var ok, last int64
	for _, c := range cks {
		if c.seq != last+1 {
			f.missing = append(f.missing, fmt.Sprintf("keyed checkpoints %d to %d (removed from chain_checkpoints)", last+1, c.seq-1))
		}
		last = c.seq
		if !c.ck.Authentic(key, c.mac) {
			f.breakAt("chain_checkpoints", c.seq, "the checkpoint's MAC does not verify under the fleet's key: it was forged or altered")
			continue
		}
		good := true
		for _, ch := range []struct {
			table, sql string
			rows       int64
			head       string
		}{
			{audit.TableAudit, `SELECT hash FROM audit WHERE seq = $1`, c.ck.AuditRows, c.ck.AuditHead},
			{audit.TableEvents, `SELECT hash FROM security_events WHERE seq = $1`, c.ck.EventRows, c.ck.EventHead},
		} {
			if ch.rows == 0 {
				continue
			}
			var h string
			err := tx.QueryRow(ctx, ch.sql, ch.rows).Scan(&h)
			switch {
			case errors.Is(err, pgx.ErrNoRows):
				f.missing = append(f.missing, fmt.Sprintf("%s rows up to %d, which keyed checkpoint %d vouches for", ch.table, ch.rows, c.seq))
				good = false
			case err != nil:
				return ok, err
			case h != ch.head:
				f.breakAt(ch.table, ch.rows, fmt.Sprintf("the chain does not pass through keyed checkpoint %d, which vouches for this row's hash %.16s…: rows up to it were rewritten after the checkpoint was taken", c.seq, ch.head))
				good = false
			}
		}
		if good {
			ok++
		}
	}
	return ok, nil
}

// anchorRead is the host anchor as Verify read it.
type anchorRead struct {
	file anchorFile
	ok   bool
	err  error
}

// verifyAnchor checks that the database still holds what this host saw
// committed (its anchor r, read before the snapshot of tx was taken).
func verifyAnchor(ctx context.Context, tx pgx.Tx, a *hostAnchor, r *anchorRead, f *findings) error {
	if r.err != nil {
		f.missing = append(f.missing, fmt.Sprintf("a readable host anchor: %v", r.err))
		return nil
	}
	if !r.ok {
		return nil
	}
	af := r.file
	if !af.Authentic(a.key, af.MAC) {
		f.missing = append(f.missing, fmt.Sprintf("a genuine host anchor: %s does not carry a valid MAC under the fleet's key", a.path))
		return nil
	}
	for _, ch := range []struct {
		table, sql, count string
		rows              int64
		head              string
	}{
		{audit.TableAudit, `SELECT hash FROM audit WHERE seq = $1`, `SELECT count(*) FROM audit`, af.AuditRows, af.AuditHead},
		{audit.TableEvents, `SELECT hash FROM security_events WHERE seq = $1`, `SELECT count(*) FROM security_events`, af.EventRows, af.EventHead},
	} {
		if ch.rows == 0 {
			continue
		}
		var h string
		err := tx.QueryRow(ctx, ch.sql, ch.rows).Scan(&h)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			var n int64
			if err := tx.QueryRow(ctx, ch.count).Scan(&n); err != nil {
				return err
			}
			f.missing = append(f.missing, fmt.Sprintf("%s rows %d to %d, which this host saw committed (its anchor %s): the fleet's log was cut short", ch.table, n+1, ch.rows, a.path))
		case err != nil:
			return err
		case h != ch.head:
			f.breakAt(ch.table, ch.rows, fmt.Sprintf("this row's hash is not the %.16s… this host saw committed (its anchor %s): the chain was rewritten", ch.head, a.path))
		}
	}
	return nil
}
