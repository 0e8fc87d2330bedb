package sqlite

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/agentwarden/warden"
	"github.com/ncruces/go-sqlite3"
)

// scanEntry reads a row selected with auditColumns into e. A verdict the
// schema should have refused, or a stages column warden did not write, is an
// error; e is filled regardless (an unknown verdict as badVerdict), so Verify
// can still hash the row.
func scanEntry(st *sqlite3.Stmt, e *warden.AuditEntry) error {
	e.Seq = st.ColumnInt64(0)
	e.ID = st.ColumnText(1)
	e.TraceID = st.ColumnText(2)
	e.CreatedAt = millis(st.ColumnInt64(3))
	e.Capability = st.ColumnText(4)
	e.Action = st.ColumnText(5)
	e.Resource = st.ColumnText(6)
	e.Tool = st.ColumnText(7)
	e.Tier = warden.Tier(st.ColumnInt64(8))
	e.Args = columnJSON(st, 9)
	e.Context = st.ColumnText(10)
	e.RequestedBy = st.ColumnText(11)
	e.Autonomous = st.ColumnBool(12)
	e.Session = st.ColumnText(13)
	e.Host = st.ColumnText(14)
	e.Raw = columnJSON(st, 15)
	verdict, verr := columnVerdict(st, 16)
	e.Verdict = verdict
	e.Blocked = st.ColumnBool(17)
	e.BlockReason = st.ColumnText(18)
	e.Reason = st.ColumnText(19)
	e.Rule = st.ColumnText(20)
	e.Result = columnJSON(st, 21)
	e.Output = st.ColumnText(22)
	e.Error = st.ColumnText(23)
	e.Duration = time.Duration(st.ColumnInt64(24))
	e.PrevHash = st.ColumnText(25)
	e.Hash = st.ColumnText(26)
	stages, serr := decodeStages(st.ColumnRawText(27))
	e.Stages = stages
	if verr == nil {
		verr = serr
	}
	if verr != nil {
		return fmt.Errorf("audit row %d: %w", e.Seq, verr)
	}
	return nil
}

// scanEvent reads a row selected with eventColumns into ev.
func scanEvent(st *sqlite3.Stmt, ev *warden.SecurityEvent) {
	ev.Seq = st.ColumnInt64(0)
	ev.ID = st.ColumnText(1)
	ev.TraceID = st.ColumnText(2)
	ev.CreatedAt = millis(st.ColumnInt64(3))
	ev.Type = st.ColumnText(4)
	ev.Severity = warden.Severity(st.ColumnText(5))
	ev.Summary = st.ColumnText(6)
	ev.Metadata = columnJSON(st, 7)
	ev.PrevHash = st.ColumnText(8)
	ev.Hash = st.ColumnText(9)
}

// badVerdict stands in for a stored verdict that is not one; it hashes
// differently from every real verdict.
const badVerdict = warden.Verdict(255)

func columnVerdict(st *sqlite3.Stmt, col int) (warden.Verdict, error) {
	name := st.ColumnRawText(col)
	switch string(name) { // no allocation for the four known names
	case "deny":
		return warden.Deny, nil
	case "allow":
		return warden.Allow, nil
	case "sandbox":
		return warden.Sandbox, nil
	case "ask":
		return warden.Ask, nil
	}
	return badVerdict, fmt.Errorf("stored verdict %q is not a verdict", name)
}

// columnJSON copies a TEXT column out of SQLite's memory; NULL and empty are nil.
func columnJSON(st *sqlite3.Stmt, col int) json.RawMessage {
	raw := st.ColumnRawText(col)
	if len(raw) == 0 {
		return nil
	}
	return append(json.RawMessage(nil), raw...)
}

// millis converts stored Unix milliseconds to a UTC time.
func millis(ms int64) time.Time { return time.UnixMilli(ms).UTC() }
