package hook

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/shellguard"
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

// guardDecider decides with the real shell guard.
type guardDecider struct{ s shellguard.Stage }

func (g guardDecider) Check(ctx context.Context, req *warden.Request) (warden.Decision, error) {
	return g.s.Check(ctx, req)
}

// TestDiscardIsSavedWhereContained: a git command that discards
// uncommitted work runs, wrapped in warden exec (which saves the work
// first), on the hosts whose commands the hook wraps; it is asked about
// where it would run on the host instead: Cursor, which cannot run a
// command in warden's sandbox, and a policy that runs commands on the host
// where no sandbox can.
func TestDiscardIsSavedWhereContained(t *testing.T) {
	p := shellguard.DefaultPolicy()
	p.SandboxAvailable = true
	d := guardDecider{shellguard.Stage{Policy: p}}
	const cmd = "git checkout -- main.go"
	payloads := map[string]string{
		"claude": `{"hook_event_name":"PreToolUse","session_id":"s","cwd":"/home/u/p","tool_name":"Bash","tool_input":{"command":"` + cmd + `"}}`,
		"codex":  `{"hook_event_name":"PreToolUse","session_id":"s","cwd":"/home/u/p","tool_name":"Bash","tool_input":{"command":"` + cmd + `"}}`,
		"gemini": `{"hook_event_name":"BeforeTool","session_id":"s","cwd":"/home/u/p","tool_name":"run_shell_command","tool_input":{"command":"` + cmd + `"}}`,
		"cursor": `{"hook_event_name":"beforeShellExecution","conversation_id":"s","cwd":"/home/u/p","command":"` + cmd + `"}`,
	}
	sandboxHere := func() Runner { return Runner{"/opt/warden", "exec"} }
	hostByPolicy := func() Runner { return Runner{} }
	for host, payload := range payloads {
		t.Run(host, func(t *testing.T) {
			var out, errOut bytes.Buffer
			status := Run(context.Background(), host, strings.NewReader(payload), &out, &errOut, d, sandboxHere)
			answer := out.String() + errOut.String()
			if host == "cursor" {
				if !strings.Contains(answer, `"permission":"ask"`) || !strings.Contains(answer, "shell.git.discard") {
					t.Errorf("Cursor's answer %q (status %d), want an ask about the discard", answer, status)
				}
				return
			}
			if status != 0 || !strings.Contains(answer, "exec --profile workspace --session s") || strings.Contains(answer, `"ask"`) {
				t.Errorf("answer %q (status %d), want the command run in warden exec", answer, status)
			}
		})
		if host == "cursor" {
			continue
		}
		t.Run(host+"/on the host by policy", func(t *testing.T) {
			var out, errOut bytes.Buffer
			status := Run(context.Background(), host, strings.NewReader(payload), &out, &errOut, d, hostByPolicy)
			answer := out.String() + errOut.String()
			if !strings.Contains(answer, "warden saves first only when it runs in warden's sandbox") {
				t.Errorf("answer %q (status %d), want it asked about, saying why", answer, status)
			}
		})
	}
}

// TestShellCallsAreJudgedWhereTheyRun: Codex's workdir and Gemini CLI's
// dir_path name the directory the host runs a shell call in, so the
// command is judged there (rm -rf .ssh with workdir ~ was judged in the
// project); without one it is the payload's working directory.
func TestShellCallsAreJudgedWhereTheyRun(t *testing.T) {
	for _, c := range []struct {
		host, payload, want string
	}{
		{"codex", `{"hook_event_name":"PreToolUse","session_id":"s","cwd":"/home/u/p","tool_name":"Bash","tool_use_id":"t","tool_input":{"command":"rm -rf .ssh","workdir":"/home/u"}}`, "/home/u"},
		{"codex", `{"hook_event_name":"PreToolUse","session_id":"s","cwd":"/home/u/p","tool_name":"Bash","tool_use_id":"t","tool_input":{"command":"ls","workdir":"sub/../web"}}`, "/home/u/p/web"},
		{"codex", `{"hook_event_name":"PreToolUse","session_id":"s","cwd":"/home/u/p","tool_name":"Bash","tool_use_id":"t","tool_input":{"command":"ls"}}`, "/home/u/p"},
		{"gemini", `{"hook_event_name":"BeforeTool","session_id":"s","cwd":"/home/u/p","tool_name":"run_shell_command","tool_input":{"command":"ls","dir_path":"pkg"}}`, "/home/u/p/pkg"},
		{"gemini", `{"hook_event_name":"BeforeTool","session_id":"s","cwd":"/home/u/p","tool_name":"run_shell_command","tool_input":{"command":"ls","dir_path":""}}`, "/home/u/p"},
	} {
		var p basePayload
		if err := decodePayload([]byte(c.payload), &p); err != nil {
			t.Fatal(err)
		}
		var req *warden.Request
		switch c.host {
		case "codex":
			call, _, err := codexCall(&p, []byte(c.payload))
			if err != nil {
				t.Fatal(err)
			}
			req = call.req
		default:
			call, err := geminiCall(&p, []byte(c.payload))
			if err != nil {
				t.Fatal(err)
			}
			req = call.req
		}
		if req.Cwd != c.want {
			t.Errorf("%s %s: judged in %q, want %q", c.host, c.payload, req.Cwd, c.want)
		}
	}
}
