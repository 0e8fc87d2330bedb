package sqlite

import (
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/audit"
	"github.com/ncruces/go-sqlite3"
)

// createV4 makes a database at schema version 4 (stage answers in a
// stage_events table) holding entries, hashed and chained as that version
// stored them.
func createV4(t *testing.T, path string, entries []*warden.AuditEntry) {
	t.Helper()
	c, err := sqlite3.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := setWAL(c); err != nil {
		t.Fatal(err)
	}
	for v := range 4 {
		if err := migrations[v](c); err != nil {
			t.Fatalf("migration %d: %v", v, err)
		}
	}
	if err := c.Exec(`PRAGMA user_version = 4`); err != nil {
		t.Fatal(err)
	}
	cols := strings.TrimSuffix(auditColumns, ", stages")
	insAudit, _, err := c.Prepare(`INSERT INTO audit (` + cols + `) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
	if err != nil {
		t.Fatal(err)
	}
	defer insAudit.Close()
	insStage, _, err := c.Prepare(`INSERT INTO stage_events (audit_seq, trace_id, position, stage, verdict, reason, rule, error, duration)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`)
	if err != nil {
		t.Fatal(err)
	}
	defer insStage.Close()
	prev := audit.GenesisHash
	for i, e := range entries {
		if err := audit.NormalizeEntry(e, time.Now()); err != nil {
			t.Fatal(err)
		}
		e.ID, e.Seq, e.PrevHash = fmt.Sprintf("id-%d", i), int64(i+1), prev
		e.Hash = audit.HashEntry(prev, e)
		prev = e.Hash
		b := binder{st: insAudit}
		for _, v := range []any{e.Seq, e.ID, e.TraceID, e.CreatedAt.UnixMilli(), e.Capability, e.Action, e.Resource, e.Tool,
			int64(e.Tier), e.Args, e.Context, e.RequestedBy, e.Autonomous, e.Session, e.Host, e.Raw, e.Verdict.String(),
			e.Blocked, e.BlockReason, e.Reason, e.Rule, e.Result, e.Output, e.Error, int64(e.Duration), e.PrevHash, e.Hash} {
			switch v := v.(type) {
			case int64:
				b.int(v)
			case string:
				b.text(v)
			case bool:
				b.bool(v)
			case []byte:
				b.json(v)
			default:
				b.json(reflectBytes(v))
			}
		}
		if err := b.exec(); err != nil {
			t.Fatalf("insert v4 audit row: %v", err)
		}
		for p, a := range e.Stages {
			b := binder{st: insStage}
			b.int(e.Seq)
			b.text(e.TraceID)
			b.int(int64(p))
			b.text(a.Stage)
			b.text(a.Verdict.String())
			b.text(a.Reason)
			b.text(a.Rule)
			b.text(a.Error)
			b.int(int64(a.Duration))
			if err := b.exec(); err != nil {
				t.Fatalf("insert v4 stage row: %v", err)
			}
		}
	}
}

// reflectBytes turns a json.RawMessage (a named []byte) into its bytes.
func reflectBytes(v any) []byte {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Slice || rv.Type().Elem().Kind() != reflect.Uint8 {
		panic(fmt.Sprintf("unexpected column value %T", v))
	}
	return rv.Bytes()
}

// TestMigrationMovesStagesIntoTheAuditRow opens a version 4 database: every
// stage answer ends up in its audit row's stages column, the chain still
// verifies, the stage_events view shows the same rows the table held, and new
// entries chain on.
func TestMigrationMovesStagesIntoTheAuditRow(t *testing.T) {
	path := filepath.Join(t.TempDir(), "warden.db")
	old := []*warden.AuditEntry{
		{TraceID: "t1", Capability: warden.CapShell, Action: "exec", Resource: "ls", Verdict: warden.Allow,
			Stages: []warden.StageAnswer{
				{Stage: "killswitch", Verdict: warden.Allow, Rule: "safety.kill_switch_off", Duration: 3 * time.Microsecond},
				{Stage: "shellguard", Verdict: warden.Allow, Reason: `reads "a <b> & c"` + "\n\ttab", Rule: "shell.read", Duration: 97 * time.Microsecond},
			}},
		{TraceID: "t2", Capability: warden.CapTool, Action: "call", Resource: "get_price", Verdict: warden.Deny, Reason: "no stages"},
		{TraceID: "t3", Capability: warden.CapTrade, Action: "swap", Resource: "SOL", Verdict: warden.Ask,
			Args: []byte(`{"amount_usd":"10"}`),
			Stages: []warden.StageAnswer{
				{Stage: "tier", Verdict: warden.Ask, Reason: "tier 3 — ask ✓", Rule: "tier.ask", Error: "stage error text"},
			}},
	}
	createV4(t, path, old)
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatalf("Open a version 4 database: %v", err)
	}
	defer s.Close()
	rep, err := s.Verify(ctx)
	if err != nil || !rep.OK() || rep.AuditRows != 3 {
		t.Fatalf("Verify after migration = %+v (break %+v), %v; want 3 intact rows", rep, rep.FirstBreak, err)
	}
	got, err := s.Entries(ctx, warden.AuditFilter{})
	if err != nil || len(got) != 3 {
		t.Fatalf("Entries = %d, %v", len(got), err)
	}
	for i := range old {
		if !reflect.DeepEqual(got[i].Stages, old[i].Stages) {
			t.Errorf("entry %d stages = %+v, want %+v", i+1, got[i].Stages, old[i].Stages)
		}
	}
	rows := queryRows(t, rawConn(t, path), `SELECT audit_seq, trace_id, position, stage, verdict, reason, rule, error, duration
		FROM stage_events ORDER BY audit_seq, position`, nil)
	want := [][]string{
		{"1", "t1", "0", "killswitch", "allow", "", "safety.kill_switch_off", "", "3000"},
		{"1", "t1", "1", "shellguard", "allow", `reads "a <b> & c"` + "\n\ttab", "shell.read", "", "97000"},
		{"3", "t3", "0", "tier", "ask", "tier 3 — ask ✓", "tier.ask", "stage error text", "0"},
	}
	if !reflect.DeepEqual(rows, want) {
		t.Errorf("stage_events view = %q, want %q", rows, want)
	}
	if err := s.Record(ctx, benchEntry(), nil); err != nil {
		t.Fatal(err)
	}
	if rep, err := s.Verify(ctx); err != nil || !rep.OK() || rep.AuditRows != 4 {
		t.Errorf("Verify after a new entry = %+v (break %+v), %v", rep, rep.FirstBreak, err)
	}
}

// TestStagesRoundTrip stores stage answers with every kind of text JSON must
// escape, and text that is not UTF-8: what is read back is what was hashed.
func TestStagesRoundTrip(t *testing.T) {
	s, _ := openTest(t)
	texts := []string{"", "plain", `"quoted" \back\slash`, "<html>&amp;", "nul\x00byte", "ctl\x01\x1f\x7f", "line\u2028sep\u2029",
		"emoji 😀", "bad \xff\xfe utf-8", "\xed\xa0\x80 surrogate"}
	e := &warden.AuditEntry{TraceID: "rt", Capability: warden.CapShell, Verdict: warden.Sandbox}
	for i, x := range texts {
		e.Stages = append(e.Stages, warden.StageAnswer{Stage: x, Verdict: warden.Verdict(i % 4), Reason: x + x, Rule: x, Error: x, Duration: time.Duration(i) * time.Hour})
	}
	if err := s.Record(ctx, e, nil); err != nil {
		t.Fatal(err)
	}
	got, err := s.Entries(ctx, warden.AuditFilter{})
	if err != nil || len(got) != 1 {
		t.Fatalf("Entries = %d, %v", len(got), err)
	}
	if !reflect.DeepEqual(got[0].Stages, e.Stages) {
		t.Errorf("stages read back = %q\nwant %q", got[0].Stages, e.Stages)
	}
	if strings.Contains(got[0].Stages[8].Reason, "\xff") {
		t.Errorf("text that is not UTF-8 was stored as it was: %q", got[0].Stages[8].Reason)
	}
	if rep, err := s.Verify(ctx); err != nil || !rep.OK() {
		t.Errorf("Verify = %+v (break %+v), %v", rep, rep.FirstBreak, err)
	}
}
