package sqlite

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/agentwarden/warden"
	"github.com/ncruces/go-sqlite3"
)

// A decision's stage answers are stored in its audit row, in the stages
// column, as a JSON array in the order the stages ran. One column instead of a
// row per stage keeps the write to one B-tree insert per decision; the
// stage_events view gives the same answers back as rows for SQL queries.
//
// The stored text must be exactly what encodeStages writes: decodeStages
// refuses anything else (duplicate or unknown keys, other spacing or
// escaping), so the answers Verify hashes are the only reading of the column.

// schemaV5 moves the stage answers of existing rows into audit.stages and
// replaces the stage_events table with a view over that column. It also drops
// the audit indexes only `warden audit` filters used (capability, tool,
// verdict, requested_by): each cost every decision a B-tree insert and a page
// in its commit, while those filters read newest-first and stop at their
// limit (sqlite.BenchmarkEntriesUnindexedFilter).
func schemaV5(c *sqlite3.Conn) error {
	if err := c.Exec(`ALTER TABLE audit ADD COLUMN stages TEXT; -- JSON array, or NULL for none
DROP INDEX audit_capability;
DROP INDEX audit_tool;
DROP INDEX audit_verdict;
DROP INDEX audit_requested_by;
DROP TRIGGER audit_no_update;`); err != nil {
		return err
	}
	if err := moveStageRows(c); err != nil {
		return err
	}
	return c.Exec(`
CREATE TRIGGER audit_no_update BEFORE UPDATE ON audit
BEGIN SELECT RAISE(ABORT, 'audit is append-only: UPDATE is not allowed'); END;
DROP TABLE stage_events;
CREATE VIEW stage_events AS
SELECT a.seq AS audit_seq, a.trace_id AS trace_id, s.key AS position,
	s.value ->> '$.stage' AS stage, s.value ->> '$.verdict' AS verdict,
	s.value ->> '$.reason' AS reason, s.value ->> '$.rule' AS rule,
	s.value ->> '$.error' AS error, s.value ->> '$.duration' AS duration
FROM audit AS a, json_each(a.stages) AS s
WHERE a.stages IS NOT NULL;`)
}

// moveStageRows writes each audit row's stage_events rows into its stages
// column. It runs while the UPDATE trigger is dropped, inside the migration's
// transaction.
func moveStageRows(c *sqlite3.Conn) error {
	rows, _, err := c.Prepare(`SELECT audit_seq, stage, verdict, reason, rule, error, duration
FROM stage_events ORDER BY audit_seq, position`)
	if err != nil {
		return err
	}
	defer rows.Close()
	upd, _, err := c.Prepare(`UPDATE audit SET stages = ? WHERE seq = ?`)
	if err != nil {
		return err
	}
	defer upd.Close()
	var (
		seq    int64
		stages []warden.StageAnswer
	)
	flush := func() error {
		if len(stages) == 0 {
			return nil
		}
		raw, err := encodeStages(stages)
		if err != nil {
			return fmt.Errorf("audit row %d: %w", seq, err)
		}
		b := binder{st: upd}
		b.json(raw)
		b.int(seq)
		stages = stages[:0]
		return b.exec()
	}
	for rows.Step() {
		if s := rows.ColumnInt64(0); s != seq {
			if err := flush(); err != nil {
				return err
			}
			seq = s
		}
		v, err := columnVerdict(rows, 2)
		if err != nil {
			return fmt.Errorf("audit row %d: %w", seq, err)
		}
		stages = append(stages, warden.StageAnswer{
			Stage: rows.ColumnText(1), Verdict: v, Reason: rows.ColumnText(3),
			Rule: rows.ColumnText(4), Error: rows.ColumnText(5), Duration: time.Duration(rows.ColumnInt64(6)),
		})
	}
	if err := rows.Err(); err != nil {
		return err
	}
	return flush()
}

