package sqlite

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentwarden/warden"
)

// docQuery is one fenced sql block of docs/audit-queries.md and the heading it
// sits under.
type docQuery struct {
	heading, sql string
}

// readDocQueries extracts every ```sql block from the markdown file at path.
func readDocQueries(t *testing.T, path string) []docQuery {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var (
		out     []docQuery
		heading string
		block   []string
		inSQL   bool
	)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case inSQL && strings.TrimSpace(line) == "```":
			out = append(out, docQuery{heading, strings.Join(block, "\n")})
			inSQL, block = false, nil
		case inSQL:
			block = append(block, line)
		case strings.TrimSpace(line) == "```sql":
			inSQL = true
		case strings.HasPrefix(line, "#"):
			heading = strings.TrimSpace(strings.TrimLeft(line, "#"))
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if inSQL {
		t.Fatalf("%s: unterminated sql block under %q", path, heading)
	}
	return out
}

// tradeSeed is a decision as the finance stages would record it.
type tradeSeed struct {
	ago         time.Duration
	capability  string
	action      string
	resource    string
	requestedBy string
	verdict     warden.Verdict
	rule        string
	stages      []warden.StageAnswer
	debit       warden.USD
	trace       string
}

func sizing(rule string) warden.StageAnswer {
	reason := "fits within 2% of equity"
	if rule == "sizing.clipped" {
		reason = "clipped to $250 (2% of equity)"
	}
	return warden.StageAnswer{Stage: "position-sizing", Verdict: warden.Allow, Rule: rule, Reason: reason}
}

func exposure(deny bool, token string) warden.StageAnswer {
	if deny {
		return warden.StageAnswer{Stage: "exposure", Verdict: warden.Deny, Rule: "exposure.token_limit",
			Reason: token + " would be 31% of the portfolio; the limit is 25%"}
	}
	return warden.StageAnswer{Stage: "exposure", Verdict: warden.Allow, Rule: "exposure.ok", Reason: token + " stays under 25%"}
}

// querySeeds, oldest first, so seq order is time order.
var querySeeds = []tradeSeed{
	{ago: 50 * time.Hour, resource: "JUP", verdict: warden.Allow, rule: "finance.ok",
		stages: []warden.StageAnswer{sizing("sizing.clipped"), exposure(false, "JUP")}, debit: 100 * warden.MicrosPerDollar},
	{ago: 30 * time.Hour, resource: "BONK", verdict: warden.Deny, rule: "exposure.token_limit",
		stages: []warden.StageAnswer{sizing("sizing.ok"), exposure(true, "BONK")}},
	{ago: 26 * time.Hour, resource: "SOL", verdict: warden.Deny, rule: "exposure.token_limit",
		stages: []warden.StageAnswer{sizing("sizing.clipped"), exposure(true, "SOL")}},
	{ago: 3 * time.Hour, resource: "WIF", verdict: warden.Deny, rule: "finance.daily_cap",
		stages: []warden.StageAnswer{sizing("sizing.ok"), exposure(false, "WIF"),
			{Stage: "spend-cap", Verdict: warden.Deny, Rule: "finance.daily_cap", Reason: "$480 spent today; $250 more would exceed the $500 cap"}}},
	{ago: 2 * time.Hour, resource: "BONK", verdict: warden.Deny, rule: "exposure.token_limit",
		stages: []warden.StageAnswer{sizing("sizing.clipped"), exposure(true, "BONK")}},
	{ago: time.Hour, resource: "SOL", verdict: warden.Allow, rule: "finance.ok", trace: "trace-sol",
		stages: []warden.StageAnswer{sizing("sizing.ok"), exposure(false, "SOL")}, debit: 250 * warden.MicrosPerDollar},
	{ago: 30 * time.Minute, capability: warden.CapShell, action: "exec", resource: "rm -rf ~", requestedBy: "agent",
		verdict: warden.Deny, rule: "shell.destructive",
		stages: []warden.StageAnswer{{Stage: "shellguard", Verdict: warden.Deny, Rule: "shell.destructive", Reason: "deletes the home directory"}}},
}

