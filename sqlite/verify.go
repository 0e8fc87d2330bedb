package sqlite

import (
	"context"
	"fmt"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/audit"
	"github.com/ncruces/go-sqlite3"
)

// Verify walks both chains in seq order inside one read snapshot, recomputing
// every row's hash from its stored columns (an audit row's stage_events rows
// included), and reports the first row that does not verify; AuditRows and
// EventRows count the rows in each chain. It also flags stage_events rows that
// belong to no audit row or disagree with their audit row's trace_id or
// position. An error means the walk could not be done, not that a row is bad.
func (s *Store) Verify(ctx context.Context) (warden.VerifyReport, error) {
	var rep warden.VerifyReport
	err := s.read(ctx, func(r *conn) error {
		var err error
		rep.AuditRows, rep.FirstBreak, err = verifyAudit(r)
		if err != nil {
			return err
		}
		var brk *warden.ChainBreak
		rep.EventRows, brk, err = verifyEvents(r)
		if rep.FirstBreak == nil {
			rep.FirstBreak = brk
		}
		return err
	})
	if err != nil {
		return warden.VerifyReport{}, fmt.Errorf("verify audit db: %w", err)
	}
	return rep, nil
}

// verifyAudit walks the audit chain, merging each row's stage rows from a
// second cursor ordered the same way.
func verifyAudit(r *conn) (rows int64, _ *warden.ChainBreak, _ error) {
	v := audit.NewVerifier(audit.TableAudit)
	rowsSt, _, err := r.c.Prepare("SELECT " + auditColumns + " FROM audit ORDER BY seq")
	if err != nil {
		return 0, nil, err
	}
	defer rowsSt.Close()
	stagesSt, _, err := r.c.Prepare("SELECT " + stageColumns + " FROM stage_events ORDER BY audit_seq, position")
	if err != nil {
		return 0, nil, err
	}
	defer stagesSt.Close()

	stages := stageCursor{st: stagesSt}
	stages.advance()
	var e warden.AuditEntry
	for rowsSt.Step() {
		e = warden.AuditEntry{}
		verr := scanEntry(rowsSt, &e)
		// Stage rows ordered before this entry belong to no entry.
		if stages.ok && stages.row.auditSeq < e.Seq {
			orphanBreak(v, stages.row)
			break
		}
		for stages.ok && stages.row.auditSeq == e.Seq {
			row := stages.row
			if verr == nil {
				verr = row.err
			}
			if row.position != int64(len(e.Stages)) || row.traceID != e.TraceID {
				v.Fail(e.Seq, e.ID, e.TraceID, fmt.Sprintf(
					"stage_events row at position %d (trace_id %q) does not belong here: want position %d and the entry's trace_id",
					row.position, row.traceID, len(e.Stages)))
			}
			e.Stages = append(e.Stages, row.answer)
			stages.advance()
		}
		if v.Break() != nil {
			break
		}
		if !v.Entry(&e) {
			break
		}
		if verr != nil { // the schema's CHECKs were bypassed, yet the hash matched
			v.Fail(e.Seq, e.ID, e.TraceID, verr.Error())
			break
		}
	}
	if err := rowsSt.Err(); err != nil {
		return 0, nil, err
	}
	if err := stages.err(); err != nil {
		return 0, nil, err
	}
	if v.Break() == nil && stages.ok {
		orphanBreak(v, stages.row)
	}
	if v.Break() == nil {
		return v.Rows(), nil, nil
	}
	n, err := count(r, "audit")
	return n, v.Break(), err
}

func orphanBreak(v *audit.Verifier, row stageRow) {
	v.Fail(row.auditSeq, "", row.traceID, fmt.Sprintf(
		"stage_events row (audit_seq %d, position %d, stage %q) belongs to no audit row: the audit row was removed or the stage row inserted",
		row.auditSeq, row.position, row.answer.Stage))
}

// stageCursor steps through stage_events rows one ahead of their audit rows.
type stageCursor struct {
	st  *sqlite3.Stmt
	row stageRow
	ok  bool
}

func (c *stageCursor) advance() {
	c.ok = c.st.Step()
	if c.ok {
		c.row = scanStage(c.st)
	}
}

func (c *stageCursor) err() error { return c.st.Err() }

func verifyEvents(r *conn) (int64, *warden.ChainBreak, error) {
	v := audit.NewVerifier(audit.TableEvents)
	st, _, err := r.c.Prepare("SELECT " + eventColumns + " FROM security_events ORDER BY seq")
	if err != nil {
		return 0, nil, err
	}
	defer st.Close()
	var ev warden.SecurityEvent
	for st.Step() {
		scanEvent(st, &ev)
		if !v.Event(&ev) {
			break
		}
	}
	if err := st.Err(); err != nil {
		return 0, nil, err
	}
	if v.Break() == nil {
		return v.Rows(), nil, nil
	}
	n, err := count(r, "security_events")
	return n, v.Break(), err
}

// count returns the number of rows in table (one of ours, never input).
func count(r *conn, table string) (int64, error) {
	var n int64
	err := query(r, "SELECT count(*) FROM "+table, nil, func(st *sqlite3.Stmt) error {
		n = st.ColumnInt64(0)
		return nil
	})
	return n, err
}
