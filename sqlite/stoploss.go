package sqlite

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/ncruces/go-sqlite3"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/finance/stoploss"
)

// stoplossSchema holds the stop-loss rules and their high-water marks
// (schema version 3).
//
// A rule row changes once: removed_at goes from 0 to the time it was
// removed; nothing else about it ever changes, and no row is deleted, so the
// table is the record of every stop that was set. A mark only rises: an
// UPDATE, or an INSERT replacing the row, that would lower it is refused,
// and so is every deletion.
const stoplossSchema = `
CREATE TABLE stoploss_rules (
	id          TEXT    PRIMARY KEY,
	target      TEXT    NOT NULL,       -- a position id, or a holding as chain:SYMBOL
	rule        TEXT    NOT NULL CHECK (json_valid(rule)),  -- JSON stoploss.Rule
	created_at  INTEGER NOT NULL,       -- Unix milliseconds
	removed_at  INTEGER NOT NULL CHECK (removed_at >= 0)    -- 0 while active
) STRICT;
CREATE INDEX stoploss_rules_active ON stoploss_rules (removed_at, target);
CREATE TRIGGER stoploss_rules_no_delete BEFORE DELETE ON stoploss_rules
BEGIN SELECT RAISE(ABORT, 'stop-loss rules are kept: DELETE is not allowed'); END;
CREATE TRIGGER stoploss_rules_no_replace BEFORE INSERT ON stoploss_rules
WHEN EXISTS (SELECT 1 FROM stoploss_rules WHERE id = NEW.id)
BEGIN SELECT RAISE(ABORT, 'stop-loss rules are kept: replacing a rule is not allowed'); END;
CREATE TRIGGER stoploss_rules_remove_once BEFORE UPDATE ON stoploss_rules
WHEN OLD.removed_at <> 0 OR NEW.removed_at = 0
  OR NEW.id IS NOT OLD.id OR NEW.target IS NOT OLD.target OR NEW.rule IS NOT OLD.rule OR NEW.created_at IS NOT OLD.created_at
BEGIN SELECT RAISE(ABORT, 'a stop-loss rule is removed once, and nothing else about it changes'); END;

CREATE TABLE stoploss_marks (
	target      TEXT    PRIMARY KEY,    -- stoploss.MarkKey: a position id, or chain:SYMBOL#rule id
	high_water  REAL    NOT NULL,       -- the peak; a short's trough negated
	updated_at  INTEGER NOT NULL        -- Unix milliseconds
) STRICT, WITHOUT ROWID;
CREATE TRIGGER stoploss_marks_no_delete BEFORE DELETE ON stoploss_marks
BEGIN SELECT RAISE(ABORT, 'a high-water mark only rises: DELETE is not allowed'); END;
CREATE TRIGGER stoploss_marks_only_up BEFORE UPDATE ON stoploss_marks
WHEN NEW.high_water < OLD.high_water OR NEW.target IS NOT OLD.target
BEGIN SELECT RAISE(ABORT, 'a high-water mark only rises'); END;
CREATE TRIGGER stoploss_marks_no_lower_replace BEFORE INSERT ON stoploss_marks
WHEN EXISTS (SELECT 1 FROM stoploss_marks WHERE target = NEW.target AND high_water > NEW.high_water)
BEGIN SELECT RAISE(ABORT, 'a high-water mark only rises'); END;
`

const (
	sqlStopLossRules      = `SELECT id, rule FROM stoploss_rules WHERE removed_at = 0 ORDER BY rowid`
	sqlStopLossRuleExists = `SELECT 1 FROM stoploss_rules WHERE id = ?`
	sqlInsertStopLossRule = `INSERT INTO stoploss_rules (id, target, rule, created_at, removed_at) VALUES (?, ?, ?, ?, 0)`
	sqlRemoveStopLossRule = `UPDATE stoploss_rules SET removed_at = ? WHERE id = ? AND removed_at = 0`
	sqlStopLossMarks      = `SELECT target, high_water FROM stoploss_marks`
	// The WHERE keeps the higher mark: a lower value changes nothing.
	sqlSetStopLossMark = `INSERT INTO stoploss_marks (target, high_water, updated_at) VALUES (?1, ?2, ?3)
ON CONFLICT (target) DO UPDATE SET high_water = excluded.high_water, updated_at = excluded.updated_at
WHERE excluded.high_water > stoploss_marks.high_water`
	sqlStopLossMark = `SELECT high_water FROM stoploss_marks WHERE target = ?`
)

