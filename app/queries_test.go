package app

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ncruces/go-sqlite3"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/audit/audittest"
	"github.com/agentwarden/warden/config"
	"github.com/agentwarden/warden/finance"
)

// The headings of docs/audit-queries.md whose queries this file runs.
const (
	qRejected = "Why was my swap rejected yesterday?"
	qSizing   = "How often are sizing caps binding?"
	qExposure = "Which tokens hit exposure limits most often?"
	qSpent    = "How much was spent in the last 24 hours?"
	qSpentOn  = "What was that money spent on?"
	qTrace    = "Everything one trace did"
	// swapsOnly is the commented line of the rejected-trades query that
	// narrows it to swaps.
	swapsOnly = "-- AND a.action = 'swap'"
)

// docSQL returns the ```sql block under each heading of the audit-queries
// document.
func docSQL(t *testing.T) map[string]string {
	t.Helper()
	path := filepath.Join("..", "docs", "audit-queries.md")
	out := map[string]string{}
	for _, q := range audittest.DocQueries(t, path) {
		out[q.Heading] = q.SQL
	}
	for _, h := range []string{qRejected, qSizing, qExposure, qSpent, qSpentOn, qTrace} {
		if out[h] == "" {
			t.Fatalf("%s has no sql block under %q", path, h)
		}
	}
	return out
}

// result is what a query returned: its column names, and each row with
// every column as text (NULL as "NULL").
type result struct {
	cols []string
	rows [][]string
}

// get returns column name of row i.
func (r result) get(t *testing.T, i int, name string) string {
	t.Helper()
	j := slices.Index(r.cols, name)
	if j < 0 {
		t.Fatalf("the query has no column %q (it has %q)", name, r.cols)
	}
	return r.rows[i][j]
}

// project returns the named columns of every row.
func (r result) project(t *testing.T, names ...string) [][]string {
	t.Helper()
	out := make([][]string, len(r.rows))
	for i := range r.rows {
		for _, n := range names {
			out[i] = append(out[i], r.get(t, i, n))
		}
	}
	return out
}

func (r result) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "  %q\n", r.cols)
	for _, row := range r.rows {
		fmt.Fprintf(&b, "  %q\n", row)
	}
	return b.String()
}

// runSQL runs the statements of query on c, binding the named parameters,
// and returns the rows of the last one.
func runSQL(t *testing.T, c *sqlite3.Conn, query string, params map[string]string) result {
	t.Helper()
	var r result
	for query != "" {
		st, tail, err := c.Prepare(query)
		if err != nil {
			t.Fatalf("prepare %q: %v", query, err)
		}
		query = tail
		if st == nil {
			continue
		}
		for i := 1; i <= st.BindCount(); i++ {
			v, ok := params[st.BindName(i)]
			if !ok {
				t.Fatalf("the query uses parameter %s, which the test does not set", st.BindName(i))
			}
			st.BindText(i, v)
		}
		r = result{}
		for i := range st.ColumnCount() {
			r.cols = append(r.cols, st.ColumnName(i))
		}
		for st.Step() {
			row := make([]string, st.ColumnCount())
			for i := range row {
				if st.ColumnType(i) == sqlite3.NULL {
					row[i] = "NULL"
				} else {
					row[i] = st.ColumnText(i)
				}
			}
			r.rows = append(r.rows, row)
		}
		if err := st.Err(); err != nil {
			t.Fatalf("run %q: %v", st.SQL(), err)
		}
		st.Close()
	}
	return r
}

// decided is one trade request as the gate saw it, and its decision.
type decided struct {
	req *warden.Request
	d   warden.Decision
}

func (x decided) stage(name string) warden.StageAnswer {
	for _, s := range x.d.Stages {
		if s.Stage == name {
			return s
		}
	}
	return warden.StageAnswer{}
}

