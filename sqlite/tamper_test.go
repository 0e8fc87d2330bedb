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
		{name: "altered stage", sql: `UPDATE stage_events SET reason = 'nothing to see' WHERE audit_seq = 2 AND position = 1`,
			table: "audit", seq: 2, whyPart: "hash does not match"},
		{name: "removed stage", sql: `DELETE FROM stage_events WHERE audit_seq = 4 AND position = 0`,
			table: "audit", seq: 4, whyPart: "position"},
		{name: "stage moved to another trace", sql: `UPDATE stage_events SET trace_id = 'other' WHERE audit_seq = 1 AND position = 1`,
			table: "audit", seq: 1, whyPart: "trace_id"},
		{name: "altered and rehashed", sql: `UPDATE audit SET reason = 'forged', hash = 'ab' || substr(hash, 3) WHERE seq = 2`,
			table: "audit", seq: 2, whyPart: "hash does not match"},
		{name: "removed middle row with its stages", sql: `DELETE FROM stage_events WHERE audit_seq = 3; DELETE FROM audit WHERE seq = 3`,
			table: "audit", seq: 4, whyPart: "row 3 is missing"},
		{name: "removed middle row", sql: `DELETE FROM audit WHERE seq = 3`,
			table: "audit", seq: 3, whyPart: "belongs to no audit row"},
		{name: "removed first row", sql: `DELETE FROM stage_events WHERE audit_seq = 1; DELETE FROM audit WHERE seq = 1`,
			table: "audit", seq: 2, whyPart: "row 1 is missing"},
		{name: "renumbered after removal", sql: `DELETE FROM stage_events WHERE audit_seq = 3; DELETE FROM audit WHERE seq = 3;
			UPDATE audit SET seq = 3 WHERE seq = 4; UPDATE stage_events SET audit_seq = 3 WHERE audit_seq = 4;
			UPDATE audit SET seq = 4 WHERE seq = 5; UPDATE stage_events SET audit_seq = 4 WHERE audit_seq = 5`,
			table: "audit", seq: 3, whyPart: "prev_hash does not match the hash of row 2"},
		{name: "stage for a missing row", sql: `INSERT INTO stage_events VALUES (99, 'x', 0, 'exposure', 'allow', '', '', '', 0)`,
			table: "audit", seq: 99, whyPart: "belongs to no audit row"},
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
