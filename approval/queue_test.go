package approval_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/approval"
	"github.com/agentwarden/warden/sqlite"
)

var ctx = context.Background()

type deciderFunc func(*warden.Request) warden.Decision

func (f deciderFunc) Decide(_ context.Context, r *warden.Request) warden.Decision { return f(r) }

// recorder keeps the events and notifications a queue sends.
type recorder struct {
	mu     sync.Mutex
	events []string
	asked  []string
	ended  []string
}

func (r *recorder) event(_ context.Context, typ string, _ warden.Severity, _, summary string, _ map[string]any) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, typ+": "+summary)
	return nil
}

func (r *recorder) Name() string { return "recorder" }
func (r *recorder) Asked(_ context.Context, a warden.Approval) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.asked = append(r.asked, a.ID)
	return nil
}
func (r *recorder) Ended(_ context.Context, a warden.Approval) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ended = append(r.ended, a.ID+"="+string(a.State))
	return nil
}

type alwaysFunc func(warden.Approval, string) (string, error)

func (f alwaysFunc) AddAlways(_ context.Context, a warden.Approval, by string) (string, error) {
	return f(a, by)
}

var ids atomic.Int64

func newQueue(t *testing.T, policy deciderFunc) (*approval.Queue, *recorder, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "warden.db")
	s, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	rec := &recorder{}
	q := &approval.Queue{
		Store: s, Decider: func() approval.Decider { return policy }, Events: rec.event, Notifiers: []approval.Notifier{rec},
		NewID:  func() string { return fmt.Sprintf("id-%d", ids.Add(1)) },
		Always: alwaysFunc(func(a warden.Approval, by string) (string, error) { return "always " + a.InputHash, nil }),
	}
	q.SetTimeout(time.Minute)
	return q, rec, path
}

func asks(*warden.Request) warden.Decision { return warden.Decision{Verdict: warden.Ask, Tier: 3} }

func open(t *testing.T, q *approval.Queue, req warden.Request, manualOnly bool) warden.Approval {
	t.Helper()
	d := warden.Decision{Verdict: warden.Ask, Reason: "destructive", Rule: "shell.destructive", Tier: 3, ManualOnly: manualOnly}
	if manualOnly {
		d.Tier = 4
	}
	a, err := q.Open(ctx, &req, &d, warden.InputHash(&req), "api")
	if err != nil {
		t.Fatal(err)
	}
	if d.ApprovalID != a.ID {
		t.Fatalf("Open left decision.ApprovalID %q, want %q", d.ApprovalID, a.ID)
	}
	return a
}

var shellReq = warden.Request{TraceID: "t1", Capability: warden.CapShell, Action: "exec", Resource: "make deploy", Session: "s1"}

func TestAnswersEndTheApprovalOnce(t *testing.T) {
	q, rec, _ := newQueue(t, asks)
	a := open(t, q, shellReq, false)
	ended, err := q.Answer(ctx, a.ID, warden.AnswerOnce, approval.Who{Name: "me", Channel: "terminal"})
	if err != nil || ended.State != warden.ApprovalApproved || ended.AnsweredBy != "terminal:me" {
		t.Fatalf("Answer = %+v, %v; want approved by terminal:me", ended, err)
	}
	if _, err := q.Answer(ctx, a.ID, warden.AnswerDeny, approval.Who{Channel: "console"}); warden.ErrorCodeOf(err) != warden.EConflict {
		t.Errorf("second answer = %v; want conflict", err)
	}
	if len(rec.asked) != 1 || len(rec.ended) != 1 || rec.ended[0] != a.ID+"=approved" {
		t.Errorf("notifications asked=%v ended=%v; want one of each", rec.asked, rec.ended)
	}
	if len(rec.events) != 2 || !strings.HasPrefix(rec.events[0], warden.EventApprovalRequested) || !strings.HasPrefix(rec.events[1], warden.EventApprovalAnswered) {
		t.Errorf("events = %q; want requested then answered", rec.events)
	}
}

