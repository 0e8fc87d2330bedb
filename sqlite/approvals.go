package sqlite

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/ncruces/go-sqlite3"

	"github.com/agentwarden/warden"
)

var _ warden.ApprovalStore = (*Store)(nil)

// schemaV2 adds approvals and grants. An approval row changes once: from
// pending to an end state, setting only the answer columns; a grant row
// changes once: a once grant is marked used. Triggers refuse anything else,
// and every deletion.
const schemaV2 = `
CREATE TABLE approvals (
	id          TEXT    PRIMARY KEY,
	trace_id    TEXT    NOT NULL,
	request     TEXT    NOT NULL,       -- JSON, redacted
	decision    TEXT    NOT NULL,       -- JSON, redacted
	input_hash  TEXT    NOT NULL,
	session     TEXT    NOT NULL,
	created_at  INTEGER NOT NULL,       -- Unix milliseconds
	expires_at  INTEGER NOT NULL,
	channel     TEXT    NOT NULL,
	state       TEXT    NOT NULL CHECK (state IN ('pending', 'approved', 'denied', 'expired')),
	answer      TEXT    NOT NULL CHECK (answer IN ('', 'once', 'deny', 'session', 'always')),
	answered_by TEXT    NOT NULL,
	answered_at INTEGER NOT NULL,       -- 0 while pending
	note        TEXT    NOT NULL
) STRICT;
CREATE INDEX approvals_state ON approvals (state, expires_at);
CREATE INDEX approvals_created_at ON approvals (created_at);
CREATE TRIGGER approvals_no_delete BEFORE DELETE ON approvals
BEGIN SELECT RAISE(ABORT, 'approvals are kept: DELETE is not allowed'); END;
CREATE TRIGGER approvals_end_once BEFORE UPDATE ON approvals
WHEN OLD.state <> 'pending' OR NEW.state = 'pending'
  OR NEW.id IS NOT OLD.id OR NEW.trace_id IS NOT OLD.trace_id OR NEW.request IS NOT OLD.request
  OR NEW.decision IS NOT OLD.decision OR NEW.input_hash IS NOT OLD.input_hash OR NEW.session IS NOT OLD.session
  OR NEW.created_at IS NOT OLD.created_at OR NEW.expires_at IS NOT OLD.expires_at OR NEW.channel IS NOT OLD.channel
BEGIN SELECT RAISE(ABORT, 'an approval ends once, from pending, and only its answer changes'); END;

CREATE TABLE grants (
	id          TEXT    PRIMARY KEY,
	kind        TEXT    NOT NULL CHECK (kind IN ('once', 'session')),
	input_hash  TEXT    NOT NULL,
	session     TEXT    NOT NULL,
	approval_id TEXT    NOT NULL REFERENCES approvals (id),
	by          TEXT    NOT NULL,
	created_at  INTEGER NOT NULL,
	expires_at  INTEGER NOT NULL,       -- 0: no expiry
	used_at     INTEGER NOT NULL        -- 0: unused; once grants only
) STRICT;
CREATE INDEX grants_input ON grants (input_hash, session);
CREATE TRIGGER grants_no_delete BEFORE DELETE ON grants
BEGIN SELECT RAISE(ABORT, 'grants are kept: DELETE is not allowed'); END;
CREATE TRIGGER grants_use_once BEFORE UPDATE ON grants
WHEN OLD.kind <> 'once' OR OLD.used_at <> 0 OR NEW.used_at = 0
  OR NEW.id IS NOT OLD.id OR NEW.kind IS NOT OLD.kind OR NEW.input_hash IS NOT OLD.input_hash
  OR NEW.session IS NOT OLD.session OR NEW.approval_id IS NOT OLD.approval_id OR NEW.by IS NOT OLD.by
  OR NEW.created_at IS NOT OLD.created_at OR NEW.expires_at IS NOT OLD.expires_at
BEGIN SELECT RAISE(ABORT, 'a grant is used once, and nothing else about it changes'); END;
`

// schemaV6 adds "run on host" (warden.AnswerHost): an approved approval
// whose answer is 'once' and host is 1 was answered "run on host", and the
// once grant it stored has host 1. Neither column can be set on anything
// else, and a grant's host never changes (the approval's ends with its
// state: approvals_end_once already refuses every change to an ended row).
const schemaV6 = `
ALTER TABLE approvals ADD COLUMN host INTEGER NOT NULL DEFAULT 0 CHECK (host = 0 OR (host = 1 AND answer = 'once'));
ALTER TABLE grants ADD COLUMN host INTEGER NOT NULL DEFAULT 0 CHECK (host = 0 OR (host = 1 AND kind = 'once'));
DROP TRIGGER grants_use_once;
CREATE TRIGGER grants_use_once BEFORE UPDATE ON grants
WHEN OLD.kind <> 'once' OR OLD.used_at <> 0 OR NEW.used_at = 0
  OR NEW.id IS NOT OLD.id OR NEW.kind IS NOT OLD.kind OR NEW.input_hash IS NOT OLD.input_hash
  OR NEW.session IS NOT OLD.session OR NEW.approval_id IS NOT OLD.approval_id OR NEW.by IS NOT OLD.by
  OR NEW.created_at IS NOT OLD.created_at OR NEW.expires_at IS NOT OLD.expires_at OR NEW.host IS NOT OLD.host
BEGIN SELECT RAISE(ABORT, 'a grant is used once, and nothing else about it changes'); END;
`