// TestAuditQueriesOnRealDecisions runs the trade investigations of
// docs/audit-queries.md on the database of a home whose decisions came from
// the real pipeline and paper exchange, and checks that each returns what
// those decisions must produce. The queries measure from SQLite's 'now', so
// the test clock runs an hour behind the real one.
//
// WARDEN_QUERIES_SAMPLE_DB=/path/new.db keeps a copy of the database there,
// which is how the document's sample output is made:
// sqlite3 -readonly -box /path/new.db < query.sql
func TestAuditQueriesOnRealDecisions(t *testing.T) {
	clk := &clock{t: time.Now().UTC().Add(-time.Hour).Truncate(time.Second)}
	// A $600 per-token ceiling, so a second WETH entry passes it.
	a, _ := tradingHome(t, clk, [2]string{"exposure.maxPerTokenUsd", "600"})
	ctx := context.Background()
	var trades []decided
	execute := func(a *App, action, token string, params map[string]string) (decided, error) {
		t.Helper()
		tr, err := a.Trader()
		if err != nil {
			t.Fatal(err)
		}
		clk.Add(3*time.Minute + 250*time.Millisecond)
		params["chain"] = "base"
		req := tradeReq(action, token, params)
		ex, err := tr.Execute(ctx, req, finance.DecideOptions{})
		if ex.Decision.TraceID == "" {
			t.Fatalf("%s %s: nothing was decided: %v", action, token, err)
		}
		x := decided{req, ex.Decision}
		trades = append(trades, x)
		return x, err
	}
	expect := func(x decided, err error, v warden.Verdict, stage, rule string) decided {
		t.Helper()
		if x.d.Verdict != v || x.stage(stage).Rule != rule {
			t.Fatalf("%s %s: %v by %s (%s); want %v with %s answering %s", x.req.Action, x.req.Resource, x.d.Verdict, x.d.Rule, x.d.Reason, v, stage, rule)
		}
		if v == warden.Deny && err != nil {
			t.Fatalf("%s %s: %v", x.req.Action, x.req.Resource, err)
		}
		return x
	}

	// Allowed, but the paper exchange holds no WETH to sell: the $300
	// reservation is released.
	released, err := execute(a, "sell", "WETH", map[string]string{"amount_usd": "300"})
	if released.d.Verdict != warden.Allow || err == nil {
		t.Fatalf("selling WETH not held: %v, %v; want allowed, then a backend error", released.d.Verdict, err)
	}
	bought, err := execute(a, "buy", "WETH", map[string]string{"amount_usd": "500"})
	expect(bought, err, warden.Allow, "position-sizing", "sizing.within")
	if err != nil {
		t.Fatal(err)
	}
	swap, err := execute(a, "swap", "WETH", map[string]string{"token_in": "USDC", "amount_usd": "200"})
	expect(swap, err, warden.Deny, "exposure-limits", "exposure.per_token")
	squid, err := execute(a, "buy", "SQUID", map[string]string{"amount_usd": "100"})
	expect(squid, err, warden.Deny, "token-safety", squid.stage("token-safety").Rule)
	if s := squid.stage("token-safety"); s.Verdict != warden.Deny {
		t.Fatalf("buying SQUID: token safety answered %v (%s); want deny", s.Verdict, s.Rule)
	}
	loose, err := execute(a, "buy", "WETH", map[string]string{"amount_usd": "50", "max_slippage": "0.05"})
	expect(loose, err, warden.Deny, "slippage", "slippage.tolerance")

	// 10 % of a $10,000 portfolio is above the $500 per-transaction max: the
	// cap binds.
	for _, kv := range [][2]string{{"sizing.strategy", "fixed_fraction"}, {"sizing.fraction", "0.1"}, {"exposure.maxPerTokenUsd", "5000"}} {
		if err := config.Set(a.Home.PolicyPath(), kv[0], kv[1]); err != nil {
			t.Fatal(err)
		}
	}
	b, err := Open(ctx, a.Home, Options{Now: clk.Now, OpenDatabase: true})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	clipped, err := execute(b, "buy", "WETH", map[string]string{"amount_usd": "500"})
	expect(clipped, err, warden.Allow, "position-sizing", "sizing.clipped")
	if err != nil {
		t.Fatal(err)
	}

	c, err := sqlite3.OpenFlags(a.Home.DatabasePath(), sqlite3.OPEN_READONLY)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.BusyTimeout(5 * time.Second); err != nil {
		t.Fatal(err)
	}
	if keep := os.Getenv("WARDEN_QUERIES_SAMPLE_DB"); keep != "" {
		if err := c.Exec("VACUUM INTO '" + strings.ReplaceAll(keep, "'", "''") + "'"); err != nil {
			t.Fatalf("keep a copy of the database: %v", err)
		}
		t.Logf("kept the database as %s", keep)
	}
	if err := c.Exec(`PRAGMA query_only = ON`); err != nil {
		t.Fatal(err)
	}
	queries := docSQL(t)
	secs := func(x decided) string { return x.req.Received.UTC().Format(time.DateTime) }

	t.Run("rejected", func(t *testing.T) {
		cols := []string{"at_utc", "action", "token", "usd", "decided_by", "position", "stage", "verdict", "rule", "reason"}
		var want, wantSwaps [][]string
		for _, x := range trades {
			if x.d.Verdict != warden.Deny {
				continue
			}
			for i, s := range x.d.Stages {
				if s.Verdict == warden.Allow {
					continue
				}
				usd := strings.Trim(string(x.req.Params["amount_usd"]), `"`)
				row := []string{secs(x), x.req.Action, x.req.Resource, usd, x.d.Rule,
					strconv.Itoa(i), s.Stage, s.Verdict.String(), s.Rule, s.Reason}
				want = append(want, row)
				if x.req.Action == "swap" {
					wantSwaps = append(wantSwaps, row)
				}
			}
		}
		if len(want) < 3 {
			t.Fatalf("only %d non-allow answers among the refused trades", len(want))
		}
		got := runSQL(t, c, queries[qRejected], nil)
		if p := got.project(t, cols...); !slices.EqualFunc(p, want, slices.Equal[[]string]) {
			t.Errorf("%q returned\n%swant (%q)\n%s", qRejected, got, cols, result{rows: want})
		}
		if !slices.ContainsFunc(got.project(t, "token", "stage", "rule"), func(r []string) bool {
			return slices.Equal(r, []string{"WETH", "exposure-limits", "exposure.per_token"})
		}) {
			t.Errorf("the refused swap's exposure answer is missing:\n%s", got)
		}
		if !strings.Contains(queries[qRejected], swapsOnly) {
			t.Fatalf("the query under %q has no line %q to narrow it to swaps", qRejected, swapsOnly)
		}
		swaps := runSQL(t, c, strings.Replace(queries[qRejected], swapsOnly, strings.TrimPrefix(swapsOnly, "-- "), 1), nil)
		if p := swaps.project(t, cols...); !slices.EqualFunc(p, wantSwaps, slices.Equal[[]string]) {
			t.Errorf("narrowed to swaps, it returned\n%swant\n%s", swaps, result{rows: wantSwaps})
		}
	})

	t.Run("sizing", func(t *testing.T) {
		var answers, sized, clip int
		for _, x := range trades {
			switch x.stage("position-sizing").Rule {
			case "sizing.clipped":
				clip++
				sized++
			case "sizing.within":
				sized++
			}
			answers++
		}
		got := runSQL(t, c, queries[qSizing], nil)
		// The decisions span half an hour, so at most two days.
		var gotAnswers, gotSized, gotClipped int
		for i := range got.rows {
			for name, sum := range map[string]*int{"sizing_answers": &gotAnswers, "sized": &gotSized, "clipped": &gotClipped} {
				n, err := strconv.Atoi(got.get(t, i, name))
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				*sum += n
			}
		}
		if clip < 1 || gotAnswers != answers || gotSized != sized || gotClipped != clip {
			t.Errorf("%q returned\n%swant %d answers, %d sized, %d clipped in all", qSizing, got, answers, sized, clip)
		}
		if len(got.rows) == 1 {
			if pct := got.get(t, 0, "clipped_pct"); pct != fmt.Sprintf("%.1f", 100*float64(clip)/float64(sized)) {
				t.Errorf("clipped_pct = %s, want %d of %d", pct, clip, sized)
			}
		}
	})

	t.Run("exposure", func(t *testing.T) {
		got := runSQL(t, c, queries[qExposure], nil)
		want := [][]string{{"WETH", "exposure.per_token", "1", secs(swap)}}
		if p := got.project(t, "token", "ceiling", "denials", "last_utc"); !slices.EqualFunc(p, want, slices.Equal[[]string]) {
			t.Errorf("%q returned\n%swant\n%s", qExposure, got, result{rows: want})
		}
	})

	t.Run("spend", func(t *testing.T) {
		if got := runSQL(t, c, queries[qSpent], nil); !slices.EqualFunc(got.rows, [][]string{{"2", "1000.00"}}, slices.Equal[[]string]) {
			t.Errorf("%q returned\n%swant 2 debits, $1000.00: the released $300 does not count", qSpent, got)
		}
		got := runSQL(t, c, queries[qSpentOn], nil)
		want := [][]string{{"500.00", "buy", "WETH", bought.d.TraceID}, {"500.00", "buy", "WETH", clipped.d.TraceID}}
		if p := got.project(t, "usd", "action", "resource", "trace_id"); !slices.EqualFunc(p, want, slices.Equal[[]string]) {
			t.Errorf("%q returned\n%swant\n%s", qSpentOn, got, result{rows: want})
		}
		trace := runSQL(t, c, queries[qTrace], map[string]string{":trace_id": released.d.TraceID})
		kinds := trace.project(t, "kind", "what")
		if !slices.ContainsFunc(kinds, func(r []string) bool { return slices.Equal(r, []string{"release", "300.00 USD"}) }) {
			t.Errorf("%q for the released sell returned\n%swant a release of 300.00 USD", qTrace, trace)
		}
	})
}
