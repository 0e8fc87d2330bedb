package sqlite

import (
	"strings"
	"testing"
)

// dropTriggers removes the append-only triggers, as someone with write access
// to the file could, so the test can tamper with rows.
func dropTriggers(t *testing.T, path string) {
	t.Helper()
	c := rawConn(t, path)
	rows := queryRows(t, c, `SELECT name FROM sqlite_schema WHERE type = 'trigger'`, nil)
	if len(rows) == 0 {
		t.Fatal("no triggers to drop")
	}
	for _, r := range rows {
		if err := c.Exec(`DROP TRIGGER "` + r[0] + `"`); err != nil {
			t.Fatal(err)
		}
	}
}

// TestVerifyDetectsTampering alters, removes or inserts rows behind the
// store's back and expects Verify to name the first row that no longer
// verifies.
func TestVerifyDetectsTampering(t *testing.T) {
	for _, tc := range []struct {
		name    string
		sql     string
		table   string
		seq     int64
		whyPart string
	}{
		{name: "altered verdict", sql: `UPDATE audit SET verdict = 'deny', blocked = 1 WHERE seq = 3`,
			table: "audit", seq: 3, whyPart: "hash does not match"},
		{name: "altered args", sql: `UPDATE audit SET args = '{"amount_usd":"1"}' WHERE seq = 2`,
			table: "audit", seq: 2, whyPart: "hash does not match"},
		{name: "altered time", sql: `UPDATE audit SET created_at = created_at + 1 WHERE seq = 4`,
			table: "audit", seq: 4, whyPart: "hash does not match"},
		{name: "altered stage", sql: `UPDATE audit SET stages = json_set(stages, '$[1].reason', 'nothing to see') WHERE seq = 2`,
			table: "audit", seq: 2, whyPart: "hash does not match"},
		{name: "removed stage", sql: `UPDATE audit SET stages = json_remove(stages, '$[0]') WHERE seq = 4`,
			table: "audit", seq: 4, whyPart: "hash does not match"},
		{name: "stages not JSON", sql: `UPDATE audit SET stages = '[{' WHERE seq = 1`,
			table: "audit", seq: 1, whyPart: "hash does not match"},
		// A second verdict key: Go reads the last, SQLite's ->> in the
		// stage_events view the first, so the hash would match what a query
		// does not show. Only the exact form warden writes is accepted.
		{name: "duplicate key in stages", sql: `UPDATE audit SET stages = replace(stages, '{"stage":"exposure"', '{"stage":"exposure","verdict":"deny"') WHERE seq = 3`,
			table: "audit", seq: 3, whyPart: "not in the form warden writes"},
		{name: "stages spaced out", sql: `UPDATE audit SET stages = json_pretty(stages) WHERE seq = 5`,
			table: "audit", seq: 5, whyPart: "not in the form warden writes"},
		{name: "altered and rehashed", sql: `UPDATE audit SET reason = 'forged', hash = 'ab' || substr(hash, 3) WHERE seq = 2`,
			table: "audit", seq: 2, whyPart: "hash does not match"},
		{name: "removed middle row", sql: `DELETE FROM audit WHERE seq = 3`,
			table: "audit", seq: 4, whyPart: "row 3 is missing"},
		{name: "removed first row", sql: `DELETE FROM audit WHERE seq = 1`,
			table: "audit", seq: 2, whyPart: "row 1 is missing"},
		{name: "renumbered after removal", sql: `DELETE FROM audit WHERE seq = 3;
			UPDATE audit SET seq = 3 WHERE seq = 4; UPDATE audit SET seq = 4 WHERE seq = 5`,
			table: "audit", seq: 3, whyPart: "prev_hash does not match the hash of row 2"},
		{name: "altered event", sql: `UPDATE security_events SET summary = 'nothing happened' WHERE seq = 2`,
			table: "security_events", seq: 2, whyPart: "hash does not match"},
		{name: "removed event", sql: `DELETE FROM security_events WHERE seq = 1`,
			table: "security_events", seq: 2, whyPart: "row 1 is missing"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, path := openTest(t)
			seed(t, s)
			dropTriggers(t, path)
			if err := rawConn(t, path).Exec(tc.sql); err != nil {
				t.Fatalf("tamper: %v", err)
			}
			rep, err := s.Verify(ctx)
			if err != nil {
				t.Fatalf("Verify: %v", err)
			}
			b := rep.FirstBreak
			if b == nil {
				t.Fatalf("Verify found nothing after %q", tc.sql)
			}
			if b.Table != tc.table || b.Seq != tc.seq || !strings.Contains(b.Why, tc.whyPart) {
				t.Errorf("Verify = %+v, want table %s seq %d with a reason containing %q", *b, tc.table, tc.seq, tc.whyPart)
			}
		})
	}
}