// StopLossStore keeps the stop-loss monitor's rules and high-water marks in
// the audit database. Every change is one BEGIN IMMEDIATE transaction, so
// several processes sharing the file never lose one.
type StopLossStore struct{ s *Store }

var _ stoploss.Store = (*StopLossStore)(nil)

// StopLoss returns the stop-loss store in s.
func (s *Store) StopLoss() *StopLossStore { return &StopLossStore{s: s} }

// Rules implements stoploss.Store: the active rules, in the order they were
// added. The stored JSON is decoded strictly, so a rule written by a newer
// warden is an error rather than a rule applied without its new fields.
func (p *StopLossStore) Rules(ctx context.Context) ([]stoploss.Rule, error) {
	var out []stoploss.Rule
	err := p.s.read(ctx, func(r *conn) error {
		return query(r, sqlStopLossRules, nil, func(st *sqlite3.Stmt) error {
			var rule stoploss.Rule
			if err := json.Unmarshal(st.ColumnRawText(1), &rule); err != nil {
				return fmt.Errorf("decode rule %s: %w", st.ColumnText(0), err)
			}
			out = append(out, rule)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("list stop-loss rules: %w", err)
	}
	return out, nil
}

// AddRule implements stoploss.Store.
func (p *StopLossStore) AddRule(ctx context.Context, r stoploss.Rule) error {
	if err := stoploss.CheckAdd(r); err != nil {
		return err
	}
	data, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("store stop-loss rule %s: encode: %w", r.ID, err)
	}
	err = p.s.write(ctx, func(w *conn) error {
		if found, err := exists(w, sqlStopLossRuleExists, r.ID); err != nil || found {
			if found {
				return warden.Errorf(warden.EConflict, "a stop-loss rule %s exists already", r.ID)
			}
			return err
		}
		st, err := w.prepare(sqlInsertStopLossRule)
		if err != nil {
			return err
		}
		b := binder{st: st}
		b.text(r.ID)
		b.text(r.Target)
		b.json(data)
		b.int(r.CreatedAt.UnixMilli())
		return b.exec()
	})
	if err != nil {
		return fmt.Errorf("store stop-loss rule %s: %w", r.ID, err)
	}
	return nil
}

// RemoveRule implements stoploss.Store: the row stays, marked removed now.
func (p *StopLossStore) RemoveRule(ctx context.Context, id string) error {
	err := p.s.write(ctx, func(w *conn) error {
		st, err := w.prepare(sqlRemoveStopLossRule)
		if err != nil {
			return err
		}
		b := binder{st: st}
		b.int(max(p.s.now().UnixMilli(), 1)) // 0 would mean active
		b.text(id)
		if err := b.exec(); err != nil {
			return err
		}
		if w.c.Changes() != 1 {
			return warden.Errorf(warden.ENotFound, "no active stop-loss rule %q", id)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("remove stop-loss rule %s: %w", id, err)
	}
	return nil
}

// Marks implements stoploss.Store.
func (p *StopLossStore) Marks(ctx context.Context) (map[string]float64, error) {
	out := map[string]float64{}
	err := p.s.read(ctx, func(r *conn) error {
		return query(r, sqlStopLossMarks, nil, func(st *sqlite3.Stmt) error {
			out[st.ColumnText(0)] = st.ColumnFloat(1)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("read high-water marks: %w", err)
	}
	return out, nil
}

// SetMark implements stoploss.Store: the stored mark becomes the higher of
// itself and v.
func (p *StopLossStore) SetMark(ctx context.Context, key string, v float64) error {
	if err := stoploss.CheckMark(key, v); err != nil {
		return err
	}
	err := p.s.write(ctx, func(w *conn) error {
		// Read first: the insert trigger refuses a lower value outright,
		// while SetMark ignores it.
		st, err := w.prepare(sqlStopLossMark)
		if err != nil {
			return err
		}
		if err := st.BindText(1, key); err != nil {
			st.Reset()
			return err
		}
		higher := st.Step() && st.ColumnFloat(0) >= v
		if err := st.Err(); err != nil {
			st.Reset()
			return err
		}
		st.Reset()
		if higher {
			return nil
		}
		st, err = w.prepare(sqlSetStopLossMark)
		if err != nil {
			return err
		}
		b := binder{st: st}
		b.text(key)
		b.keep(st.BindFloat(b.next(), v))
		b.int(p.s.now().UnixMilli())
		return b.exec()
	})
	if err != nil {
		return fmt.Errorf("record high-water mark %s: %w", key, err)
	}
	return nil
}