func TestApprovalIsRecheckedAgainstTheCurrentPolicy(t *testing.T) {
	killSwitch := false
	policy := func(*warden.Request) warden.Decision {
		if killSwitch {
			return warden.Denyf("safety.kill_switch", "the kill switch is on")
		}
		return warden.Decision{Verdict: warden.Ask}
	}
	q, _, _ := newQueue(t, policy)
	a := open(t, q, shellReq, false)
	killSwitch = true
	ended, err := q.Answer(ctx, a.ID, warden.AnswerOnce, approval.Who{Channel: "console"})
	if err != nil || ended.State != warden.ApprovalDenied || !strings.Contains(ended.Note, "kill switch") {
		t.Fatalf("approving while the kill switch is on = %+v, %v; want denied, noting the kill switch", ended, err)
	}
	if _, ok, _ := q.Grant(ctx, &shellReq, &warden.Decision{Verdict: warden.Ask}, a.InputHash); ok {
		t.Error("a grant was stored for an approval the policy denied")
	}
}

func TestTier4TakesOnlyOnceFromAHuman(t *testing.T) {
	q, _, _ := newQueue(t, asks)
	a := open(t, q, shellReq, true)
	for _, tc := range []struct {
		ans warden.Answer
		who approval.Who
	}{
		{warden.AnswerSession, approval.Who{Channel: "console"}},
		{warden.AnswerAlways, approval.Who{Channel: "terminal"}},
		{warden.AnswerOnce, approval.Who{Channel: "api"}},
		{warden.AnswerOnce, approval.Who{Channel: "webhook"}},
	} {
		if _, err := q.Answer(ctx, a.ID, tc.ans, tc.who); warden.ErrorCodeOf(err) != warden.EInvalid {
			t.Errorf("tier 4 answered %s from %s = %v; want refused", tc.ans, tc.who.Channel, err)
		}
	}
	if got, _ := q.Get(ctx, a.ID); got.State != warden.ApprovalPending {
		t.Fatalf("after refused answers the approval is %s, want pending", got.State)
	}
	if ended, err := q.Answer(ctx, a.ID, warden.AnswerOnce, approval.Who{Channel: "telegram", Name: "42"}); err != nil || ended.State != warden.ApprovalApproved {
		t.Fatalf("tier 4 approved once from telegram = %+v, %v", ended, err)
	}
}

func TestSessionAnswerNeedsASession(t *testing.T) {
	q, _, _ := newQueue(t, asks)
	req := shellReq
	req.Session = ""
	a := open(t, q, req, false)
	if _, err := q.Answer(ctx, a.ID, warden.AnswerSession, approval.Who{Channel: "console"}); warden.ErrorCodeOf(err) != warden.EInvalid {
		t.Errorf("session answer without a session = %v; want refused", err)
	}
}

func TestAlwaysWritesTheRuleAfterTheAnswer(t *testing.T) {
	q, rec, _ := newQueue(t, asks)
	var wrote []string
	q.Always = alwaysFunc(func(a warden.Approval, by string) (string, error) {
		if a.State != warden.ApprovalApproved {
			t.Errorf("the always rule was written while the approval was %s", a.State)
		}
		wrote = append(wrote, a.InputHash+" by "+by)
		return "rule", nil
	})
	a := open(t, q, shellReq, false)
	if _, err := q.Answer(ctx, a.ID, warden.AnswerAlways, approval.Who{Channel: "console", Name: "op"}); err != nil {
		t.Fatal(err)
	}
	if len(wrote) != 1 || wrote[0] != a.InputHash+" by console:op" {
		t.Errorf("always rules written: %q", wrote)
	}
	if last := rec.events[len(rec.events)-1]; !strings.HasPrefix(last, warden.EventPolicyRuleAdded) {
		t.Errorf("last event %q; want the rule addition audited", last)
	}
	// A deny writes nothing.
	b := open(t, q, shellReq, false)
	if _, err := q.Answer(ctx, b.ID, warden.AnswerDeny, approval.Who{Channel: "console"}); err != nil || len(wrote) != 1 {
		t.Errorf("deny: %v, rules %q", err, wrote)
	}
}

