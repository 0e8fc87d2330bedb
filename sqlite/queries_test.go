package sqlite

import (
	"cmp"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/audit/audittest"
)

// tradeSeed is a decision as warden's stages record it.
type tradeSeed struct {
	ago         time.Duration
	capability  string // trade when empty
	action      string // swap when empty
	resource    string
	amount      string // the trade's amount_usd param; 250 when empty
	requestedBy string
	verdict     warden.Verdict
	rule        string
	stages      []warden.StageAnswer
	debit       warden.USD
	trace       string
	// released, when set, is why the debit was given back (the backend did
	// not execute the trade): a spend_releases row, a second after the decision.
	released string
}

// tradeStages is what the twelve stages of a $amount trade answer (the
// global ones, then the FullRiskManager's, with their real names and rule
// ids): allow, except for the answers given, which replace the stage of
// the same name.
func tradeStages(amount string, answers ...warden.StageAnswer) []warden.StageAnswer {
	allow := func(stage, rule, reason string) warden.StageAnswer {
		return warden.StageAnswer{Stage: stage, Verdict: warden.Allow, Rule: rule, Reason: reason}
	}
	out := []warden.StageAnswer{
		allow("policy-integrity", "safety.policy_invalid", "the safety section of the policy file is valid"),
		allow("kill-switch", "safety.kill_switch", "the emergency stop is off"),
		allow("daily-spend-cap", "safety.daily_cap", "$"+amount+" fits the daily cap: $0 of $1000 spent in the last 24 hours"),
		allow("per-transaction-max", "safety.max_transaction", "$"+amount+" is within the per-transaction maximum of $500"),
		allow("tier-gate", "safety.tier_gate", "a human is in the loop this turn"),
		allow("manual-only", "safety.manual_only", "below tier 4"),
		allow("token-safety", "token.canonical", "the token is the registry's canonical one"),
		allow("recipients", "recipient.self", "the output pays the own wallet"),
		sizing("sizing.within", amount),
		allow("exposure-limits", "exposure.within", "after $"+amount+" more: within every ceiling"),
		allow("slippage", "slippage.within", "tolerance 2.00% and price impact 0.03% within the 2.00% tier for $"+amount),
		allow("risk-floor", "risk.floor", "$"+amount+" is held by the kill switch, the per-transaction max and the daily cap (reserved atomically when recorded)"),
	}
	for _, a := range answers {
		i := slices.IndexFunc(out, func(s warden.StageAnswer) bool { return s.Stage == a.Stage })
		out[i] = a
	}
	return out
}

func sizing(rule, amount string) warden.StageAnswer {
	a := warden.StageAnswer{Stage: "position-sizing", Verdict: warden.Allow, Rule: rule}
	switch rule {
	case "sizing.within":
		a.Reason = "$" + amount + " is within the $500 the fixed_usd strategy allows (fixed $500)"
	case "sizing.clipped":
		a.Reason = "$" + amount + " is within the $500 the fixed_fraction strategy allows ($1000 of a $10000 portfolio, clipped to the $500 per-transaction max)"
	case "sizing.not_entry":
		a.Reason = "sizing applies to entries; a sell is not one"
	}
	return a
}

func deny(stage, rule, reason string) warden.StageAnswer {
	return warden.StageAnswer{Stage: stage, Verdict: warden.Deny, Rule: rule, Reason: reason}
}

func exposureDeny(rule, asset string) warden.StageAnswer {
	reason := map[string]string{
		"exposure.per_token":   asset + " exposure would be $5100 (now $4850 across all chains, plus $250), above the per-token ceiling of $5000",
		"exposure.per_chain":   "exposure on solana would be $15100 (now $14850, plus $250), above the per-chain ceiling of $15000",
		"exposure.asset_class": "major would be 41.00% of the $20000 portfolio ($8200), above the 40.00% ceiling for an asset class",
		"exposure.total":       "total exposure would be $50100 (now $49850, plus $250), above the ceiling of $50000",
	}[rule]
	return deny("exposure-limits", rule, reason)
}

const scamReason = "I don't recognize 'SQUID' on 'base' as a canonical token, and it matches our scam list (the 2021 Squid Game token rug pull)"

