package sqlite

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/audit"
	"github.com/ncruces/go-sqlite3"
)

// Verify walks both chains in seq order inside one read snapshot, recomputing
// every row's hash from its stored columns (an audit row's stage answers
// included), and reports the first row that does not verify; AuditRows and
// EventRows count the rows in each chain. With an anchor it also checks
// every keyed checkpoint (its MAC, and that the chains pass through it), the
// anchor itself, and the spool's claim, naming in Missing what the store
// once recorded and no longer holds. An error means the walk could not be
// done, not that a row is bad.
func (s *Store) Verify(ctx context.Context) (warden.VerifyReport, error) {
	var rep warden.VerifyReport
	s.mu.Lock()
	err := s.openLocked(ctx)
	found, hasDB, a, key := s.found, s.w != nil, s.anchor, s.key
	s.mu.Unlock()
	if err != nil {
		return rep, fmt.Errorf("verify audit db: %w", err)
	}
	f := &findings{}
	if found != nil {
		f.missing = append(f.missing, found.missing...)
		f.brk = found.brk
	}
	if a != nil && s.opt.Inspect && found != nil && !slices.ContainsFunc(found.missing, isSpoolLost) {
		if err := inspectSpool(s.path+spoolSuffix, a, f); err != nil {
			return rep, fmt.Errorf("verify audit db: %w", err)
		}
	}
	if !hasDB {
		rep.Missing, rep.FirstBreak = f.missing, f.brk
		return rep, nil
	}
	// The anchor is read before the snapshot starts: written after each
	// commit, it can then only lag what the snapshot holds.
	var st anchorState
	var have bool
	if a != nil && found == nil {
		var damaged bool
		if st, have, damaged, err = a.readDB(); err != nil {
			return rep, fmt.Errorf("verify audit db: %w", err)
		}
		switch {
		case damaged:
			f.miss("the chain anchor %s (neither of its records is intact)", s.opt.Anchor)
		case have && !st.Authentic(key, st.MAC):
			f.miss("a genuine chain anchor: %s does not carry a valid MAC under this home's key", s.opt.Anchor)
			have = false
		}
	}
	err = s.read(ctx, func(r *conn) error {
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
		if err != nil {
			return err
		}
		if brk, err = verifyTotals(r); err != nil {
			return err
		}
		if rep.FirstBreak == nil {
			rep.FirstBreak = brk
		}
		if key != nil {
			if rep.Checkpoints, err = verifyCheckpoints(r, key, f); err != nil {
				return err
			}
		}
		if have {
			return checkAgainst(r, st.Checkpoint, "the anchor", f)
		}
		return nil
	})
	if err != nil {
		return warden.VerifyReport{}, fmt.Errorf("verify audit db: %w", err)
	}
	if rep.FirstBreak == nil {
		rep.FirstBreak = f.brk
	}
	rep.Missing = f.missing
	spoolOnly := rep.FirstBreak == nil && len(f.missing) > 0
	for _, m := range f.missing {
		spoolOnly = spoolOnly && isSpoolLost(m)
	}
	s.mu.Lock()
	s.spoolOnly = spoolOnly
	if s.anchorErr != nil {
		rep.Missing = append(rep.Missing, "an up-to-date chain anchor: the last write to it failed ("+s.anchorErr.Error()+")")
	}
	s.mu.Unlock()
	return rep, nil
}

// verifyCheckpoints checks every stored checkpoint in order: no gap in
// their seq, a MAC that verifies under key, and chains that pass through
// it. It returns how many verified and adds what it found to f.
func verifyCheckpoints(r *conn, key []byte, f *findings) (int64, error) {
	if v, err := userVersion(r.c); err != nil || v < 7 {
		return 0, err // a database from before checkpoints
	}
	type row struct {
		seq int64
		ck  audit.Checkpoint
		mac string
	}
	var rows []row
	err := query(r, `SELECT seq, audit_rows, audit_head, event_rows, event_head, mac FROM chain_checkpoints ORDER BY seq`, nil, func(st *sqlite3.Stmt) error {
		rows = append(rows, row{seq: st.ColumnInt64(0), ck: audit.Checkpoint{AuditRows: st.ColumnInt64(1), AuditHead: st.ColumnText(2),
			EventRows: st.ColumnInt64(3), EventHead: st.ColumnText(4)}, mac: st.ColumnText(5)})
		return nil
	})
	if err != nil {
		return 0, err
	}
	var ok, last, goodAudit, goodEvents int64
	for _, c := range rows {
		if c.seq != last+1 {
			f.miss("keyed checkpoints %d to %d (removed from chain_checkpoints)", last+1, c.seq-1)
		}
		last = c.seq
		if !c.ck.Authentic(key, c.mac) {
			f.breakAt("chain_checkpoints", c.seq, "the checkpoint's MAC does not verify under this home's key: it was forged or altered")
			continue
		}
		what := fmt.Sprintf("keyed checkpoint %d", c.seq)
		g := &findings{}
		if err := checkAgainst(r, c.ck, what, g); err != nil {
			return ok, err
		}
		if g.brk != nil {
			from := goodAudit
			if g.brk.Table == audit.TableEvents {
				from = goodEvents
			}
			g.brk.Why = fmt.Sprintf("the chain does not pass through %s, which vouches for this row's hash %.16s…: rows %d to %d were rewritten (and their hashes recomputed) after the checkpoint was taken",
				what, map[string]string{audit.TableAudit: c.ck.AuditHead, audit.TableEvents: c.ck.EventHead}[g.brk.Table], from+1, g.brk.Seq)
			f.breakAt(g.brk.Table, g.brk.Seq, g.brk.Why)
		}
		for _, m := range g.missing {
			if !slices.Contains(f.missing, m) {
				f.missing = append(f.missing, m)
			}
		}
		if g.empty() {
			ok++
			goodAudit, goodEvents = c.ck.AuditRows, c.ck.EventRows
		}
	}
	return ok, nil
}

func isSpoolLost(m string) bool { return strings.HasPrefix(m, spoolLostPrefix) }

// inspectSpool compares the spool with the anchor's claim, without taking
// its lock or changing it.
func inspectSpool(path string, a *anchorFile, f *findings) error {
	claim, err := a.readSpool()
	if err != nil {
		return err
	}
	data, err := readSpoolFile(path)
	if err != nil {
		return fmt.Errorf("read audit spool: %w", err)
	}
	if !claim.lost() && claim.Size > int64(len(data)) {
		claim.LostClaimed, claim.LostFound = claim.Size, int64(len(data))
	}
	if claim.lost() {
		f.missing = append(f.missing, spoolLost(path, claim).missing...)
	}
	return nil
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
