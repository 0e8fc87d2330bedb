package cli

import (
	"errors"
	"os/exec"
	"slices"
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
