package gate_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/approval"
	"github.com/agentwarden/warden/gate"
	"github.com/agentwarden/warden/sqlite"
)

var ctx = context.Background()

type policy struct {
	sandbox    string // a profile the asking stage demands
	manualOnly bool
	deny       atomic.Bool
}

func (p *policy) Decide(_ context.Context, r *warden.Request) warden.Decision {
	if p.deny.Load() {
		return warden.Decision{Verdict: warden.Deny, Rule: "safety.kill_switch", Reason: "the kill switch is on", Tier: 3}
	}
	d := warden.Decision{Verdict: warden.Ask, Rule: "shell.destructive", Reason: "deletes files", Tier: 3, Sandbox: p.sandbox,
		Stages: []warden.StageAnswer{{Stage: "shell-guard", Verdict: warden.Ask, Rule: "shell.destructive"}}}
	if p.manualOnly {
		d.Tier, d.ManualOnly = 4, true
	}
	return d
}

type harness struct {
	g      *gate.Gate
	q      *approval.Queue
	store  *sqlite.Store
	policy *policy
	always map[string]bool
}

var n atomic.Int64

func newHarness(t *testing.T) *harness {
	t.Helper()
	s, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "warden.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	h := &harness{store: s, policy: &policy{}, always: map[string]bool{}}
	newID := func() string { return fmt.Sprintf("id-%d", n.Add(1)) }
	h.q = &approval.Queue{Store: s, Decider: func() approval.Decider { return h.policy }, NewID: newID,
		Events: func(context.Context, string, warden.Severity, string, string, map[string]any) error { return nil }}
	h.g = &gate.Gate{Decider: h.policy, Store: s, NewID: newID, Approvals: h.q,
		Always: func(hash string) (string, bool) { return "rule for " + hash, h.always[hash] }}
	return h
}

func req(resource, session string) *warden.Request {
	return &warden.Request{Capability: warden.CapShell, Action: "exec", Resource: resource, Session: session}
}

