package hook

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/agentwarden/warden"
)

// profileDecider answers every request with one decision.
type profileDecider struct{ d warden.Decision }

func (p profileDecider) Check(context.Context, *warden.Request) (warden.Decision, error) {
	return p.d, nil
}

// TestEveryAllowedCommandIsContained checks where each host's shell call
// runs, by verdict and by what the machine and the user's policy allow:
// wrapped in warden exec under workspace (allow) or guard (sandbox), on the
// host only by the user's rule, and asked about where no sandbox can run.
func TestEveryAllowedCommandIsContained(t *testing.T) {
	payloads := map[string]string{
		"claude": `{"hook_event_name":"PreToolUse","session_id":"s","tool_name":"Bash","tool_input":{"command":"make test"}}`,
		"codex":  `{"hook_event_name":"PreToolUse","session_id":"s","tool_name":"Bash","tool_input":{"command":"make test"}}`,
		"gemini": `{"hook_event_name":"BeforeTool","session_id":"s","tool_name":"run_shell_command","tool_input":{"command":"make test"}}`,
	}
	sandboxHere := func() Runner { return Runner{"/opt/warden", "exec"} }
	noSandbox := func() Runner { return nil }
	hostByPolicy := func() Runner { return Runner{} }
	for _, c := range []struct {
		name    string
		dec     warden.Decision
		runner  FindRunner
		want    string // a fragment of the answer
		notWant string
	}{
		{name: "allow runs in workspace", dec: warden.Decision{Verdict: warden.Allow}, runner: sandboxHere, want: "exec --profile workspace --session s"},
		{name: "sandbox runs in guard", dec: warden.Decision{Verdict: warden.Sandbox}, runner: sandboxHere, want: "exec --profile guard --session s"},
		{name: "a decision's own profile", dec: warden.Decision{Verdict: warden.Sandbox, Sandbox: "strict"}, runner: sandboxHere, want: "--profile strict"},
		{name: "shell.host rule runs on host", dec: warden.Decision{Verdict: warden.Allow, Sandbox: ProfileHost}, runner: sandboxHere, notWant: "/opt/warden"},
		{name: "no sandbox asks", dec: warden.Decision{Verdict: warden.Allow}, runner: noSandbox, want: "no sandbox can run here"},
		{name: "no sandbox, sandbox verdict asks", dec: warden.Decision{Verdict: warden.Sandbox}, runner: noSandbox, want: "no sandbox can run here"},
		{name: "no sandbox, policy runs on host", dec: warden.Decision{Verdict: warden.Allow}, runner: hostByPolicy, notWant: "no sandbox"},
	} {
		for host, payload := range payloads {
			t.Run(c.name+"/"+host, func(t *testing.T) {
				var out, errOut bytes.Buffer
				status := Run(context.Background(), host, strings.NewReader(payload), &out, &errOut, profileDecider{c.dec}, c.runner)
				answer := out.String() + errOut.String()
				if c.want != "" && !strings.Contains(answer, c.want) {
					t.Errorf("answer %q (status %d) lacks %q", answer, status, c.want)
				}
				if c.notWant != "" && strings.Contains(answer, c.notWant) {
					t.Errorf("answer %q (status %d) has %q", answer, status, c.notWant)
				}
				if c.want == "" && status != 0 {
					t.Errorf("status %d, want 0 (runs): %s", status, answer)
				}
			})
		}
	}
}

// enderDecider records the sessions a host said ended.
type enderDecider struct {
	profileDecider
	ended []string
}

func (e *enderDecider) EndSession(_ context.Context, session string) error {
	e.ended = append(e.ended, session)
	return nil
}

// TestSessionEndLetsTheSessionGo: Claude Code's SessionEnd reaches the
// decider, which stops the session's sandbox world and removes its /tmp.
func TestSessionEndLetsTheSessionGo(t *testing.T) {
	d := &enderDecider{}
	var out, errOut bytes.Buffer
	status := Run(context.Background(), "claude", strings.NewReader(`{"hook_event_name":"SessionEnd","session_id":"s-9","reason":"exit"}`), &out, &errOut, d, nil)
	if status != 0 || len(d.ended) != 1 || d.ended[0] != "s-9" {
		t.Errorf("SessionEnd: status %d, ended %q, stderr %q; want s-9 ended", status, d.ended, errOut.String())
	}
}
