package sqlite

import (
	"context"
	"fmt"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/audit"
	"github.com/ncruces/go-sqlite3"
)

// Verify walks both chains in seq order inside one read snapshot, recomputing
// every row's hash from its stored columns (an audit row's stage answers
// included), and reports the first row that does not verify; AuditRows and
// EventRows count the rows in each chain. An error means the walk could not be
// done, not that a row is bad.
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

// verifyAudit walks the audit chain.
func verifyAudit(r *conn) (rows int64, _ *warden.ChainBreak, _ error) {
	v := audit.NewVerifier(audit.TableAudit)
	st, _, err := r.c.Prepare("SELECT " + auditColumns + " FROM audit ORDER BY seq")
	if err != nil {
		return 0, nil, err
	}
	defer st.Close()
	var e warden.AuditEntry
	for st.Step() {
		e = warden.AuditEntry{}
		verr := scanEntry(st, &e)
		if !v.Entry(&e) {
			break
		}
		if verr != nil { // the schema's CHECKs were bypassed, yet the hash matched
			v.Fail(e.Seq, e.ID, e.TraceID, verr.Error())
			break
		}
	}
	if err := st.Err(); err != nil {
		return 0, nil, err
	}
	if v.Break() == nil {
		return v.Rows(), nil, nil
	}
	n, err := count(r, "audit")
	return n, v.Break(), err
}

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