// stageJSON is one stage answer as stored; duration is in nanoseconds.
type stageJSON struct {
	Stage    string `json:"stage"`
	Verdict  string `json:"verdict"`
	Reason   string `json:"reason"`
	Rule     string `json:"rule"`
	Error    string `json:"error"`
	Duration int64  `json:"duration"`
}

// encodeStages returns the stored form of stages: nil for none. Text that is
// not UTF-8 cannot be stored in JSON unchanged, so it is an error
// (audit.NormalizeEntry makes a new entry's answers UTF-8 before hashing).
//
// The form is json.Marshal of []stageJSON, byte for byte (FuzzEncodeStages
// checks it), written directly: every decision's row is encoded in the
// single writer's commit, and reflection made it several times slower.
func encodeStages(stages []warden.StageAnswer) ([]byte, error) {
	if len(stages) == 0 {
		return nil, nil
	}
	n := 2
	for i := range stages {
		a := &stages[i]
		for _, s := range [...]string{a.Stage, a.Reason, a.Rule, a.Error} {
			if !utf8.ValidString(s) {
				return nil, fmt.Errorf("stage %d (%q) holds text that is not UTF-8", i, a.Stage)
			}
			n += len(s)
		}
		n += 96
	}
	b := make([]byte, 0, n)
	b = append(b, '[')
	for i := range stages {
		a := &stages[i]
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"stage":`...)
		b = appendJSONString(b, a.Stage)
		b = append(b, `,"verdict":`...)
		b = appendJSONString(b, a.Verdict.String())
		b = append(b, `,"reason":`...)
		b = appendJSONString(b, a.Reason)
		b = append(b, `,"rule":`...)
		b = appendJSONString(b, a.Rule)
		b = append(b, `,"error":`...)
		b = appendJSONString(b, a.Error)
		b = append(b, `,"duration":`...)
		b = strconv.AppendInt(b, int64(a.Duration), 10)
		b = append(b, '}')
	}
	return append(b, ']'), nil
}

// appendJSONString appends s as json.Marshal writes it. Printable ASCII, the
// usual case, is copied, with a backslash before '"' and '\\'; text with
// anything else goes through json.Marshal, whose escaping (control
// characters, HTML characters, U+2028 and U+2029) is the stored form.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '<' || c == '>' || c == '&' || c >= utf8.RuneSelf {
			q, _ := json.Marshal(s) // a string always marshals
			return append(b, q...)
		}
	}
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == '"' || c == '\\' {
			b = append(b, '\\')
		}
		b = append(b, s[i])
	}
	return append(b, '"')
}

// decodeStages reads a stages column. Anything encodeStages would not have
// written is an error; the answers are still returned when the JSON parses,
// with an unknown verdict as badVerdict, so Verify can hash the row.
func decodeStages(raw []byte) ([]warden.StageAnswer, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	var in []stageJSON
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		return nil, fmt.Errorf("stored stages are not a stage list: %w", err)
	}
	if len(in) == 0 {
		return nil, fmt.Errorf("stored stages are an empty list (none is stored as NULL)")
	}
	stages := make([]warden.StageAnswer, len(in))
	var verr error
	for i, s := range in {
		v, err := warden.ParseVerdict(s.Verdict)
		if err != nil {
			v = badVerdict
			if verr == nil {
				verr = fmt.Errorf("stage %d (%q): stored verdict %q is not a verdict", i, s.Stage, s.Verdict)
			}
		}
		stages[i] = warden.StageAnswer{Stage: s.Stage, Verdict: v, Reason: s.Reason, Rule: s.Rule, Error: s.Error, Duration: time.Duration(s.Duration)}
	}
	if verr != nil {
		return stages, verr
	}
	canon, err := encodeStages(stages)
	if err != nil || !bytes.Equal(canon, raw) {
		return stages, fmt.Errorf("stored stages are not in the form warden writes")
	}
	return stages, nil
}
