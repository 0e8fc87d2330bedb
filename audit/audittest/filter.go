package audittest

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/agentwarden/warden"
)

// filterFixture is the log the filter cases query, one entry per row, seq 1-8.
var filterFixture = []struct {
	at          time.Duration
	capability  string
	action      string
	tool        string
	verdict     warden.Verdict
	blocked     bool
	requestedBy string
	trace       string
}{
	{0, warden.CapShell, "exec", "Bash", warden.Allow, false, "agent", "A"},                                  // 1
	{time.Hour, warden.CapTrade, "swap", "jupiter", warden.Deny, true, "skill:rebalancer", "B"},              // 2
	{2 * time.Hour, warden.CapTrade, "swap", "jupiter", warden.Deny, true, "cron:dca", "C"},                  // 3
	{3 * time.Hour, warden.CapNetwork, "fetch", "WebFetch", warden.Ask, false, "agent", "A"},                 // 4
	{24 * time.Hour, warden.CapShell, "exec", "Bash", warden.Sandbox, false, "agent", "D"},                   // 5
	{25 * time.Hour, warden.CapFilesystem, "read", "Read", warden.Allow, false, "heartbeat", "E"},            // 6
	{48 * time.Hour, warden.CapTrade, "swap", "", warden.Allow, false, "skill:rebalancer", "B"},              // 7
	{48*time.Hour + 500*time.Millisecond, warden.CapSign, "sign_tx", "", warden.Deny, true, "stoploss", "F"}, // 8
}

func testFilters(t *testing.T, s Store) {
	for i, f := range filterFixture {
		e := simple(i+1, f.at)
		e.Capability, e.Action, e.Tool, e.Verdict, e.Blocked, e.RequestedBy, e.TraceID =
			f.capability, f.action, f.tool, f.verdict, f.blocked, f.requestedBy, f.trace
		e.Stages = []warden.StageAnswer{{Stage: fmt.Sprintf("stage-of-%d", i+1), Verdict: f.verdict, Rule: "r"}}
		record(t, s, e)
	}
	yes, no := true, false
	ms := time.Millisecond
	for _, tc := range []struct {
		name string
		f    warden.AuditFilter
		want []int64
	}{
		{name: "none", f: warden.AuditFilter{}, want: []int64{1, 2, 3, 4, 5, 6, 7, 8}},
		{name: "since", f: warden.AuditFilter{Since: t0.Add(24 * time.Hour)}, want: []int64{5, 6, 7, 8}},
		{name: "since is inclusive", f: warden.AuditFilter{Since: t0.Add(time.Hour)}, want: []int64{2, 3, 4, 5, 6, 7, 8}},
		{name: "since below precision", f: warden.AuditFilter{Since: t0.Add(time.Hour + ms/2)}, want: []int64{3, 4, 5, 6, 7, 8}},
		{name: "until is exclusive", f: warden.AuditFilter{Until: t0.Add(time.Hour)}, want: []int64{1}},
		{name: "until below precision", f: warden.AuditFilter{Until: t0.Add(time.Hour + ms/2)}, want: []int64{1, 2}},
		{name: "since and until", f: warden.AuditFilter{Since: t0.Add(2 * time.Hour), Until: t0.Add(48 * time.Hour)}, want: []int64{3, 4, 5, 6}},
		{name: "capability", f: warden.AuditFilter{Capability: warden.CapTrade}, want: []int64{2, 3, 7}},
		{name: "tool", f: warden.AuditFilter{Tool: "Bash"}, want: []int64{1, 5}},
		{name: "verdict", f: warden.AuditFilter{Verdict: "deny"}, want: []int64{2, 3, 8}},
		{name: "verdict sandbox", f: warden.AuditFilter{Verdict: "sandbox"}, want: []int64{5}},
		{name: "blocked", f: warden.AuditFilter{Blocked: &yes}, want: []int64{2, 3, 8}},
		{name: "not blocked", f: warden.AuditFilter{Blocked: &no}, want: []int64{1, 4, 5, 6, 7}},
		{name: "requested by", f: warden.AuditFilter{RequestedBy: "skill:rebalancer"}, want: []int64{2, 7}},
		{name: "trace", f: warden.AuditFilter{TraceID: "A"}, want: []int64{1, 4}},
		{name: "after seq", f: warden.AuditFilter{AfterSeq: 6}, want: []int64{7, 8}},
		{name: "limit is the newest N in log order", f: warden.AuditFilter{Limit: 3}, want: []int64{6, 7, 8}},
		{name: "limit above count", f: warden.AuditFilter{Limit: 100}, want: []int64{1, 2, 3, 4, 5, 6, 7, 8}},
		{name: "limit with a filter", f: warden.AuditFilter{Capability: warden.CapTrade, Limit: 2}, want: []int64{3, 7}},
		{name: "limit with after seq", f: warden.AuditFilter{AfterSeq: 2, Limit: 2}, want: []int64{7, 8}},
		{name: "combined", f: warden.AuditFilter{Capability: warden.CapTrade, Blocked: &yes, Since: t0.Add(90 * time.Minute)}, want: []int64{3}},
		{name: "no match", f: warden.AuditFilter{Capability: warden.CapTrade, Tool: "Bash"}, want: nil},
		{name: "after the last", f: warden.AuditFilter{AfterSeq: 8}, want: nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			es := entries(t, s, tc.f)
			got := seqsOf(es)
			if !slices.Equal(got, tc.want) && (len(got) != 0 || len(tc.want) != 0) {
				t.Errorf("Entries(%+v) = seqs %v, want %v", tc.f, got, tc.want)
			}
			for _, e := range es {
				if len(e.Stages) != 1 || e.Stages[0].Stage != fmt.Sprintf("stage-of-%d", e.Seq) {
					t.Errorf("Entries(%+v): seq %d came back with stages %+v, want its own one stage", tc.f, e.Seq, e.Stages)
				}
			}
		})
	}
	verifyOK(t, s, int64(len(filterFixture)), 0)
}

func testFilterBadVerdict(t *testing.T, s Store) {
	record(t, s, simple(1, 0))
	if _, err := s.Entries(ctx, warden.AuditFilter{Verdict: "denied"}); err == nil {
		t.Error(`Entries(Verdict: "denied") = nil error, want one naming the valid verdicts`)
	}
}
