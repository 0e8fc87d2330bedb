package execwire

import "testing"

// TestOneShotTarget: only a one-shot `warden exec` of an absolute home with
// a command is worth sending to a kept sandbox's supervisor, and the profile
// it names picks which one.
func TestOneShotTarget(t *testing.T) {
	cases := []struct {
		args          []string
		home, profile string
		ok            bool
	}{
		{[]string{"--home", "/h", "exec", "--", "ls"}, "/h", "", true},
		{[]string{"--home", "/h", "exec", "--profile", "workspace", "--memory=1G", "--", "ls", "-l"}, "/h", "workspace", true},
		{[]string{"--home", "/h", "exec", "--profile=guard", "--", "ls"}, "/h", "guard", true},
		{[]string{"--home", "/h", "exec", "--session", "s1", "--", "ls"}, "", "", false},
		{[]string{"--home", "/h", "exec", "--session=s1", "--", "ls"}, "", "", false},
		{[]string{"--home", "h", "exec", "--", "ls"}, "", "", false},
		{[]string{"--home", "/h", "exec", "--"}, "", "", false},
		{[]string{"--home", "/h", "exec", "ls"}, "", "", false},
		{[]string{"--home", "/h", "hook", "claude", "--", "x"}, "", "", false},
		{[]string{"exec", "--", "ls"}, "", "", false},
	}
	for _, c := range cases {
		home, profile, ok := OneShotTarget(c.args)
		if home != c.home || profile != c.profile || ok != c.ok {
			t.Errorf("OneShotTarget(%q) = %q, %q, %v; want %q, %q, %v", c.args, home, profile, ok, c.home, c.profile, c.ok)
		}
	}
}