const approvalColumns = `id, trace_id, request, decision, input_hash, session, created_at, expires_at, channel, state, answer, answered_by, answered_at, note, host`

const (
	sqlInsertApproval = `INSERT INTO approvals (` + approvalColumns + `) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0)`
	sqlGetApproval    = `SELECT ` + approvalColumns + ` FROM approvals WHERE id = ?`
	sqlEndApproval    = `UPDATE approvals SET state = ?, answer = ?, answered_by = ?, answered_at = ?, note = ?, host = ? WHERE id = ? AND state = 'pending'`
	sqlInsertGrant    = `INSERT INTO grants (id, kind, input_hash, session, approval_id, by, created_at, expires_at, used_at, host) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0, ?)`
	// A session grant for the session, else the oldest unused once grant.
	sqlFindGrant = `SELECT id, kind, input_hash, session, approval_id, by, created_at, expires_at, host FROM grants
WHERE input_hash = ? AND session = ? AND (expires_at = 0 OR expires_at > ?)
  AND ((kind = 'once' AND used_at = 0) OR (kind = 'session' AND ? = 0 AND session <> ''))
ORDER BY kind = 'once', created_at LIMIT 1`
	sqlUseGrant = `UPDATE grants SET used_at = ? WHERE id = ? AND used_at = 0`
)

// CreateApproval stores a new pending approval.
func (s *Store) CreateApproval(ctx context.Context, a *warden.Approval) error {
	req, err := warden.EncodeStoredRequest(&a.Request)
	if err != nil {
		return fmt.Errorf("store approval: encode request: %w", err)
	}
	dec, err := json.Marshal(a.Decision)
	if err != nil {
		return fmt.Errorf("store approval: encode decision: %w", err)
	}
	err = s.write(ctx, func(w *conn) error {
		st, err := w.prepare(sqlInsertApproval)
		if err != nil {
			return err
		}
		b := binder{st: st}
		b.text(a.ID)
		b.text(a.TraceID)
		b.json(req)
		b.json(dec)
		b.text(a.InputHash)
		b.text(a.Request.Session)
		b.int(a.CreatedAt.UnixMilli())
		b.int(a.ExpiresAt.UnixMilli())
		b.text(a.Channel)
		b.text(string(warden.ApprovalPending))
		b.text("")
		b.text("")
		b.int(0)
		b.text("")
		return b.exec()
	})
	if err != nil {
		return fmt.Errorf("store approval %s: %w", a.ID, err)
	}
	return nil
}

