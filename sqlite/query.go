package sqlite

import (
	"context"
	"fmt"
	"strings"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/audit"
	"github.com/ncruces/go-sqlite3"
)

// where accumulates SQL conditions and their parameters. Conditions are fixed
// SQL text with ? placeholders; values only ever travel as parameters.
type where struct {
	conds []string
	args  []any
}

func (w *where) add(cond string, args ...any) {
	w.conds = append(w.conds, cond)
	w.args = append(w.args, args...)
}

func (w *where) String() string {
	if len(w.conds) == 0 {
		return ""
	}
	return " WHERE " + strings.Join(w.conds, " AND ")
}

// selection returns a WHERE clause, with its parameters, that keeps the rows of
// table (or of a table keyed by seqCol) matching w: all of them, or with
// limit > 0 the newest limit. It is empty when nothing filters.
func selection(table, seqCol string, w *where, limit int) (string, []any) {
	if len(w.conds) == 0 && limit <= 0 {
		return "", nil
	}
	q := " WHERE " + seqCol + " IN (SELECT seq FROM " + table + w.String()
	args := w.args
	if limit > 0 {
		q += " ORDER BY seq DESC LIMIT ?"
		args = append(args[:len(args):len(args)], int64(limit))
	}
	return q + ")", args
}

// auditWhere translates f into conditions on the audit table. Since is
// inclusive and Until exclusive; stored times are whole milliseconds.
func auditWhere(f warden.AuditFilter) (*where, error) {
	w := &where{}
	if !f.Since.IsZero() {
		w.add("created_at >= ?", ceilMillis(f.Since))
	}
	if !f.Until.IsZero() {
		w.add("created_at < ?", ceilMillis(f.Until))
	}
	if f.Capability != "" {
		w.add("capability = ?", f.Capability)
	}
	if f.Tool != "" {
		w.add("tool = ?", f.Tool)
	}
	if f.Verdict != "" {
		v, err := warden.ParseVerdict(f.Verdict)
		if err != nil {
			return nil, &warden.Error{Code: warden.EInvalid, Message: "audit filter: " + err.Error()}
		}
		w.add("verdict = ?", v.String())
	}
	if f.Blocked != nil {
		w.add("blocked = ?", *f.Blocked)
	}
	if f.RequestedBy != "" {
		w.add("requested_by = ?", f.RequestedBy)
	}
	if f.TraceID != "" {
		w.add("trace_id = ?", f.TraceID)
	}
	if f.AfterSeq > 0 {
		w.add("seq > ?", f.AfterSeq)
	}
	return w, nil
}

// Entries returns the entries matching f, with their stages, in log order; with
// f.Limit > 0 only the newest f.Limit of them. f.Since is inclusive, f.Until
// exclusive. An unknown f.Verdict is a *warden.Error with code EInvalid.
func (s *Store) Entries(ctx context.Context, f warden.AuditFilter) ([]warden.AuditEntry, error) {
	w, err := auditWhere(f)
	if err != nil {
		return nil, err
	}
	var out []warden.AuditEntry
	err = s.read(ctx, func(r *conn) error {
		var err error
		out, err = queryEntries(r, w, f.Limit)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("query audit log: %w", err)
	}
	return out, nil
}

// queryEntries reads the audit rows w and limit select, with their stages.
func queryEntries(r *conn, w *where, limit int) ([]warden.AuditEntry, error) {
	var out []warden.AuditEntry
	sel, args := selection("audit", "seq", w, limit)
	err := query(r, "SELECT "+auditColumns+" FROM audit"+sel+" ORDER BY seq", args, func(st *sqlite3.Stmt) error {
		out = append(out, warden.AuditEntry{})
		return scanEntry(st, &out[len(out)-1])
	})
	return out, err
}

// Events returns the security events matching f in log order; with f.Limit > 0
// only the newest f.Limit. An unknown f.MinSeverity is a *warden.Error with code
// EInvalid.
func (s *Store) Events(ctx context.Context, f warden.EventFilter) ([]warden.SecurityEvent, error) {
	w := &where{}
	if !f.Since.IsZero() {
		w.add("created_at >= ?", ceilMillis(f.Since))
	}
	if f.Type != "" {
		w.add("type = ?", f.Type)
	}
	if f.MinSeverity != "" {
		sevs, err := audit.SeverityAtLeast(f.MinSeverity)
		if err != nil {
			return nil, &warden.Error{Code: warden.EInvalid, Message: "event filter: " + err.Error()}
		}
		marks := strings.TrimSuffix(strings.Repeat("?, ", len(sevs)), ", ")
		args := make([]any, len(sevs))
		for i, sv := range sevs {
			args[i] = string(sv)
		}
		w.add("severity IN ("+marks+")", args...)
	}
	if f.AfterSeq > 0 {
		w.add("seq > ?", f.AfterSeq)
	}
	sel, args := selection("security_events", "seq", w, f.Limit)
	var out []warden.SecurityEvent
	err := s.read(ctx, func(r *conn) error {
		return query(r, "SELECT "+eventColumns+" FROM security_events"+sel+" ORDER BY seq", args, func(st *sqlite3.Stmt) error {
			out = append(out, warden.SecurityEvent{})
			scanEvent(st, &out[len(out)-1])
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("query security events: %w", err)
	}
	return out, nil
}

// query prepares sql (built from fixed text; values are in args), binds args
// and calls fn for each row. The statement is not cached: filter combinations
// vary.
func query(c *conn, sql string, args []any, fn func(st *sqlite3.Stmt) error) error {
	st, _, err := c.c.Prepare(sql)
	if err != nil {
		return err
	}
	defer st.Close()
	if err := bind(st, args); err != nil {
		return err
	}
	for st.Step() {
		if err := fn(st); err != nil {
			return err
		}
	}
	return st.Err()
}
