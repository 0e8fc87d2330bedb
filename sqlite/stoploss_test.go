package sqlite

import (
	"strings"
	"testing"

	"github.com/agentwarden/warden/finance/stoploss"
	"github.com/agentwarden/warden/finance/stoploss/stoplosstest"
)

func TestStopLossConformance(t *testing.T) {
	stoplosstest.Run(t, func(t *testing.T) stoploss.Store {
		s, _ := openTest(t)
		return s.StopLoss()
	})
}

// TestStopLossPersists reopens the database: rules, removals and marks are
// on disk.
func TestStopLossPersists(t *testing.T) {
	s, path := openTest(t)
	sl := s.StopLoss()
	rules := stoplosstest.Rules()
	for _, r := range rules {
		if err := sl.AddRule(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	if err := sl.RemoveRule(ctx, rules[0].ID); err != nil {
		t.Fatal(err)
	}
	if err := sl.SetMark(ctx, "pos-7", 120.25); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	got, err := s2.StopLoss().Rules(ctx)
	if err != nil || len(got) != 2 || got[0].ID != rules[1].ID || got[1].MaxAge != rules[2].MaxAge {
		t.Errorf("Rules after reopening = %+v, %v; want %s and %s", got, err, rules[1].ID, rules[2].ID)
	}
	marks, err := s2.StopLoss().Marks(ctx)
	if err != nil || marks["pos-7"] != 120.25 {
		t.Errorf("Marks after reopening = %v, %v; want pos-7 at 120.25", marks, err)
	}
	// The removed rule's row is kept, marked removed.
	rows := queryRows(t, rawConn(t, path), `SELECT id, removed_at > 0 FROM stoploss_rules ORDER BY rowid`, nil)
	if len(rows) != 3 || rows[0][0] != rules[0].ID || rows[0][1] != "1" || rows[1][1] != "0" {
		t.Errorf("stoploss_rules rows = %v, want all 3 kept, the first removed", rows)
	}
}

// TestStopLossTamper proves the database itself refuses to delete or rewrite
// a rule, to revive a removed one, and to lower or delete a mark, whoever
// connects.
func TestStopLossTamper(t *testing.T) {
	s, path := openTest(t)
	sl := s.StopLoss()
	rules := stoplosstest.Rules()
	for _, r := range rules {
		if err := sl.AddRule(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	if err := sl.RemoveRule(ctx, rules[2].ID); err != nil {
		t.Fatal(err)
	}
	if err := sl.SetMark(ctx, "pos-7", 120); err != nil {
		t.Fatal(err)
	}
	c := rawConn(t, path)
	for _, tc := range []struct{ name, sql, want string }{
		{"delete a rule", `DELETE FROM stoploss_rules WHERE id = 'sl-fixed'`, "DELETE is not allowed"},
		{"delete every rule", `DELETE FROM stoploss_rules`, "DELETE is not allowed"},
		{"rewrite a rule", `UPDATE stoploss_rules SET rule = '{"target":"x"}' WHERE id = 'sl-fixed'`, "nothing else about it changes"},
		{"retarget a rule", `UPDATE stoploss_rules SET target = 'base:PEPE' WHERE id = 'sl-fixed'`, "nothing else about it changes"},
		{"remove and rewrite at once", `UPDATE stoploss_rules SET removed_at = 5, rule = '{}' WHERE id = 'sl-fixed'`, "nothing else about it changes"},
		{"revive a removed rule", `UPDATE stoploss_rules SET removed_at = 0 WHERE id = 'sl-time'`, "removed once"},
		{"replace a rule", `INSERT OR REPLACE INTO stoploss_rules (id, target, rule, created_at, removed_at)
			VALUES ('sl-fixed', 'base:WETH', '{"target":"base:WETH","kind":"fixed_percent","threshold_pct":0.9}', 0, 0)`, "replacing a rule"},
		{"a rule that is not JSON", `INSERT INTO stoploss_rules (id, target, rule, created_at, removed_at) VALUES ('x', 't', 'not json', 0, 0)`, "CHECK constraint"},
		{"a rule removed before time began", `INSERT INTO stoploss_rules (id, target, rule, created_at, removed_at) VALUES ('y', 't', '{}', 0, -1)`, "CHECK constraint"},
		{"a mark as text", `INSERT INTO stoploss_marks (target, high_water, updated_at) VALUES ('pos-9', 'high', 0)`, "cannot store TEXT"},
		{"lower a mark", `UPDATE stoploss_marks SET high_water = 100 WHERE target = 'pos-7'`, "only rises"},
		{"rename a mark", `UPDATE stoploss_marks SET target = 'pos-8' WHERE target = 'pos-7'`, "only rises"},
		{"replace a mark lower", `INSERT OR REPLACE INTO stoploss_marks (target, high_water, updated_at) VALUES ('pos-7', 1, 0)`, "only rises"},
		{"upsert a mark lower", `INSERT INTO stoploss_marks (target, high_water, updated_at) VALUES ('pos-7', 1, 0)
			ON CONFLICT (target) DO UPDATE SET high_water = excluded.high_water`, "only rises"},
		{"delete a mark", `DELETE FROM stoploss_marks`, "DELETE is not allowed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := c.Exec(tc.sql)
			if err == nil {
				t.Fatalf("%s succeeded; want the database to refuse it", tc.sql)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s failed with %v; want %q", tc.sql, err, tc.want)
			}
		})
	}
	got, err := sl.Rules(ctx)
	if err != nil || len(got) != 2 || got[0].ThresholdPct != rules[0].ThresholdPct {
		t.Errorf("Rules after refused tampering = %+v, %v; want the 2 active rules unchanged", got, err)
	}
	if marks, _ := sl.Marks(ctx); marks["pos-7"] != 120 {
		t.Errorf("mark after refused tampering = %v, want 120", marks["pos-7"])
	}
	// Raising a mark by hand is allowed: it is what SetMark does.
	if err := c.Exec(`UPDATE stoploss_marks SET high_water = 130 WHERE target = 'pos-7'`); err != nil {
		t.Errorf("raising a mark: %v", err)
	}
}

// TestStopLossStrictDecode: a stored rule with a key this warden does not
// know is an error, not a rule applied without it.
func TestStopLossStrictDecode(t *testing.T) {
	s, path := openTest(t)
	c := rawConn(t, path)
	if err := c.Exec(`INSERT INTO stoploss_rules (id, target, rule, created_at, removed_at)
		VALUES ('sl-new', 'pos-1', '{"id":"sl-new","target":"pos-1","kind":"trailing","threshold_pct":0.05,"activation_pct":0.02,"created_at":"2026-01-01T00:00:00Z"}', 0, 0)`); err != nil {
		t.Fatal(err)
	}
	if rules, err := s.StopLoss().Rules(ctx); err == nil || !strings.Contains(err.Error(), "activation_pct") {
		t.Errorf("Rules with an unknown key = %+v, %v; want an error naming activation_pct", rules, err)
	}
}