func (h *harness) check(t *testing.T, r *warden.Request, opt gate.CheckOptions) warden.Decision {
	t.Helper()
	d, err := h.g.CheckWith(ctx, r, opt)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// ask opens an approval for r and answers it.
func (h *harness) answer(t *testing.T, r *warden.Request, ans warden.Answer) warden.Decision {
	t.Helper()
	d := h.check(t, r, gate.CheckOptions{Approval: "api"})
	if d.Verdict != warden.Ask || d.ApprovalID == "" {
		t.Fatalf("decision %s (approval %q); want an ask with an approval", d.Verdict, d.ApprovalID)
	}
	if _, err := h.q.Answer(ctx, d.ApprovalID, ans, approval.Who{Channel: "console", Name: "op"}); err != nil {
		t.Fatal(err)
	}
	return d
}

func TestApproveOnceLetsExactlyOneRunThrough(t *testing.T) {
	h := newHarness(t)
	if d := h.check(t, req("rm -rf build", "s1"), gate.CheckOptions{}); d.Verdict != warden.Ask || d.ApprovalID != "" {
		t.Fatalf("without an approval channel: %s, approval %q; want a plain ask", d.Verdict, d.ApprovalID)
	}
	asked := h.answer(t, req("rm -rf build", "s1"), warden.AnswerOnce)
	d := h.check(t, req("rm -rf build", "s1"), gate.CheckOptions{})
	if d.Verdict != warden.Allow || d.Rule != "grant.once" || d.ApprovalID != asked.ApprovalID || !strings.Contains(d.Reason, "console:op") {
		t.Fatalf("after approve once: %+v; want allow by grant.once naming who approved", d)
	}
	if last := d.Stages[len(d.Stages)-1]; last.Stage != "grant" || last.Verdict != warden.Allow {
		t.Errorf("the grant is not recorded as a stage: %+v", d.Stages)
	}
	if d := h.check(t, req("rm -rf build", "s1"), gate.CheckOptions{}); d.Verdict != warden.Ask {
		t.Errorf("the second run after approve once: %s; want ask again", d.Verdict)
	}
}

// TestRetriesJoinThePendingApproval: a caller that retries instead of waiting
// (a Codex hook) gets the same approval for the same input and session, a new
// one for a changed input or another session, and after approve once exactly
// one retry runs.
func TestRetriesJoinThePendingApproval(t *testing.T) {
	h := newHarness(t)
	retry := gate.CheckOptions{Approval: "hook:codex", JoinPending: true}
	first := h.check(t, req("rm -rf build", "s1"), retry)
	if first.Verdict != warden.Ask || first.ApprovalID == "" {
		t.Fatalf("first try: %s, approval %q; want an ask with an approval", first.Verdict, first.ApprovalID)
	}
	for i := range 3 {
		if d := h.check(t, req("rm -rf build", "s1"), retry); d.Verdict != warden.Ask || d.ApprovalID != first.ApprovalID {
			t.Fatalf("retry %d: %s, approval %q; want the pending approval %s", i, d.Verdict, d.ApprovalID, first.ApprovalID)
		}
	}
	for _, r := range []*warden.Request{req("rm -rf build ../x", "s1"), req("rm -rf build", "s2")} {
		if d := h.check(t, r, retry); d.ApprovalID == "" || d.ApprovalID == first.ApprovalID {
			t.Errorf("%q in session %s: approval %q; want a new one", r.Resource, r.Session, d.ApprovalID)
		}
	}
	pending, err := h.q.List(ctx, warden.ApprovalFilter{Pending: true})
	if err != nil || len(pending) != 3 {
		t.Fatalf("pending approvals = %d, %v; want 3 (one per input and session)", len(pending), err)
	}
	if _, err := h.q.Answer(ctx, first.ApprovalID, warden.AnswerOnce, approval.Who{Channel: "console", Name: "op"}); err != nil {
		t.Fatal(err)
	}
	if d := h.check(t, req("rm -rf build", "s1"), retry); d.Verdict != warden.Allow || d.Rule != "grant.once" {
		t.Fatalf("retry after approve once: %s %s; want allow by grant.once", d.Verdict, d.Rule)
	}
	if d := h.check(t, req("rm -rf build", "s1"), retry); d.Verdict != warden.Ask || d.ApprovalID == first.ApprovalID || d.ApprovalID == "" {
		t.Errorf("the next retry: %s, approval %q; want a new approval (the answered one is used up)", d.Verdict, d.ApprovalID)
	}
}

func TestApproveForSessionStaysInTheSession(t *testing.T) {
	h := newHarness(t)
	h.answer(t, req("rm -rf build", "s1"), warden.AnswerSession)
	for i := range 3 {
		if d := h.check(t, req("rm -rf build", "s1"), gate.CheckOptions{}); d.Verdict != warden.Allow || d.Rule != "grant.session" {
			t.Fatalf("run %d in the session: %s %s; want allow by grant.session", i, d.Verdict, d.Rule)
		}
	}
	if d := h.check(t, req("rm -rf build", "s2"), gate.CheckOptions{}); d.Verdict != warden.Ask {
		t.Errorf("in another session: %s; want ask", d.Verdict)
	}
	if d := h.check(t, req("rm -rf build ../other", "s1"), gate.CheckOptions{}); d.Verdict != warden.Ask {
		t.Errorf("a changed command in the session: %s; want ask", d.Verdict)
	}
}

func TestAlwaysRuleAppliesEverywhereButTier4(t *testing.T) {
	h := newHarness(t)
	r := req("make deploy", "")
	h.always[warden.InputHash(r)] = true
	if d := h.check(t, req("make deploy", "any"), gate.CheckOptions{}); d.Verdict == warden.Allow {
		// The session is not part of the input: the rule still applies.
		if d.Rule != "approvals.always" {
			t.Errorf("rule %s, want approvals.always", d.Rule)
		}
	} else {
		t.Errorf("an always rule did not apply: %s", d.Verdict)
	}
	h.policy.manualOnly = true
	if d := h.check(t, req("make deploy", ""), gate.CheckOptions{}); d.Verdict != warden.Ask {
		t.Errorf("tier 4 under an always rule: %s; want ask (no standing grant)", d.Verdict)
	}
}

func TestTier4IgnoresSessionGrants(t *testing.T) {
	h := newHarness(t)
	h.answer(t, req("rm -rf build", "s1"), warden.AnswerSession)
	h.policy.manualOnly = true
	if d := h.check(t, req("rm -rf build", "s1"), gate.CheckOptions{}); d.Verdict != warden.Ask {
		t.Errorf("tier 4 with a session grant: %s; want ask", d.Verdict)
	}
}

func TestApprovedAskStillRunsIsolated(t *testing.T) {
	h := newHarness(t)
	h.policy.sandbox = "guard"
	h.answer(t, req("./unknown-tool", "s1"), warden.AnswerOnce)
	if d := h.check(t, req("./unknown-tool", "s1"), gate.CheckOptions{}); d.Verdict != warden.Sandbox || d.Sandbox != "guard" {
		t.Errorf("approved ask with a sandbox demand: %s %q; want sandbox guard", d.Verdict, d.Sandbox)
	}
}

func TestGrantsNeverOverrideADeny(t *testing.T) {
	h := newHarness(t)
	h.answer(t, req("rm -rf build", "s1"), warden.AnswerSession)
	h.policy.deny.Store(true)
	if d := h.check(t, req("rm -rf build", "s1"), gate.CheckOptions{}); d.Verdict != warden.Deny {
		t.Errorf("session grant under the kill switch: %s; want deny", d.Verdict)
	}
}

func TestAwaitEndsInTheRecordedOutcome(t *testing.T) {
	for _, tc := range []struct {
		name   string
		answer warden.Answer // "" lets it expire
		want   warden.Verdict
		rule   string
	}{
		{"approved", warden.AnswerOnce, warden.Allow, "grant.once"},
		{"denied", warden.AnswerDeny, warden.Deny, "approval.denied"},
		{"expired", "", warden.Deny, "approval.expired"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			// An answered approval must not expire first on a loaded
			// machine (the answer comes 20 ms later, but that goroutine
			// may wait): only the case that lets it expire waits briefly.
			timeout := 30 * time.Second
			if tc.answer == "" {
				timeout = 200 * time.Millisecond
			}
			h.q.SetTimeout(timeout)
			r := req("rm -rf build", "s1")
			d := h.check(t, r, gate.CheckOptions{Approval: "api"})
			if tc.answer != "" {
				go func() {
					time.Sleep(20 * time.Millisecond)
					if _, err := h.q.Answer(ctx, d.ApprovalID, tc.answer, approval.Who{Channel: "console"}); err != nil {
						t.Error(err)
					}
				}()
			}
			got, err := h.g.Await(ctx, r, d)
			if err != nil || got.Verdict != tc.want || got.Rule != tc.rule || got.TraceID != d.TraceID {
				t.Fatalf("Await = %s %s (trace %s), %v; want %s %s on trace %s", got.Verdict, got.Rule, got.TraceID, err, tc.want, tc.rule, d.TraceID)
			}
			es, err := h.store.Entries(ctx, warden.AuditFilter{})
			if err != nil || len(es) != 2 || es[0].Verdict != warden.Ask || es[1].Verdict != tc.want || es[1].TraceID != es[0].TraceID {
				t.Fatalf("audit = %d entries, %v; want the ask then the %s, on one trace", len(es), err, tc.want)
			}
		})
	}
}

