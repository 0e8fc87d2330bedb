package app

import "testing"

// TestCommandLineIsTheHostsCommand checks that a hook's `bash -c CMD` is
// decided as CMD, the command the host asked about, so that an approval
// given for it covers the rewritten run, and that anything else is quoted.
func TestCommandLineIsTheHostsCommand(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"bash", "-c", "git push origin main"}, "git push origin main"},
		{[]string{"/bin/bash", "-c", "make test && echo ok"}, "make test && echo ok"},
		{[]string{"bash", "-c", "x", "arg0"}, "bash -c x arg0"},
		{[]string{"sh", "-c", "ls"}, "sh -c ls"},
		{[]string{"ls", "-la", "my file"}, "ls -la 'my file'"},
	} {
		if got := commandLine(c.args); got != c.want {
			t.Errorf("commandLine(%q) = %q, want %q", c.args, got, c.want)
		}
	}
}