func TestWaitEndsWithTheAnswer(t *testing.T) {
	q, _, _ := newQueue(t, asks)
	a := open(t, q, shellReq, false)
	done := make(chan warden.Approval)
	go func() {
		got, err := q.Wait(ctx, a.ID)
		if err != nil {
			t.Error(err)
		}
		done <- got
	}()
	time.Sleep(20 * time.Millisecond)
	if _, err := q.Answer(ctx, a.ID, warden.AnswerDeny, approval.Who{Channel: "console"}); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-done:
		if got.State != warden.ApprovalDenied {
			t.Errorf("Wait = %s, want denied", got.State)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Wait did not return after the answer")
	}
}

// TestWaitSeesAnAnswerFromAnotherProcess answers through a second store on the
// same database, as `warden approvals approve` in another process would.
func TestWaitSeesAnAnswerFromAnotherProcess(t *testing.T) {
	q, _, path := newQueue(t, asks)
	a := open(t, q, shellReq, false)
	other, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	q2 := &approval.Queue{Store: other, Decider: q.Decider, Events: func(context.Context, string, warden.Severity, string, string, map[string]any) error { return nil },
		NewID: func() string { return "other-grant" }}
	go func() {
		time.Sleep(30 * time.Millisecond)
		if _, err := q2.Answer(ctx, a.ID, warden.AnswerOnce, approval.Who{Channel: "terminal"}); err != nil {
			t.Error(err)
		}
	}()
	wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	got, err := q.Wait(wctx, a.ID)
	if err != nil || got.State != warden.ApprovalApproved {
		t.Fatalf("Wait = %+v, %v; want approved by the other process", got, err)
	}
}

func TestUnansweredApprovalExpires(t *testing.T) {
	q, rec, _ := newQueue(t, asks)
	q.SetTimeout(150 * time.Millisecond)
	a := open(t, q, shellReq, false)
	start := time.Now()
	got, err := q.Wait(ctx, a.ID)
	if err != nil || got.State != warden.ApprovalExpired {
		t.Fatalf("Wait = %+v, %v; want expired", got, err)
	}
	if took := time.Since(start); took < 100*time.Millisecond {
		t.Errorf("expired after %v, before its time", took)
	}
	if _, err := q.Answer(ctx, a.ID, warden.AnswerOnce, approval.Who{Channel: "console"}); warden.ErrorCodeOf(err) != warden.EConflict {
		t.Errorf("answering an expired approval = %v; want conflict", err)
	}
	if last := rec.events[len(rec.events)-1]; !strings.HasPrefix(last, warden.EventApprovalExpired) {
		t.Errorf("last event %q; want the expiry audited", last)
	}
	// ExpireDue ends the ones nobody waits for.
	b := open(t, q, shellReq, false)
	time.Sleep(200 * time.Millisecond)
	if n, err := q.ExpireDue(ctx); err != nil || n != 1 {
		t.Errorf("ExpireDue = %d, %v; want 1", n, err)
	}
	if got, _ := q.Get(ctx, b.ID); got.State != warden.ApprovalExpired {
		t.Errorf("after ExpireDue the approval is %s", got.State)
	}
}

// TestDescribeIsValidUTF8: the description goes to Telegram, which refuses a
// message that is not UTF-8, so a multi-byte character an agent places across
// the cut must not be split.
func TestDescribeIsValidUTF8(t *testing.T) {
	a198, a199 := strings.Repeat("a", 198), strings.Repeat("a", 199)
	for _, tt := range []struct {
		name, resource, want string
	}{
		{"two-byte rune across byte 200", a199 + "é and more", a199 + "é…"},
		{"three-byte rune across byte 200", a198 + "日本 and more", a198 + "日本…"},
		{"four-byte rune across byte 200", a199 + "😀 and more", a199 + "😀…"},
		{"200 runes are kept whole", strings.Repeat("é", 200), strings.Repeat("é", 200)},
		{"bytes that are not UTF-8", "rm \xff\xfe-rf", "rm \uFFFD-rf"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := warden.Request{Capability: warden.CapShell, Action: "exec", Resource: tt.resource}
			got := approval.Describe(&r)
			if !utf8.ValidString(got) {
				t.Fatalf("Describe = %q is not valid UTF-8", got)
			}
			if want := "shell exec: " + tt.want; got != want {
				t.Errorf("Describe = %q; want %q", got, want)
			}
		})
	}
}
