package hook

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/agentwarden/warden"
)

// stuckDecider never answers and does not look at its context: a decider
// stuck in a system call or on a lock.
type stuckDecider struct{ release chan struct{} }

func (s stuckDecider) Check(context.Context, *warden.Request) (warden.Decision, error) {
	<-s.release
	return warden.Decision{Verdict: warden.Allow, Rule: "late"}, nil
}

// TestBoundedBlocksAStuckHook: a hook whose decider is stuck past the hook's
// deadline answers in the host's blocking form soon after it, and the late
// allow never reaches the host. Codex and Gemini CLI let a call through when
// they time a hook out.
func TestBoundedBlocksAStuckHook(t *testing.T) {
	defer func(g time.Duration) { boundedGrace = g }(boundedGrace)
	boundedGrace = 50 * time.Millisecond
	payloads := map[string]string{
		"codex":  `{"hook_event_name":"PreToolUse","session_id":"s","cwd":"/tmp","tool_name":"Bash","tool_input":{"command":"ls"}}`,
		"gemini": `{"hook_event_name":"BeforeTool","session_id":"s","cwd":"/tmp","tool_name":"run_shell_command","tool_input":{"command":"ls"}}`,
		"claude": `{"hook_event_name":"PreToolUse","session_id":"s","cwd":"/tmp","tool_name":"Bash","tool_input":{"command":"ls"}}`,
		"cursor": `{"hook_event_name":"beforeShellExecution","conversation_id":"c","cwd":"/tmp","command":"ls"}`,
	}
	for host, payload := range payloads {
		t.Run(host, func(t *testing.T) {
			d := stuckDecider{release: make(chan struct{})}
			var out, errw bytes.Buffer
			ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
			defer cancel()
			start := time.Now()
			status := Bounded(ctx, host, &out, &errw, func(o, e io.Writer) int {
				return Run(ctx, host, strings.NewReader(payload), o, e, d, nil)
			})
			close(d.release)
			if took := time.Since(start); took > 5*time.Second {
				t.Errorf("the stuck hook answered after %s", took)
			}
			if status != statusBlock {
				t.Errorf("status %d, want %d (blocked); stdout %q stderr %q", status, statusBlock, out.String(), errw.String())
			}
			if strings.Contains(out.String(), "allow") || !strings.Contains(out.String()+errw.String(), "time limit") {
				t.Errorf("answer stdout %q stderr %q, want the block naming the time limit and no allow", out.String(), errw.String())
			}
			if host == "cursor" {
				var a map[string]any
				if err := json.Unmarshal(out.Bytes(), &a); err != nil || a["permission"] != "deny" {
					t.Errorf("Cursor's answer %q, want a deny", out.String())
				}
			}
			time.Sleep(20 * time.Millisecond) // the late answer must not be written now either
			if strings.Contains(out.String(), "late") {
				t.Errorf("the late answer was written: %q", out.String())
			}
		})
	}
}

// TestBoundedPassesATimelyAnswer: an answer within the deadline is the
// host's, byte for byte, with its status.
func TestBoundedPassesATimelyAnswer(t *testing.T) {
	var out, errw bytes.Buffer
	status := Bounded(context.Background(), "codex", &out, &errw, func(o, e io.Writer) int {
		o.Write([]byte("{}\n"))
		e.Write([]byte("note\n"))
		return 0
	})
	if status != 0 || out.String() != "{}\n" || errw.String() != "note\n" {
		t.Errorf("Bounded = %d %q %q, want 0 and the answer as written", status, out.String(), errw.String())
	}
}
