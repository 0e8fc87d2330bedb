package postgres

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/audit"
)

// where accumulates SQL conditions and their parameters. Conditions are fixed
// SQL text; values only ever travel as parameters ($n, numbered by add).
type where struct {
	conds []string
	args  []any
}

// add appends cond, whose placeholders are written "?", numbering them.
func (w *where) add(cond string, args ...any) {
	for range args {
		w.args = append(w.args, nil)
		cond = strings.Replace(cond, "?", "$"+strconv.Itoa(len(w.args)), 1)
	}
	copy(w.args[len(w.args)-len(args):], args)
	w.conds = append(w.conds, cond)
}

func (w *where) String() string {
	if len(w.conds) == 0 {
		return ""
	}
	return " WHERE " + strings.Join(w.conds, " AND ")
}

// selection returns the query for the rows of table matching w, in seq
// order: all of them, or with limit > 0 the newest limit.
func selection(cols, table string, w *where, limit int) (string, []any) {
	if limit <= 0 {
		return "SELECT " + cols + " FROM " + table + w.String() + " ORDER BY seq", w.args
	}
	args := append(w.args[:len(w.args):len(w.args)], int64(limit))
	return "SELECT * FROM (SELECT " + cols + " FROM " + table + w.String() + " ORDER BY seq DESC LIMIT $" +
		strconv.Itoa(len(args)) + ") t ORDER BY seq", args
}

// Entries returns the entries matching f in log order; with f.Limit > 0 only
// the newest f.Limit. f.Since is inclusive, f.Until exclusive. An unknown
// f.Verdict is a *warden.Error with code EInvalid. Rows are read from the
// bytes their hash covers.
func (s *Store) Entries(ctx context.Context, f warden.AuditFilter) ([]warden.AuditEntry, error) {
	w := &where{}
	if !f.Since.IsZero() {
		w.add("created_at >= ?", ceilMillis(f.Since))
	}
	if !f.Until.IsZero() {
		w.add("created_at < ?", ceilMillis(f.Until))
	}
	if f.Capability != "" {
		w.add("capability = ?", col(f.Capability))
	}
	if f.Tool != "" {
		w.add("tool = ?", col(f.Tool))
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
		w.add("requested_by = ?", col(f.RequestedBy))
	}
	if f.TraceID != "" {
		w.add("trace_id = ?", col(f.TraceID))
	}
	if f.AfterSeq > 0 {
		w.add("seq > ?", f.AfterSeq)
	}
	if err := s.ready(ctx); err != nil {
		return nil, readErr("query audit log", err)
	}
	q, args := selection("seq, enc, prev_hash, hash", "audit", w, f.Limit)
	rows, err := s.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, readErr("query audit log", err)
	}
	var out []warden.AuditEntry
	for rows.Next() {
		var (
			seq        int64
			enc        []byte
			prev, hash string
		)
		if err := rows.Scan(&seq, &enc, &prev, &hash); err != nil {
			rows.Close()
			return nil, readErr("query audit log", err)
		}
		e, err := audit.DecodeEntry(enc)
		if err != nil {
			rows.Close()
			return nil, fmt.Errorf("query audit log: row %d: %w", seq, err)
		}
		e.PrevHash, e.Hash = prev, hash
		out = append(out, *e)
	}
	if err := rows.Err(); err != nil {
		return nil, readErr("query audit log", err)
	}
	return out, nil
}

// Events returns the security events matching f in log order; with
// f.Limit > 0 only the newest f.Limit. An unknown f.MinSeverity is a
// *warden.Error with code EInvalid.
func (s *Store) Events(ctx context.Context, f warden.EventFilter) ([]warden.SecurityEvent, error) {
	w := &where{}
	if !f.Since.IsZero() {
		w.add("created_at >= ?", ceilMillis(f.Since))
	}
	if f.Type != "" {
		w.add("type = ?", col(f.Type))
	}
	if f.MinSeverity != "" {
		sevs, err := audit.SeverityAtLeast(f.MinSeverity)
		if err != nil {
			return nil, &warden.Error{Code: warden.EInvalid, Message: "event filter: " + err.Error()}
		}
		names := make([]string, len(sevs))
		for i, sv := range sevs {
			names[i] = string(sv)
		}
		w.add("severity = ANY(?)", names)
	}
	if f.AfterSeq > 0 {
		w.add("seq > ?", f.AfterSeq)
	}
	if err := s.ready(ctx); err != nil {
		return nil, readErr("query security events", err)
	}
	q, args := selection("seq, enc, prev_hash, hash", "security_events", w, f.Limit)
	rows, err := s.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, readErr("query security events", err)
	}
	var out []warden.SecurityEvent
	for rows.Next() {
		ev, err := scanEvent(rows)
		if err != nil {
			rows.Close()
			return nil, readErr("query security events", err)
		}
		out = append(out, *ev)
	}
	if err := rows.Err(); err != nil {
		return nil, readErr("query security events", err)
	}
	return out, nil
}

func scanEvent(rows pgx.Rows) (*warden.SecurityEvent, error) {
	var (
		seq        int64
		enc        []byte
		prev, hash string
	)
	if err := rows.Scan(&seq, &enc, &prev, &hash); err != nil {
		return nil, err
	}
	ev, err := audit.DecodeEvent(enc)
	if err != nil {
		return nil, fmt.Errorf("row %d: %w", seq, err)
	}
	ev.PrevHash, ev.Hash = prev, hash
	return ev, nil
}

// readErr names what failed, as EUnavailable when the server went away.
func readErr(what string, err error) error {
	if Unreachable(err) {
		return unavailable(what, err)
	}
	return fmt.Errorf("%s: %w", what, err)
}
