package main

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestMain runs main when the test binary is started as warden-exec.
func TestMain(m *testing.M) {
	if os.Getenv("WARDEN_EXEC_AS_MAIN") == "1" {
		main()
		return
	}
	os.Exit(m.Run())
}

// TestAHookThatCannotReachWardenBlocks: with no warden to run, a hook
// exits 2, which every host reads as "blocked" (any other failure lets the
// call through); a command exits 126 or 127, as a shell would.
func TestAHookThatCannotReachWardenBlocks(t *testing.T) {
	cls := clients(t)
	for _, c := range []struct {
		name string
		args []string
		want int
	}{
		{"hook, warden not found", []string{"no-such-warden-xyz", "hook", "claude"}, 2},
		{"hook, warden cannot start", []string{"/dev/null", "hook", "claude", "--home", "/tmp/h"}, 2},
		{"hook with flags this client does not serve", []string{"/dev/null", "--home", "/tmp/h", "hook", "claude", "--remote"}, 2},
		{"command, warden not found", []string{"no-such-warden-xyz", "--home", "/tmp/h", "exec", "--", "true"}, 127},
		{"command, warden cannot start", []string{"/dev/null", "--home", "/tmp/h", "exec", "--", "true"}, 126},
	} {
		for _, cl := range cls {
			t.Run(cl.name+"/"+c.name, func(t *testing.T) {
				cmd := exec.Command(cl.path, c.args...)
				cmd.Env = append(append(os.Environ(), cl.env...), "PATH=/nonexistent")
				cmd.Stdin = strings.NewReader(`{"hook_event_name":"PreToolUse","session_id":"s","tool_name":"Bash","tool_input":{"command":"ls"}}`)
				out, err := cmd.CombinedOutput()
				var ee *exec.ExitError
				if !errors.As(err, &ee) || ee.ExitCode() != c.want {
					t.Errorf("warden-exec %v: %v, want exit %d\n%s", c.args, err, c.want, out)
				}
			})
		}
	}
}
