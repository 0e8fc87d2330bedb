package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/agentwarden/warden"
)

const approvalColumns = `id, trace_id, request, decision, input_hash, created_at, expires_at, channel, state, answer, answered_by, answered_at, note, host`

// CreateApproval stores a new pending approval, in its stored form
// (warden.EncodeStoredRequest), and tells every daemon (NOTIFY).
func (s *Store) CreateApproval(ctx context.Context, a *warden.Approval) error {
	req, err := warden.EncodeStoredRequest(&a.Request)
	if err != nil {
		return fmt.Errorf("store approval: encode request: %w", err)
	}
	dec, err := json.Marshal(a.Decision)
	if err != nil {
		return fmt.Errorf("store approval: encode decision: %w", err)
	}
	err = s.tx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO approvals (id, trace_id, request, decision, input_hash, session, created_at, expires_at, channel,
	state, answer, answered_by, answered_at, note) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 'pending', '', '', 0, '')`,
			col(a.ID), col(a.TraceID), string(req), string(dec), a.InputHash, col(a.Request.Session),
			a.CreatedAt.UnixMilli(), a.ExpiresAt.UnixMilli(), col(a.Channel)); err != nil {
			return err
		}
		return notify(ctx, tx, a.ID)
	})
	if err != nil {
		return fmt.Errorf("store approval %s: %w", a.ID, writeErr("store an approval", err))
	}
	return nil
}

// GetApproval returns one approval as stored, or ENotFound.
func (s *Store) GetApproval(ctx context.Context, id string) (warden.Approval, error) {
	if err := s.ready(ctx); err != nil {
		return warden.Approval{}, fmt.Errorf("read approval %s: %w", id, readErr("read an approval", err))
	}
	a, err := getApproval(ctx, s.pool, id, false)
	if err != nil {
		var we *warden.Error
		if errors.As(err, &we) {
			return a, err
		}
		return a, fmt.Errorf("read approval %s: %w", id, readErr("read an approval", err))
	}
	return a, nil
}

func getApproval(ctx context.Context, q querier, id string, forUpdate bool) (warden.Approval, error) {
	sql := `SELECT ` + approvalColumns + ` FROM approvals WHERE id = $1`
	if forUpdate {
		sql += ` FOR UPDATE`
	}
	var a warden.Approval
	err := scanApproval(q.QueryRow(ctx, sql, col(id)), &a)
	if errors.Is(err, pgx.ErrNoRows) {
		return a, warden.Errorf(warden.ENotFound, "no approval %q", id).WithHint("`warden approvals list` shows the approvals")
	}
	return a, err
}

// ListApprovals returns the approvals matching f, newest first.
func (s *Store) ListApprovals(ctx context.Context, f warden.ApprovalFilter) ([]warden.Approval, error) {
	w := &where{}
	if f.Pending {
		w.add(`state = 'pending'`)
		if !f.Now.IsZero() {
			w.add(`expires_at > ?`, f.Now.UnixMilli())
		}
	}
	if f.InputHash != "" {
		w.add(`input_hash = ? AND session = ?`, f.InputHash, col(f.Session))
	}
	sql := `SELECT ` + approvalColumns + ` FROM approvals` + w.String() + ` ORDER BY created_at DESC, id DESC`
	args := w.args
	if f.Limit > 0 {
		args = append(args, f.Limit)
		sql += fmt.Sprintf(` LIMIT $%d`, len(args))
	}
	if err := s.ready(ctx); err != nil {
		return nil, fmt.Errorf("list approvals: %w", readErr("list approvals", err))
	}
	rows, err := s.pool.Query(ctx, sql, args...)
	if err != nil {
		return nil, fmt.Errorf("list approvals: %w", readErr("list approvals", err))
	}
	defer rows.Close()
	var out []warden.Approval
	for rows.Next() {
		var a warden.Approval
		if err := scanApproval(rows, &a); err != nil {
			return nil, fmt.Errorf("list approvals: %w", err)
		}
		out = append(out, a)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list approvals: %w", readErr("list approvals", err))
	}
	return out, nil
}

// ResolveApproval ends a pending approval and stores g with it in one
// transaction (the approval's row locked), then tells every daemon.
func (s *Store) ResolveApproval(ctx context.Context, res warden.Resolution, g *warden.Grant) (warden.Approval, error) {
	var a warden.Approval
	err := s.tx(ctx, func(tx pgx.Tx) error {
		var err error
		if a, err = getApproval(ctx, tx, res.ID, true); err != nil {
			return err
		}
		if err := a.CheckResolution(res, g); err != nil {
			return err
		}
		answer, host := res.StoredAnswer()
		tag, err := tx.Exec(ctx, `UPDATE approvals SET state = $1, answer = $2, answered_by = $3, answered_at = $4, note = $5, host = $6