// querySeeds, oldest first, so seq order is time order (seq = index + 1).
var querySeeds = []tradeSeed{
	0: {ago: 50 * time.Hour, action: "buy", resource: "JUP", amount: "100", verdict: warden.Allow, rule: "risk.floor",
		stages: tradeStages("100", sizing("sizing.clipped", "100")), debit: 100 * warden.MicrosPerDollar},
	1: {ago: 30 * time.Hour, resource: "BONK", verdict: warden.Deny, rule: "exposure.per_token",
		stages: tradeStages("250", exposureDeny("exposure.per_token", "BONK"))},
	2: {ago: 28 * time.Hour, resource: "SOL", verdict: warden.Deny, rule: "exposure.asset_class",
		stages: tradeStages("250", sizing("sizing.clipped", "250"), exposureDeny("exposure.asset_class", "SOL"))},
	3: {ago: 27 * time.Hour, resource: "SOL", verdict: warden.Deny, rule: "exposure.per_chain",
		stages: tradeStages("250", exposureDeny("exposure.per_chain", "SOL"))},
	4: {ago: 26 * time.Hour, resource: "SOL", verdict: warden.Deny, rule: "exposure.total",
		stages: tradeStages("250", exposureDeny("exposure.total", "SOL"))},
	5: {ago: 3 * time.Hour, resource: "WIF", verdict: warden.Deny, rule: "safety.daily_cap",
		stages: tradeStages("250", deny("daily-spend-cap", "safety.daily_cap", "$900 already spent in the last 24 hours; $250 more would exceed the daily cap of $1000"))},
	6: {ago: 2 * time.Hour, resource: "BONK", verdict: warden.Deny, rule: "exposure.per_token",
		stages: tradeStages("250", sizing("sizing.clipped", "250"), exposureDeny("exposure.per_token", "BONK"))},
	7: {ago: 90 * time.Minute, action: "sell", resource: "WETH", amount: "300", verdict: warden.Allow, rule: "risk.floor", trace: "trace-released",
		stages: tradeStages("300", sizing("sizing.not_entry", "300"),
			warden.StageAnswer{Stage: "exposure-limits", Verdict: warden.Allow, Rule: "exposure.reducing", Reason: "a sell does not add exposure, so the limits (which bound increases) do not apply"}),
		debit: 300 * warden.MicrosPerDollar, released: "the backend did not execute: the paper wallet holds 0 WETH (worth $0); the sell needs 3: insufficient funds"},
	8: {ago: time.Hour, resource: "SOL", verdict: warden.Allow, rule: "risk.floor", trace: "trace-sol",
		stages: tradeStages("250"), debit: 250 * warden.MicrosPerDollar},
	9: {ago: 45 * time.Minute, action: "buy", resource: "SQUID", amount: "100", verdict: warden.Deny, rule: "token.scam",
		stages: tradeStages("100", deny("token-safety", "token.scam", scamReason),
			deny("exposure-limits", "exposure.unresolved", "cannot judge exposure: "+scamReason),
			deny("slippage", "slippage.unresolved", "cannot simulate: "+scamReason))},
	10: {ago: 30 * time.Minute, capability: warden.CapShell, action: "exec", resource: "rm -rf ~", requestedBy: "agent",
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
			e.Capability, e.Action, e.RequestedBy = warden.CapTrade, cmp.Or(sd.action, "swap"), "skill:rebalancer"
			e.Args = json.RawMessage(`{"amount_usd":"` + cmp.Or(sd.amount, "250") + `","chain":"base"}`)
		}
		if e.TraceID == "" {
			e.TraceID = fmt.Sprintf("trace-%d", i+1)
		}
		// The decision's reason is the first deny's, or for an allow the
		// last stage's (as the pipeline combines them).
		e.Reason = sd.stages[len(sd.stages)-1].Reason
		if j := slices.IndexFunc(sd.stages, func(s warden.StageAnswer) bool { return s.Verdict == warden.Deny }); j >= 0 {
			e.Reason = sd.stages[j].Reason
		}
		var d *warden.Debit
		if sd.debit > 0 {
			d = &warden.Debit{Amount: sd.debit, Cap: 1000 * warden.MicrosPerDollar, Since: e.CreatedAt.Add(-warden.SpendWindow)}
		}
		if err := s.Record(ctx, e, d); err != nil {
			t.Fatal(err)
		}
		if sd.released != "" {
			if err := s.Release(ctx, e.TraceID, sd.released, times[i].Add(time.Second)); err != nil {
				t.Fatal(err)
			}
		}
	}
	released := times[7].Add(time.Second)
	for _, ev := range []warden.SecurityEvent{
		{CreatedAt: at(5 * time.Hour), Type: warden.EventKillSwitchOn, Severity: warden.SevCritical,
			Summary: "kill switch on: drawdown 12% in 1h", Metadata: json.RawMessage(`{"by":"stoploss"}`)},
		{CreatedAt: at(4 * time.Hour), Type: warden.EventKillSwitchOff, Severity: warden.SevWarn, Summary: "kill switch off by operator"},
		{CreatedAt: released, Type: warden.EventActionResult, Severity: warden.SevWarn, TraceID: "trace-released",
			Summary: "trade failed: the paper wallet holds 0 WETH (worth $0); the sell needs 3: insufficient funds"},
		{CreatedAt: at(time.Hour - time.Second), Type: "swap_submitted", Severity: warden.SevInfo, Summary: "swap sent to jupiter", TraceID: "trace-sol"},
		{CreatedAt: at(10 * time.Minute), Type: warden.EventConfigChanged, Severity: warden.SevInfo, Summary: "warden.yaml changed"},
	} {
		if err := s.AppendEvent(ctx, &ev); err != nil {
			t.Fatal(err)
		}
	}

	// Sizing answers per day, over the seeds (all within 30 days).
	type dayCount struct{ answers, sized, clipped int }
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
			switch st.Rule {
			case "sizing.clipped":
				perDay[day].clipped++
				perDay[day].sized++
			case "sizing.within":
				perDay[day].sized++
			}
		}
	}
	var sizingRows [][]string
	for _, day := range days {
		c := perDay[day]
		pct := "NULL" // no entry was sized that day
		if c.sized > 0 {
			pct = fmt.Sprintf("%.1f", 100*float64(c.clipped)/float64(c.sized))
		}
		sizingRows = append(sizingRows, []string{day, fmt.Sprint(c.answers), fmt.Sprint(c.sized), fmt.Sprint(c.clipped), pct})
	}

	// rejected is the row of seed i's stage answer at position pos.
	rejected := func(i, pos int) []string {
		sd, st := querySeeds[i], querySeeds[i].stages[pos]
		return []string{fmt.Sprint(i + 1), secs(times[i]), cmp.Or(sd.action, "swap"), sd.resource, cmp.Or(sd.amount, "250"), sd.rule,
			fmt.Sprint(pos), st.Stage, st.Verdict.String(), st.Rule, st.Reason}
	}
	// The released sell's trace: its decision, its twelve stages, the debit,
	// the release and the failure event.
	rel := querySeeds[7]
	traceRows := [][]string{{millis(times[7]), "0", "decision", "trade sell WETH", "allow", "risk.floor", rel.stages[11].Reason}}
	for i, st := range rel.stages {
		traceRows = append(traceRows, []string{millis(times[7]), fmt.Sprint(1 + i), "stage", st.Stage, st.Verdict.String(), st.Rule, st.Reason})
	}
	traceRows = append(traceRows,
		[]string{millis(times[7]), "1000", "debit", "300.00 USD", "NULL", "NULL", "NULL"},
		[]string{millis(released), "1001", "release", "300.00 USD", "NULL", "NULL", rel.released},
		[]string{millis(released), "1002", "event", "action_result", "warn", "NULL", "trade failed: the paper wallet holds 0 WETH (worth $0); the sell needs 3: insufficient funds"},
	)

	want := map[string][][]string{
		// Refused trades of the last 24 hours, only their non-allow answers:
		// the WIF swap over the cap, the BONK swap over its ceiling, and the
		// SQUID buy (a scam token, which exposure and slippage cannot resolve
		// either). Not the older BONK and SOL refusals, nor the shell deny.
		"Why was my swap rejected yesterday?": {
			rejected(5, 2),
			rejected(6, 9),
			rejected(9, 6), rejected(9, 9), rejected(9, 10),
		},
		"How often are sizing caps binding?": sizingRows,
		// SOL passed three ceilings once each, so it outranks BONK's two
		// per-token denials; SQUID's exposure.unresolved is not a ceiling.
		"Which tokens hit exposure limits most often?": {
			{"SOL", "exposure.asset_class", "1", secs(times[2])},
			{"SOL", "exposure.per_chain", "1", secs(times[3])},
			{"SOL", "exposure.total", "1", secs(times[4])},
			{"BONK", "exposure.per_token", "2", secs(times[6])},
		},
		"Which rules denied the most this week?": {
			{"exposure.per_token", "2", secs(times[6])},
			{"exposure.asset_class", "1", secs(times[2])},
			{"exposure.per_chain", "1", secs(times[3])},
			{"exposure.total", "1", secs(times[4])},
			{"safety.daily_cap", "1", secs(times[5])},
			{"shell.destructive", "1", secs(times[10])},
			{"token.scam", "1", secs(times[9])},
		},
		// The $300 sell was released: only the $250 swap counts.
		"How much was spent in the last 24 hours?": {{"1", "250.00"}},
		"What was that money spent on?": {
			{secs(times[8]), "250.00", "trade", "swap", "SOL", "skill:rebalancer", "trace-sol"},
		},
		"When was the kill switch turned on or off?": {
			{"1", secs(at(5 * time.Hour)), "kill_switch_on", "critical", "kill switch on: drawdown 12% in 1h", `{"by":"stoploss"}`},
			{"2", secs(at(4 * time.Hour)), "kill_switch_off", "warn", "kill switch off by operator", "NULL"},
		},
		"Everything one trace did": traceRows,
	}

	queries := audittest.DocQueries(t, filepath.Join("..", "docs", "audit-queries.md"))
	if len(queries) < len(want) {
		t.Errorf("found %d sql blocks in the document, want at least %d", len(queries), len(want))
	}
	c := rawConn(t, path)
	if err := c.Exec(`PRAGMA query_only = ON`); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, q := range queries {
		t.Run(q.Heading, func(t *testing.T) {
			rows, ok := want[q.Heading]
			if !ok {
				t.Fatalf("no expected rows for the query under %q; add them to this test", q.Heading)
			}
			seen[q.Heading] = true
			got := queryRows(t, c, q.SQL, map[string]string{":trace_id": "trace-released"})
			if !slices.EqualFunc(got, rows, slices.Equal[[]string]) {
				t.Errorf("query under %q returned\n%s\nwant\n%s", q.Heading, formatRows(got), formatRows(rows))
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