// TestAuditQueriesDoc runs every query in docs/audit-queries.md against a
// database seeded the way warden's stages record decisions, and checks each
// query's rows. A query without expected rows here fails the test, so the
// document cannot gain an unchecked query.
func TestAuditQueriesDoc(t *testing.T) {
	s, path := openTest(t)
	now := time.Now().UTC()
	at := func(ago time.Duration) time.Time { return now.Add(-ago).Truncate(time.Millisecond) }
	secs := func(tm time.Time) string { return tm.Format("2006-01-02 15:04:05") }
	millis := func(tm time.Time) string { return tm.Format("2006-01-02 15:04:05.000") }

	times := make([]time.Time, len(querySeeds))
	for i, sd := range querySeeds {
		times[i] = at(sd.ago)
		e := &warden.AuditEntry{
			TraceID: sd.trace, CreatedAt: times[i], Capability: sd.capability, Action: sd.action, Resource: sd.resource,
			RequestedBy: sd.requestedBy, Verdict: sd.verdict, Blocked: sd.verdict == warden.Deny, Rule: sd.rule,
			Stages: sd.stages,
		}
		if e.Capability == "" {
			e.Capability, e.Action, e.RequestedBy = warden.CapTrade, "swap", "skill:rebalancer"
			e.Args = json.RawMessage(`{"amount_usd":"250"}`)
		}
		if e.TraceID == "" {
			e.TraceID = fmt.Sprintf("trace-%d", i+1)
		}
		e.Reason = sd.stages[len(sd.stages)-1].Reason
		var d *warden.Debit
		if sd.debit > 0 {
			d = &warden.Debit{Amount: sd.debit, Cap: 1000 * warden.MicrosPerDollar, Since: e.CreatedAt.Add(-warden.SpendWindow)}
		}
		if err := s.Record(ctx, e, d); err != nil {
			t.Fatal(err)
		}
	}
	for _, ev := range []warden.SecurityEvent{
		{CreatedAt: at(5 * time.Hour), Type: warden.EventKillSwitchOn, Severity: warden.SevCritical,
			Summary: "kill switch on: drawdown 12% in 1h", Metadata: json.RawMessage(`{"by":"stoploss"}`)},
		{CreatedAt: at(4 * time.Hour), Type: warden.EventKillSwitchOff, Severity: warden.SevWarn, Summary: "kill switch off by operator"},
		{CreatedAt: at(time.Hour - time.Second), Type: "swap_submitted", Severity: warden.SevInfo, Summary: "swap sent to jupiter", TraceID: "trace-sol"},
		{CreatedAt: at(10 * time.Minute), Type: warden.EventConfigChanged, Severity: warden.SevInfo, Summary: "warden.yaml changed"},
	} {
		if err := s.AppendEvent(ctx, &ev); err != nil {
			t.Fatal(err)
		}
	}

	// Sizing answers per day, over the seeds (all within 30 days).
	type dayCount struct{ answers, clipped int }
	perDay := map[string]*dayCount{}
	var days []string
	for i, sd := range querySeeds {
		for _, st := range sd.stages {
			if st.Stage != "position-sizing" {
				continue
			}
			day := times[i].Format("2006-01-02")
			if perDay[day] == nil {
				perDay[day] = &dayCount{}
				days = append(days, day)
			}
			perDay[day].answers++
			if st.Rule == "sizing.clipped" {
				perDay[day].clipped++
			}
		}
	}
	var sizingRows [][]string
	for _, day := range days {
		c := perDay[day]
		sizingRows = append(sizingRows, []string{day, fmt.Sprint(c.answers), fmt.Sprint(c.clipped),
			fmt.Sprintf("%.1f", 100*float64(c.clipped)/float64(c.answers))})
	}

	sol := times[5]
	want := map[string][][]string{
		"Why was my swap rejected yesterday?": {
			{"4", secs(times[3]), "WIF", "finance.daily_cap", "0", "position-sizing", "allow", "sizing.ok", "fits within 2% of equity"},
			{"4", secs(times[3]), "WIF", "finance.daily_cap", "1", "exposure", "allow", "exposure.ok", "WIF stays under 25%"},
			{"4", secs(times[3]), "WIF", "finance.daily_cap", "2", "spend-cap", "deny", "finance.daily_cap", "$480 spent today; $250 more would exceed the $500 cap"},
			{"5", secs(times[4]), "BONK", "exposure.token_limit", "0", "position-sizing", "allow", "sizing.clipped", "clipped to $250 (2% of equity)"},
			{"5", secs(times[4]), "BONK", "exposure.token_limit", "1", "exposure", "deny", "exposure.token_limit", "BONK would be 31% of the portfolio; the limit is 25%"},
		},
		"How often are sizing caps binding?": sizingRows,
		"Which tokens hit exposure limits most often?": {
			{"BONK", "2", secs(times[4])},
			{"SOL", "1", secs(times[2])},
		},
		"Which rules denied the most this week?": {
			{"exposure.token_limit", "3", secs(times[4])},
			{"finance.daily_cap", "1", secs(times[3])},
			{"shell.destructive", "1", secs(times[6])},
		},
		"How much was spent in the last 24 hours?": {{"1", "250.00"}},
		"What was that money spent on?": {
			{secs(sol), "250.00", "trade", "swap", "SOL", "skill:rebalancer", "trace-sol"},
		},
		"When was the kill switch turned on or off?": {
			{"1", secs(at(5 * time.Hour)), "kill_switch_on", "critical", "kill switch on: drawdown 12% in 1h", `{"by":"stoploss"}`},
			{"2", secs(at(4 * time.Hour)), "kill_switch_off", "warn", "kill switch off by operator", "NULL"},
		},
		"Everything one trace did": {
			{millis(sol), "0", "decision", "trade swap SOL", "allow", "finance.ok", "SOL stays under 25%"},
			{millis(sol), "1", "stage", "position-sizing", "allow", "sizing.ok", "fits within 2% of equity"},
			{millis(sol), "2", "stage", "exposure", "allow", "exposure.ok", "SOL stays under 25%"},
			{millis(sol), "1000", "debit", "250.00 USD", "NULL", "NULL", "NULL"},
			{millis(at(time.Hour - time.Second)), "1001", "event", "swap_submitted", "info", "NULL", "swap sent to jupiter"},
		},
	}

	queries := readDocQueries(t, filepath.Join("..", "docs", "audit-queries.md"))
	if len(queries) < len(want) {
		t.Errorf("found %d sql blocks in the document, want at least %d", len(queries), len(want))
	}
	c := rawConn(t, path)
	if err := c.Exec(`PRAGMA query_only = ON`); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, q := range queries {
		t.Run(q.heading, func(t *testing.T) {
			rows, ok := want[q.heading]
			if !ok {
				t.Fatalf("no expected rows for the query under %q; add them to this test", q.heading)
			}
			seen[q.heading] = true
			got := queryRows(t, c, q.sql, map[string]string{":trace_id": "trace-sol"})
			if !slices.EqualFunc(got, rows, slices.Equal[[]string]) {
				t.Errorf("query under %q returned\n%s\nwant\n%s", q.heading, formatRows(got), formatRows(rows))
			}
		})
	}
	for h := range want {
		if !seen[h] {
			t.Errorf("the document has no sql block under %q", h)
		}
	}
}

func formatRows(rows [][]string) string {
	var b strings.Builder
	for _, r := range rows {
		fmt.Fprintf(&b, "  %q\n", r)
	}
	return b.String()
}
