package hook

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agentwarden/warden"
)

// holdingDecider is a fakeDecider that also holds sessions, writing down
// each hold, release and check in order.
type holdingDecider struct {
	fakeDecider
	log     []string
	failing bool // HoldSession fails
}

func (h *holdingDecider) Check(ctx context.Context, req *warden.Request) (warden.Decision, error) {
	h.log = append(h.log, "check "+req.Action)
	return h.fakeDecider.Check(ctx, req)
}

func (h *holdingDecider) HoldSession(_ context.Context, session, lease string, ttl time.Duration) error {
	if h.failing {
		return errors.New("a process did not stop")
	}
	h.log = append(h.log, fmt.Sprintf("hold %s %s %s", session, lease, ttl))
	return nil
}

func (h *holdingDecider) ReleaseSession(_ context.Context, session string, prefix bool, leases ...string) error {
	what := strings.Join(leases, " ")
	if prefix {
		what += "*"
	}
	h.log = append(h.log, fmt.Sprintf("release %s %s", session, what))
	return nil
}

// TestHostFileToolsHoldTheSession: a call of the host's own file tools is
// judged with the session's sandboxes held (taken before the check), and
// stays held until the host reports that it ran, failed or (asked about)
// the next call; a refused call is released at once; a shell command
// holds nothing; a hold that fails refuses the call.
func TestHostFileToolsHoldTheSession(t *testing.T) {
	pre := func(host, tool, input string) string {
		switch host {
		case "gemini":
			return `{"session_id":"s","hook_event_name":"BeforeTool","tool_name":"` + tool + `","tool_input":` + input + `}`
		default:
			return `{"session_id":"s","hook_event_name":"PreToolUse","tool_name":"` + tool + `","tool_input":` + input + `,"tool_use_id":"t1"}`
		}
	}
	read := `{"file_path":"/p/a.go"}`
	cases := []struct {
		name, host, verdict, payload string
		want                         []string
	}{
		{"allowed read", "claude", "allow", pre("claude", "Read", read),
			[]string{"release s asked:*", "hold s tool:t1 1m0s", "check read"}},
		{"refused write", "claude", "deny", pre("claude", "Write", `{"file_path":"/p/a.go","content":"x"}`),
			[]string{"release s asked:*", "hold s tool:t1 1m0s", "check write", "release s tool:t1"}},
		{"asked edit", "claude", "ask", pre("claude", "Edit", `{"file_path":"/p/a.go","old_string":"a","new_string":"b"}`),
			[]string{"release s asked:*", "hold s tool:t1 1m0s", "check write", "hold s asked:t1 10m0s", "release s tool:t1"}},
		{"shell command", "claude", "allow", pre("claude", "Bash", `{"command":"ls"}`),
			[]string{"release s asked:*", "check exec"}},
		{"ran", "claude", "allow", `{"session_id":"s","hook_event_name":"PostToolUse","tool_name":"Read","tool_input":` + read + `,"tool_response":{},"tool_use_id":"t1"}`,
			[]string{"release s tool:t1 asked:t1"}},
		{"failed", "claude", "allow", `{"session_id":"s","hook_event_name":"PostToolUseFailure","tool_name":"Read","tool_input":` + read + `,"error":"no such file","tool_use_id":"t1"}`,
			[]string{"release s tool:t1 asked:t1"}},
		{"shell command ran", "claude", "allow", `{"session_id":"s","hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"ls"},"tool_response":{},"tool_use_id":"t1"}`,
			nil},
		{"codex patch", "codex", "allow", pre("codex", "apply_patch", `{"command":"*** Begin Patch\n*** Add File: b.go\n+x\n*** End Patch\n"}`),
			[]string{"release s asked: tool:*", "hold s tool:t1 1m0s", "check write"}},
		{"gemini read", "gemini", "allow", pre("gemini", "read_file", `{"file_path":"/p/a.go"}`),
			[]string{"release s asked: tool:*", "hold s tool:" + inputTrace(geminiHost, "s", "read_file", []byte(`{"file_path":"/p/a.go"}`)) + " 1m0s", "check read"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := &holdingDecider{fakeDecider: fakeDecider{verdict: c.verdict}}
			run(c.host, []byte(c.payload), d)
			if got := strings.Join(d.log, "\n"); got != strings.Join(c.want, "\n") {
				t.Errorf("got\n%s\nwant\n%s", got, strings.Join(c.want, "\n"))
			}
		})
	}
	t.Run("hold fails", func(t *testing.T) {
		d := &holdingDecider{fakeDecider: fakeDecider{verdict: "allow"}, failing: true}
		status, stdout, stderr := run("claude", []byte(pre("claude", "Read", read)), d)
		if strings.Contains(stdout, `"allow"`) || len(d.reqs) != 0 {
			t.Errorf("a call whose session could not be held was let through (status %d): %s %s", status, stdout, stderr)
		}
		if !strings.Contains(stdout+stderr, "could not pause") {
			t.Errorf("the refusal does not say why: %s %s", stdout, stderr)
		}
	})
}
