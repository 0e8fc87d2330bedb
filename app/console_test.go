package app_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/internal/browser"
)

// TestConsoleApprovesAWaitingRequest is the whole loop in a real browser
// against a real daemon: an operator logs in with the operator token, an
// agent's request waits for approval, the approval appears in the console
// live, the operator approves it, and the waiting request returns allow.
func TestConsoleApprovesAWaitingRequest(t *testing.T) {
	bctx := browser.New(t)
	dm := startDaemon(t, "approvals.daemon.tcp", "127.0.0.1:0")
	tab, cancel := chromedp.NewContext(bctx)
	defer cancel()
	// Listening opens the tab (a bare Do would not) and shows what the page
	// logs when a step fails.
	if err := chromedp.Listen(tab, func(ev any) {
		switch ev := ev.(type) {
		case *runtime.EventExceptionThrown:
			t.Logf("page threw: %s", ev.ExceptionDetails.Text)
		case *log.EventEntryAdded:
			t.Logf("page log %s: %s %s", ev.Entry.Level, ev.Entry.Text, ev.Entry.URL)
		}
	}); err != nil {
		t.Fatalf("open a tab: %v", err)
	}
	step := func(what string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		ctx, cancel := context.WithTimeout(tab, 20*time.Second)
		defer cancel()
		if err := chromedp.Do(ctx, actions...); err != nil {
			page, _ := chromedp.Run(tab, chromedp.Evaluate[string](`document.body.innerText`))
			t.Fatalf("%s: %v\nthe page shows:\n%s", what, err, page)
		}
	}
	step("open the console and log in",
		chromedp.Navigate("http://"+dm.tcp+"/console/"),
		chromedp.WaitVisible(chromedp.ID("token")),
		chromedp.SetValue(chromedp.ID("token"), dm.d.Operator),
		chromedp.Click(chromedp.ID("login-button")),
		chromedp.WaitVisible(chromedp.ID("approvals-empty")))

	decided := make(chan warden.Decision, 1)
	go func() {
		d, err := dm.agent.CheckWait(ctx, toolReq("write_file", "s1"))
		if err != nil {
			t.Error(err)
		}
		decided <- d
	}()
	var id string
	for deadline := time.Now().Add(10 * time.Second); id == "" && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if as, _ := dm.op.Approvals(ctx, true); len(as) == 1 {
			id = as[0].ID
		}
	}
	if id == "" {
		t.Fatal("the waiting request opened no approval")
	}
	card := chromedp.CSS(fmt.Sprintf(`[data-approval-id=%q]`, id))
	step("see the approval appear live", chromedp.WaitVisible(card))
	step("approve it once", chromedp.Click(chromedp.CSS(fmt.Sprintf(`[data-approval-id=%q] [data-answer="once"]`, id))),
		chromedp.WaitNotPresent(card))
	select {
	case d := <-decided:
		if d.Verdict != warden.Allow || d.Rule != "grant.once" {
			t.Fatalf("the waiting request returned %s %s; want allow by grant.once", d.Verdict, d.Rule)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the waiting request did not return after the approval in the console")
	}
	a, err := dm.op.Approval(ctx, id)
	if err != nil || a.State != warden.ApprovalApproved || a.AnsweredBy != "console:operator" {
		t.Errorf("approval = %+v, %v; want approved from the console", a, err)
	}
}