// TestRetryAfterExpiryOpensAFreshApproval: an expired approval is never
// joined, so a retry after it lapsed can still be answered.
func TestRetryAfterExpiryOpensAFreshApproval(t *testing.T) {
	h := newHarness(t)
	now := time.Now()
	h.q.Now = func() time.Time { return now }
	retry := gate.CheckOptions{Approval: "hook:codex", JoinPending: true}
	first := h.check(t, req("rm -rf build", "s1"), retry)
	if first.ApprovalID == "" {
		t.Fatal("no approval opened")
	}
	now = now.Add(h.q.Timeout() + time.Second)
	if d := h.check(t, req("rm -rf build", "s1"), retry); d.Verdict != warden.Ask || d.ApprovalID == "" || d.ApprovalID == first.ApprovalID {
		t.Errorf("retry after expiry: %s, approval %q; want a new approval, not the expired %s", d.Verdict, d.ApprovalID, first.ApprovalID)
	}
}

// TestInputHashSetsWhatAnAnswerCovers: with a binding broader than the exact
// input (here, the command's first word), a session grant covers every
// request of the same binding in the session, and nothing else.
func TestInputHashSetsWhatAnAnswerCovers(t *testing.T) {
	h := newHarness(t)
	h.g.InputHash = func(r *warden.Request) string {
		first, _, _ := strings.Cut(r.Resource, " ")
		return "sha256:" + first
	}
	h.answer(t, req("rm -rf build", "s1"), warden.AnswerSession)
	if d := h.check(t, req("rm -rf dist", "s1"), gate.CheckOptions{}); d.Verdict != warden.Allow || d.Rule != "grant.session" {
		t.Errorf("another input of the same binding: %s %s; want allow by the session grant", d.Verdict, d.Rule)
	}
	if d := h.check(t, req("mv build dist", "s1"), gate.CheckOptions{}); d.Verdict != warden.Ask {
		t.Errorf("an input of another binding: %s; want ask", d.Verdict)
	}
}

