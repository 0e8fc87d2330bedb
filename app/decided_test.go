package app

import (
	"context"
	"testing"
	"time"

	"github.com/agentwarden/warden"
)

// TestRunUsesTheHooksDecision: in a session's supervisor, the warden exec a
// hook rewrote a command into uses the hook's decision (one audit row, the
// run tied to it by its trace id), once, and only for the same command,
// directory, session and requester; anything else, a policy that is not
// the supervisor's, or the kill switch turned on since, is decided anew.
func TestRunUsesTheHooksDecision(t *testing.T) {
	ctx := context.Background()
	a := openTestApp(t, Options{OpenDatabase: true})
	clock := time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)
	a.Now = func() time.Time { return clock }
	dir := t.TempDir()
	hookDecides := func(cmd string) warden.Decision {
		t.Helper()
		req := warden.Request{Capability: warden.CapShell, Action: "exec", Resource: cmd, Cwd: dir, Session: "s1", RequestedBy: "agent", Host: "claude"}
		d, err := hookGate{a.Gate, a}.CheckOpen(ctx, &req, "")
		if err != nil || d.Verdict != warden.Allow {
			t.Fatalf("the hook's decision of %q: %+v, %v; want allow", cmd, d, err)
		}
		return d
	}
	run := func(args []string, dir, session string) (warden.Request, warden.Decision) {
		t.Helper()
		req, d, _, err := a.decideExec(ctx, ExecRequest{Args: args, Dir: dir, Base: warden.Request{Session: session, RequestedBy: "agent"}})
		if err != nil {
			t.Fatalf("the run's decision of %q: %v", args, err)
		}
		return req, d
	}
	rows := func() int {
		t.Helper()
		es, err := a.Store.Entries(ctx, warden.AuditFilter{})
		if err != nil {
			t.Fatal(err)
		}
		return len(es)
	}

	// Not a supervisor: the run decides again.
	hookDecides("ls -la")
	before := rows()
	if req, _ := run([]string{"ls", "-la"}, dir, "s1"); rows() != before+1 || req.TraceID == "" {
		t.Fatalf("outside a supervisor the run made %d rows; want its own decision", rows()-before)
	}

	a.Supervises = "world-1"
	d := hookDecides("ls -la")
	before = rows()
	req, got := run([]string{"ls", "-la"}, dir, "s1")
	if rows() != before || req.TraceID != d.TraceID || got.TraceID != d.TraceID || got.Verdict != warden.Allow {
		t.Fatalf("the run made %d rows, trace %s (hook's %s), verdict %v; want the hook's decision used", rows()-before, req.TraceID, d.TraceID, got.Verdict)
	}
	// Used once: the same run again is decided again.
	if req, _ := run([]string{"ls", "-la"}, dir, "s1"); rows() != before+1 || req.TraceID == d.TraceID {
		t.Fatalf("a second run reused the hook's decision")
	}
	// `bash -c` of the command names the same command line.
	d = hookDecides("ls -la")
	if req, _ := run([]string{"bash", "-c", "ls -la"}, dir, "s1"); req.TraceID != d.TraceID {
		t.Fatalf("bash -c of the decided command did not use its decision")
	}

	// Another command, directory or session: decided anew.
	for _, c := range []struct {
		args         []string
		dir, session string
	}{
		{[]string{"ls", "-l"}, dir, "s1"},
		{[]string{"ls", "-la"}, t.TempDir(), "s1"},
		{[]string{"ls", "-la"}, dir, "s2"},
	} {
		d := hookDecides("ls -la")
		if req, _ := run(c.args, c.dir, c.session); req.TraceID == d.TraceID {
			t.Errorf("a run of %q in %s for %s used the decision of `ls -la` in %s for s1", c.args, c.dir, c.session, dir)
		}
		a.decided = decidedRuns{}
	}

	// A hook that read a variable as unset (its environment lacks it)
	// for a run whose environment sets it: decided anew, under the run's.
	const line = `OUT=${OUT:-./out}; mkdir -p "$OUT" && rm -rf "$OUT"`
	hookReq := warden.Request{Capability: warden.CapShell, Action: "exec", Resource: line, Cwd: dir, Session: "s1", RequestedBy: "agent", Host: "claude", Snapshots: true, Unset: warden.UnsetIn(nil)}
	hd, err := hookGate{a.Gate, a}.CheckOpen(ctx, &hookReq, "")
	if err != nil || len(hd.EnvUnset) == 0 {
		t.Fatalf("the hook's decision of %q: %+v, %v; want one relying on OUT being unset", line, hd, err)
	}
	req, got, _, err = a.decideExec(ctx, ExecRequest{Args: []string{"bash", "-c", line}, Dir: dir, Env: []string{"OUT=/"}, Base: warden.Request{Session: "s1", RequestedBy: "agent"}})
	if req.TraceID == hd.TraceID || err == nil && got.Verdict == warden.Allow {
		t.Errorf("a run with OUT=/ used the hook's decision that OUT is unset: %s (%s), %v", got.Verdict, got.Rule, err)
	}
	hd, _ = hookGate{a.Gate, a}.CheckOpen(ctx, &hookReq, "")
	if req, _, _, _ := a.decideExec(ctx, ExecRequest{Args: []string{"bash", "-c", line}, Dir: dir, Env: []string{"PATH=/usr/bin"}, Base: warden.Request{Session: "s1", RequestedBy: "agent"}}); req.TraceID != hd.TraceID {
		t.Errorf("a run whose environment lacks OUT too did not use the hook's decision")
	}
	a.decided = decidedRuns{}

	// Too late: decided anew.
	d = hookDecides("ls -la")
	clock = clock.Add(decidedRunTTL)
	if req, _ := run([]string{"ls", "-la"}, dir, "s1"); req.TraceID == d.TraceID {
		t.Errorf("a run %v after the hook used its decision", decidedRunTTL)
	}

	// The kill switch turned on between the hook and the run: refused.
	hookDecides("ls -la")
	if err := SetKill(a.Home, true, "test", "stop", clock); err != nil {
		t.Fatal(err)
	}
	if _, d, _, err := a.decideExec(ctx, ExecRequest{Args: []string{"ls", "-la"}, Dir: dir, Base: warden.Request{Session: "s1", RequestedBy: "agent"}}); err == nil {
		t.Errorf("with the kill switch on, the run was %v; want refused", d.Verdict)
	}
}
