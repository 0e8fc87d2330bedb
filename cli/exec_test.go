package cli

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/agentwarden/warden/sandbox"
)

// TestExecExitStatus checks the statuses `warden exec` documents: the
// command's own, 126 refused, 127 not found, 125 no sandbox, 128+N killed.
func TestExecExitStatus(t *testing.T) {
	if !slices.Contains(sandbox.Probe().Modes, sandbox.ModeStandard) {
		t.Skip("this kernel cannot run the standard sandbox (user namespaces, Landlock and seccomp are needed)")
	}
	home := initHome(t)
	for _, c := range []struct {
		name string
		args []string
		want int
	}{
		{"the command's status", []string{"exec", "--", "sh", "-c", "exit 7"}, 7},
		{"success", []string{"exec", "--", "true"}, 0},
		{"denied by the gate", []string{"exec", "--", "rm", "-rf", "/"}, exitExecRefused},
		{"not found", []string{"exec", "--", "no-such-command-xyz"}, exitExecNotFound},
		{"bad flag value", []string{"exec", "--memory", "lots", "--", "true"}, exitExecError},
		{"unknown flag", []string{"exec", "--frobnicate", "--", "true"}, exitExecError},
		{"killed by the timeout", []string{"exec", "--timeout", "200ms", "--", "sleep", "5"}, 128 + 9},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, err := wardenCmd(home, c.args...).CombinedOutput()
			got := 0
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				got = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Errorf("warden %v exited %d, want %d\n%s", c.args, got, c.want, out)
			}
		})
	}
}

// TestHookRewriteRuns takes a hook's answer for a command the guard allows
// and runs the rewritten command the way the host would: it must run the
// original command inside warden exec.
func TestHookRewriteRuns(t *testing.T) {
	if !slices.Contains(sandbox.Probe().Modes, sandbox.ModeStandard) {
		t.Skip("this kernel cannot run the standard sandbox (user namespaces, Landlock and seccomp are needed)")
	}
	home := initHome(t)
	project := t.TempDir()
	echo, err := os.ReadFile("/bin/echo")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(project+"/frobnicate", echo, 0o755); err != nil {
		t.Fatal(err)
	}
	// An unknown program: the guard allows it, to run in the workspace sandbox.
	payload := `{"hook_event_name":"PreToolUse","session_id":"s1","cwd":"` + project + `","tool_name":"Bash","tool_input":{"command":"./frobnicate 'hello from' the sandbox"}}`
	hook := wardenCmd(home, "hook", "claude")
	hook.Stdin = strings.NewReader(payload)
	out, err := hook.Output()
	if err != nil {
		t.Fatalf("warden hook claude: %v", err)
	}
	var answer struct {
		HookSpecificOutput struct {
			PermissionDecision string
			UpdatedInput       struct{ Command string }
		}
	}
	if err := json.Unmarshal(out, &answer); err != nil || answer.HookSpecificOutput.PermissionDecision != "allow" {
		t.Fatalf("hook answer %s (%v), want an allow with a rewritten command", out, err)
	}
	cmd := answer.HookSpecificOutput.UpdatedInput.Command
	if !strings.Contains(cmd, " exec --profile workspace --session s1 --requested-by agent -- bash -c ") {
		t.Fatalf("rewritten command %q does not run warden exec under the workspace profile for the same session", cmd)
	}
	run := exec.Command("bash", "-c", cmd)
	run.Env = append(os.Environ(), "WARDEN_AS_CLI=1")
	run.Dir = project
	got, err := run.CombinedOutput()
	if err != nil || string(got) != "hello from the sandbox\n" {
		t.Fatalf("running the rewritten command: %v, output %q; want the original command's output", err, got)
	}
}