// TestCoveredPeeksWithoutUsingTheGrant: Covered reports a once grant (and an
// always rule) without spending it; the check after it still gets it.
func TestCoveredPeeksWithoutUsingTheGrant(t *testing.T) {
	h := newHarness(t)
	r := func() *warden.Request { return req("rm -rf build", "s1") }
	if ok, err := h.g.Covered(ctx, r()); err != nil || ok {
		t.Fatalf("Covered before any answer = %v, %v; want false", ok, err)
	}
	h.answer(t, r(), warden.AnswerOnce)
	for range 2 {
		if ok, err := h.g.Covered(ctx, r()); err != nil || !ok {
			t.Fatalf("Covered after approve once = %v, %v; want true", ok, err)
		}
	}
	if d := h.check(t, r(), gate.CheckOptions{}); d.Verdict != warden.Allow {
		t.Fatalf("the check after peeking: %s; want allow by the once grant", d.Verdict)
	}
	if ok, _ := h.g.Covered(ctx, r()); ok {
		t.Error("Covered after the once grant was used = true")
	}
	other := req("rm -rf node_modules", "s1")
	h.always[warden.InputHash(other)] = true
	if ok, err := h.g.Covered(ctx, other); err != nil || !ok {
		t.Errorf("Covered under an always rule = %v, %v; want true", ok, err)
	}
}