WHERE id = $7 AND state = 'pending'`, string(res.State), string(answer), col(res.By), res.At.UnixMilli(), col(res.Note), host, col(res.ID))
		if err != nil {
			return err
		}
		if tag.RowsAffected() != 1 {
			return warden.Errorf(warden.EConflict, "approval %s has already ended", res.ID)
		}
		if g != nil {
			var exp int64
			if !g.ExpiresAt.IsZero() {
				exp = g.ExpiresAt.UnixMilli()
			}
			if _, err := tx.Exec(ctx, `INSERT INTO grants (id, kind, input_hash, session, approval_id, granted_by, created_at, expires_at, used_at, host)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 0, $9)`, col(g.ID), string(g.Kind), g.InputHash, col(g.Session), col(g.ApprovalID), col(g.By),
				g.CreatedAt.UnixMilli(), exp, g.Host); err != nil {
				return err
			}
		}
		a.State, a.Answer, a.AnsweredBy, a.AnsweredAt, a.Note = res.State, res.Answer, res.By, millis(res.At.UnixMilli()), res.Note
		return notify(ctx, tx, a.ID)
	})
	if err != nil {
		var we *warden.Error
		if errors.As(err, &we) {
			return a, err
		}
		return a, fmt.Errorf("end approval %s: %w", res.ID, writeErr("end an approval", err))
	}
	return a, nil
}

// TakeGrant returns a live grant for q, marking a once grant used (unless
// q.Peek) by an update that succeeds only while it is unused, so two
// daemons can never both spend one once grant.
func (s *Store) TakeGrant(ctx context.Context, q warden.GrantQuery) (warden.Grant, bool, error) {
	var (
		g     warden.Grant
		found bool
	)
	find := `SELECT id, kind, input_hash, session, approval_id, granted_by, created_at, expires_at, host FROM grants
WHERE input_hash = $1 AND session = $2 AND (expires_at = 0 OR expires_at > $3)
  AND ((kind = 'once' AND used_at = 0) OR (kind = 'session' AND NOT $4 AND session <> ''))
ORDER BY kind = 'once', created_at LIMIT 1`
	args := []any{q.InputHash, col(q.Session), q.At.UnixMilli(), q.OnceOnly}
	scan := func(row pgx.Row) error {
		var created, exp int64
		err := row.Scan(&g.ID, &g.Kind, &g.InputHash, &g.Session, &g.ApprovalID, &g.By, &created, &exp, &g.Host)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		found = true
		g.CreatedAt = millis(created)
		if exp != 0 {
			g.ExpiresAt = millis(exp)
		}
		return nil
	}
	err := s.ready(ctx)
	switch {
	case err != nil: // reported below
	case q.Peek:
		err = scan(s.pool.QueryRow(ctx, find, args...))
	default:
		// A once grant is spent by a conditional update: of two daemons
		// that found the same one, the second updates nothing and looks
		// again.
		for range 8 {
			g, found = warden.Grant{}, false
			if err = scan(s.pool.QueryRow(ctx, find, args...)); err != nil || !found || g.Kind != warden.GrantOnce {
				break
			}
			var tag pgconn.CommandTag
			tag, err = s.pool.Exec(ctx, `UPDATE grants SET used_at = $1 WHERE id = $2 AND used_at = 0`, max(q.At.UnixMilli(), 1), g.ID)
			if err != nil || tag.RowsAffected() == 1 {
				break
			}
			found = false
		}
	}
	if err != nil {
		return warden.Grant{}, false, fmt.Errorf("look up grants: %w", writeErr("look up grants", err))
	}
	if !found {
		return warden.Grant{}, false, nil
	}
	return g, true, nil
}

func scanApproval(row pgx.Row, a *warden.Approval) error {
	var (
		req, dec                   string
		created, expires, answered int64
		host                       bool
	)
	if err := row.Scan(&a.ID, &a.TraceID, &req, &dec, &a.InputHash, &created, &expires, &a.Channel, &a.State, &a.Answer,
		&a.AnsweredBy, &answered, &a.Note, &host); err != nil {
		return err
	}
	if err := warden.DecodeStoredRequest([]byte(req), &a.Request); err != nil {
		return fmt.Errorf("approval %s: decode request: %w", a.ID, err)
	}
	if err := json.Unmarshal([]byte(dec), &a.Decision); err != nil {
		return fmt.Errorf("approval %s: decode decision: %w", a.ID, err)
	}
	a.CreatedAt, a.ExpiresAt = millis(created), millis(expires)
	if answered != 0 {
		a.AnsweredAt = millis(answered)
	}
	if host {
		a.Answer = warden.AnswerHost
	}
	return nil
}

// millis converts stored Unix milliseconds to a UTC time.
func millis(ms int64) time.Time { return time.UnixMilli(ms).UTC() }

// writeErr names a failed write as EUnavailable when the server went away.
func writeErr(what string, err error) error {
	var we *warden.Error
	if !errors.As(err, &we) && Unreachable(err) {
		return unavailable(what, err)
	}
	return err
}
