package approval_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/approval"
)

// hostEvent is one security event as the queue sent it.
type hostEvent struct {
	typ  string
	sev  warden.Severity
	text string
	meta map[string]any
}

// eventLog keeps every event a queue sends, with its severity and metadata.
type eventLog struct {
	mu     sync.Mutex
	events []hostEvent
}

func (l *eventLog) record(_ context.Context, typ string, sev warden.Severity, _, summary string, meta map[string]any) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, hostEvent{typ, sev, summary, meta})
	return nil
}

func (l *eventLog) of(typ string) []hostEvent {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []hostEvent
	for _, e := range l.events {
		if e.typ == typ {
			out = append(out, e)
		}
	}
	return out
}

// TestHostAnswerGrantsOneRunOnTheHost: "run on host" approves the shell
// command once, with a grant marked host, and is recorded as an escalation
// (warn) naming the command, who answered and the channel; a plain approval
// is no escalation.
func TestHostAnswerGrantsOneRunOnTheHost(t *testing.T) {
	q, _, _ := newQueue(t, asks)
	log := &eventLog{}
	q.Events = log.record
	req := shellReq
	req.Resource = "git push origin main"
	a := open(t, q, req, false)
	ended, err := q.Answer(ctx, a.ID, warden.AnswerHost, approval.Who{Channel: "console", Name: "op"})
	if err != nil || ended.State != warden.ApprovalApproved || ended.Answer != warden.AnswerHost {
		t.Fatalf("Answer(host) = %+v, %v; want approved with the answer host", ended, err)
	}
	g, ok, err := q.Grant(ctx, &req, &warden.Decision{Verdict: warden.Ask}, a.InputHash)
	if err != nil || !ok || !g.Host || g.Kind != warden.GrantOnce {
		t.Fatalf("Grant = %+v, %v, %v; want a once grant marked host", g, ok, err)
	}
	if _, ok, _ := q.Grant(ctx, &req, &warden.Decision{Verdict: warden.Ask}, a.InputHash); ok {
		t.Errorf("the host grant let a second run through; it is once")
	}
	esc := log.of(warden.EventHostEscalation)
	if len(esc) != 1 {
		t.Fatalf("host_escalation events = %+v; want one", esc)
	}
	e := esc[0]
	if e.sev != warden.SevWarn || e.meta["command"] != req.Resource || e.meta["by"] != "console:op" || e.meta["channel"] != "console" ||
		e.meta["approval_id"] != a.ID || !strings.Contains(e.text, req.Resource) || !strings.Contains(e.text, "console:op") {
		t.Errorf("escalation = %+v; want warn, naming %q, console:op and approval %s", e, req.Resource, a.ID)
	}

	plain := open(t, q, shellReq, false)
	if _, err := q.Answer(ctx, plain.ID, warden.AnswerOnce, approval.Who{Channel: "console", Name: "op"}); err != nil {
		t.Fatal(err)
	}
	if n := len(log.of(warden.EventHostEscalation)); n != 1 {
		t.Errorf("approve once recorded an escalation (%d in all); want none", n-1)
	}
	if g, ok, _ := q.Grant(ctx, &shellReq, &warden.Decision{Verdict: warden.Ask}, plain.InputHash); !ok || g.Host {
		t.Errorf("approve once gave grant %+v, %v; want an ordinary once grant", g, ok)
	}
}

// TestHostAnswerOnlyForShellCommands: a file write, a network fetch, a tool
// call or a trade cannot be "run on host": the answer is refused with an
// error that says so, and the approval stays pending for another answer.
func TestHostAnswerOnlyForShellCommands(t *testing.T) {
	q, _, _ := newQueue(t, asks)
	for _, req := range []warden.Request{
		{Capability: warden.CapFilesystem, Action: "write", Resource: "/repo/x"},
		{Capability: warden.CapNetwork, Action: "fetch", Resource: "https://example.com"},
		{Capability: warden.CapTool, Action: "call", Resource: "mcp__x__y"},
		{Capability: warden.CapShell, Action: "spawn", Resource: "make"},
	} {
		t.Run(req.Capability+"_"+req.Action, func(t *testing.T) {
			a := open(t, q, req, false)
			_, err := q.Answer(ctx, a.ID, warden.AnswerHost, approval.Who{Channel: "console"})
			if warden.ErrorCodeOf(err) != warden.EInvalid || !strings.Contains(warden.UserMessage(err), "only a shell command") {
				t.Errorf("Answer(host) on %s %s = %v; want refused: only a shell command", req.Capability, req.Action, err)
			}
			if got, _ := q.Get(ctx, a.ID); got.State != warden.ApprovalPending {
				t.Errorf("after the refused answer the approval is %s, want pending", got.State)
			}
		})
	}
}

// TestHostAnswerFollowsTier4Rules: a tier 4 shell command takes "run on
// host" as it takes "once": from a person at a human channel only.
func TestHostAnswerFollowsTier4Rules(t *testing.T) {
	q, _, _ := newQueue(t, asks)
	a := open(t, q, shellReq, true)
	for _, ch := range []string{"api", "webhook"} {
		if _, err := q.Answer(ctx, a.ID, warden.AnswerHost, approval.Who{Channel: ch}); warden.ErrorCodeOf(err) != warden.EInvalid {
			t.Errorf("tier 4 answered host from %s = %v; want refused", ch, err)
		}
	}
	if ended, err := q.Answer(ctx, a.ID, warden.AnswerHost, approval.Who{Channel: "terminal", Name: "me"}); err != nil || ended.State != warden.ApprovalApproved {
		t.Fatalf("tier 4 answered host at the terminal = %+v, %v; want approved", ended, err)
	}
}

// TestHostAnswerStillRechecked: with the policy now denying the command,
// "run on host" ends the approval denied, grants nothing and records no
// escalation.
func TestHostAnswerStillRechecked(t *testing.T) {
	deny := func(*warden.Request) warden.Decision {
		return warden.Decision{Verdict: warden.Deny, Reason: "the kill switch is on"}
	}
	q, _, _ := newQueue(t, deny)
	log := &eventLog{}
	q.Events = log.record
	a := open(t, q, shellReq, false)
	ended, err := q.Answer(ctx, a.ID, warden.AnswerHost, approval.Who{Channel: "console"})
	if err != nil || ended.State != warden.ApprovalDenied {
		t.Fatalf("Answer(host) under a denying policy = %+v, %v; want denied", ended, err)
	}
	if _, ok, _ := q.Grant(ctx, &shellReq, &warden.Decision{Verdict: warden.Ask}, a.InputHash); ok {
		t.Errorf("a denied host answer left a grant")
	}
	if esc := log.of(warden.EventHostEscalation); len(esc) != 0 {
		t.Errorf("a denied host answer recorded %+v; want no escalation", esc)
	}
}