// TestHostGrantRunsOnTheHostOnce: after "run on host" the exact command is
// allowed once on the host (HostGranted), even where a stage wanted the
// guard sandbox, and the next run asks again.
func TestHostGrantRunsOnTheHostOnce(t *testing.T) {
	h := newHarness(t)
	h.policy.sandbox = "guard"
	asked := h.answer(t, req("git push origin main", "s1"), warden.AnswerHost)
	d := h.check(t, req("git push origin main", "s1"), gate.CheckOptions{})
	if !gate.HostGranted(&d) || d.Rule != gate.RuleHostGrant || d.ApprovalID != asked.ApprovalID ||
		!strings.Contains(d.Reason, "on the host") || !strings.Contains(d.Reason, "console:op") || !strings.Contains(d.Reason, "guard") {
		t.Fatalf("after run on host: %+v; want allow on the host by grant.host, naming who and the sandbox it overrides", d)
	}
	if last := d.Stages[len(d.Stages)-1]; last.Stage != "grant" || last.Rule != gate.RuleHostGrant {
		t.Errorf("the host grant is not recorded as a stage: %+v", d.Stages)
	}
	entries, err := h.store.Entries(ctx, warden.AuditFilter{TraceID: d.TraceID})
	if err != nil || len(entries) != 1 || entries[0].Rule != gate.RuleHostGrant || entries[0].Verdict != warden.Allow {
		t.Errorf("audit row of the host run = %+v, %v; want allow by grant.host", entries, err)
	}
	if d := h.check(t, req("git push origin main", "s1"), gate.CheckOptions{}); d.Verdict != warden.Ask || gate.HostGranted(&d) {
		t.Errorf("the second run after run on host: %+v; want ask again", d)
	}
	h.answer(t, req("git push origin main", "s1"), warden.AnswerOnce)
	if d := h.check(t, req("git push origin main", "s1"), gate.CheckOptions{}); gate.HostGranted(&d) || d.Verdict != warden.Sandbox {
		t.Errorf("after approve once: %+v; want the sandbox the stage demanded, not the host", d)
	}
}

// TestHostGrantNeverOverridesADeny: a host grant under a deny (the kill
// switch, a deny rule) stays unused and the command is denied.
func TestHostGrantNeverOverridesADeny(t *testing.T) {
	h := newHarness(t)
	h.answer(t, req("docker run x", "s1"), warden.AnswerHost)
	h.policy.deny.Store(true)
	if d := h.check(t, req("docker run x", "s1"), gate.CheckOptions{}); d.Verdict != warden.Deny || gate.HostGranted(&d) {
		t.Errorf("host grant under a deny: %+v; want deny", d)
	}
	h.policy.deny.Store(false)
	if d := h.check(t, req("docker run x", "s1"), gate.CheckOptions{}); !gate.HostGranted(&d) {
		t.Errorf("once the deny is lifted: %+v; want the unused host grant to apply", d)
	}
}

// TestHostGrantIsNotForOtherSessionsOrInputs: the grant covers the exact
// input in its session only.
func TestHostGrantIsNotForOtherSessionsOrInputs(t *testing.T) {
	h := newHarness(t)
	h.answer(t, req("git push", "s1"), warden.AnswerHost)
	for _, r := range []*warden.Request{req("git push", "s2"), req("git push --force", "s1")} {
		if d := h.check(t, r, gate.CheckOptions{}); d.Verdict != warden.Ask {
			t.Errorf("%q in %s: %s; want ask (the grant is for git push in s1)", r.Resource, r.Session, d.Verdict)
		}
	}
}

// failingGrants is an approval store whose grant lookup fails as a lost
// audit log does: with a *warden.Error saying what is wrong and what to do.
type failingGrants struct{ warden.ApprovalStore }

func (failingGrants) TakeGrant(context.Context, warden.GrantQuery) (warden.Grant, bool, error) {
	return warden.Grant{}, false, warden.Errorf(warden.EConflict, "the audit log is not what this home recorded: the database is damaged").
		WithHint("`warden audit recover --yes` starts a new chain")
}

// TestGrantLookupFailureSaysWhatToDo: an ask whose remembered answers cannot
// be read is refused (no decision), and the error carries the store's own
// message and hint; before, it said only "could not look up remembered
// approvals", with nothing to act on.
func TestGrantLookupFailureSaysWhatToDo(t *testing.T) {
	h := newHarness(t)
	h.q.Store = failingGrants{h.store}
	d, err := h.g.CheckWith(ctx, req("rm -rf build", "s1"), gate.CheckOptions{})
	if err == nil || d.Verdict != warden.Deny {
		t.Fatalf("CheckWith with a failing grant store = %+v, %v; want an error and no decision", d, err)
	}
	var we *warden.Error
	if !errors.As(err, &we) || !strings.Contains(we.Message, "the database is damaged") || !strings.Contains(we.Hint, "warden audit recover") {
		t.Fatalf("error = %#v; want the store's message and its hint", err)
	}
}