// GetApproval returns one approval as stored.
func (s *Store) GetApproval(ctx context.Context, id string) (warden.Approval, error) {
	var (
		a     warden.Approval
		found bool
	)
	err := s.read(ctx, func(r *conn) error {
		return query(r, sqlGetApproval, []any{id}, func(st *sqlite3.Stmt) error {
			found = true
			return scanApproval(st, &a)
		})
	})
	if err != nil {
		return a, fmt.Errorf("read approval %s: %w", id, err)
	}
	if !found {
		return a, warden.Errorf(warden.ENotFound, "no approval %q", id).WithHint("`warden approvals list` shows the approvals")
	}
	return a, nil
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
		w.add(`input_hash = ? AND session = ?`, f.InputHash, f.Session)
	}
	sql := `SELECT ` + approvalColumns + ` FROM approvals` + w.String() + ` ORDER BY created_at DESC, id DESC`
	args := w.args
	if f.Limit > 0 {
		sql += ` LIMIT ?`
		args = append(args, f.Limit)
	}
	var out []warden.Approval
	err := s.read(ctx, func(r *conn) error {
		return query(r, sql, args, func(st *sqlite3.Stmt) error {
			var a warden.Approval
			if err := scanApproval(st, &a); err != nil {
				return err
			}
			out = append(out, a)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("list approvals: %w", err)
	}
	return out, nil
}

// ResolveApproval ends a pending approval and stores g with it, in one
// transaction.
func (s *Store) ResolveApproval(ctx context.Context, res warden.Resolution, g *warden.Grant) (warden.Approval, error) {
	var a warden.Approval
	err := s.write(ctx, func(w *conn) error {
		found := false
		if err := query(w, sqlGetApproval, []any{res.ID}, func(st *sqlite3.Stmt) error {
			found = true
			return scanApproval(st, &a)
		}); err != nil {
			return err
		}
		if !found {
			return warden.Errorf(warden.ENotFound, "no approval %q", res.ID)
		}
		if err := a.CheckResolution(res, g); err != nil {
			return err
		}
		stmt, err := w.prepare(sqlEndApproval)
		if err != nil {
			return err
		}
		// "run on host" is stored as answer once with host 1 (schemaV6).
		answer, host := res.StoredAnswer()
		b := binder{st: stmt}
		b.text(string(res.State))
		b.text(string(answer))
		b.text(res.By)
		b.int(res.At.UnixMilli())
		b.text(res.Note)
		b.bool(host)
		b.text(res.ID)
		if err := b.exec(); err != nil {
			return err
		}
		if w.c.Changes() != 1 {
			return warden.Errorf(warden.EConflict, "approval %s has already ended", res.ID)
		}
		if g != nil {
			if err := insertGrant(w, g); err != nil {
				return err
			}
		}
		a.State, a.Answer, a.AnsweredBy, a.AnsweredAt, a.Note = res.State, res.Answer, res.By, millis(res.At.UnixMilli()), res.Note
		return nil
	})
	if err != nil {
		if _, ok := err.(*warden.Error); ok {
			return a, err
		}
		return a, fmt.Errorf("end approval %s: %w", res.ID, err)
	}
	return a, nil
}

func insertGrant(w *conn, g *warden.Grant) error {
	st, err := w.prepare(sqlInsertGrant)
	if err != nil {
		return err
	}
	b := binder{st: st}
	b.text(g.ID)
	b.text(string(g.Kind))
	b.text(g.InputHash)
	b.text(g.Session)
	b.text(g.ApprovalID)
	b.text(g.By)
	b.int(g.CreatedAt.UnixMilli())
	if g.ExpiresAt.IsZero() {
		b.int(0)
	} else {
		b.int(g.ExpiresAt.UnixMilli())
	}
	b.bool(g.Host)
	return b.exec()
}

// TakeGrant returns a live grant for q, marking a once grant used (unless
// q.Peek) in the same transaction so that two requests can never spend it
// both. A peek only reads.
func (s *Store) TakeGrant(ctx context.Context, q warden.GrantQuery) (warden.Grant, bool, error) {
	var (
		g     warden.Grant
		found bool
		err   error
	)
	if q.Peek {
		err = s.read(ctx, func(r *conn) (err error) {
			g, found, err = findGrant(r, q)
			return err
		})
	} else {
		err = s.write(ctx, func(w *conn) error {
			if g, found, err = findGrant(w, q); err != nil || !found || g.Kind != warden.GrantOnce {
				return err
			}
			st, err := w.prepare(sqlUseGrant)
			if err != nil {
				return err
			}
			b := binder{st: st}
			b.int(q.At.UnixMilli())
			b.text(g.ID)
			if err := b.exec(); err != nil {
				return err
			}
			if w.c.Changes() != 1 {
				found = false // used by another process between the read and now: impossible under the write lock, but never spend twice
			}
			return nil
		})
	}
	if err != nil {
		return warden.Grant{}, false, fmt.Errorf("look up grants: %w", err)
	}
	return g, found, nil
}

// findGrant reads the live grant that covers q, if any.
func findGrant(c *conn, q warden.GrantQuery) (g warden.Grant, found bool, err error) {
	onceOnly := 0
	if q.OnceOnly {
		onceOnly = 1
	}
	err = query(c, sqlFindGrant, []any{q.InputHash, q.Session, q.At.UnixMilli(), onceOnly}, func(st *sqlite3.Stmt) error {
		found = true
		g = warden.Grant{ID: st.ColumnText(0), Kind: warden.GrantKind(st.ColumnText(1)), InputHash: st.ColumnText(2),
			Session: st.ColumnText(3), ApprovalID: st.ColumnText(4), By: st.ColumnText(5), CreatedAt: millis(st.ColumnInt64(6)),
			Host: st.ColumnInt64(8) == 1}
		if exp := st.ColumnInt64(7); exp != 0 {
			g.ExpiresAt = millis(exp)
		}
		return nil
	})
	return g, found, err
}

func scanApproval(st *sqlite3.Stmt, a *warden.Approval) error {
	a.ID = st.ColumnText(0)
	a.TraceID = st.ColumnText(1)
	if err := warden.DecodeStoredRequest([]byte(st.ColumnText(2)), &a.Request); err != nil {
		return fmt.Errorf("approval %s: decode request: %w", a.ID, err)
	}
	if err := json.Unmarshal([]byte(st.ColumnText(3)), &a.Decision); err != nil {
		return fmt.Errorf("approval %s: decode decision: %w", a.ID, err)
	}
	a.InputHash = st.ColumnText(4)
	a.CreatedAt = millis(st.ColumnInt64(6))
	a.ExpiresAt = millis(st.ColumnInt64(7))
	a.Channel = st.ColumnText(8)
	a.State = warden.ApprovalState(st.ColumnText(9))
	a.Answer = warden.Answer(st.ColumnText(10))
	a.AnsweredBy = st.ColumnText(11)
	if at := st.ColumnInt64(12); at != 0 {
		a.AnsweredAt = millis(at)
	}
	a.Note = st.ColumnText(13)
	if st.ColumnInt64(14) == 1 {
		a.Answer = warden.AnswerHost
	}
	return nil
}
