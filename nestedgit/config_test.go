package nestedgit

import "testing"

// TestInertKey: the keys of everyday settings that run nothing and name no
// path are inert, by the name git lists (section and name in lower case);
// a key that names a program, a path, a hook or a filter is not, nor one
// that runs gpg or a guessed command.
func TestInertKey(t *testing.T) {
	for _, c := range []struct {
		key  string
		want bool
	}{
		{"user.email", true},
		{"rerere.enabled", true},
		{"rerere.autoupdate", true},
		{"merge.conflictstyle", true},
		{"merge.ff", true},
		{"pull.ff", true},
		{"rebase.autostash", true},
		{"rebase.autosquash", true},
		{"diff.algorithm", true},
		{"diff.renames", true},
		{"fetch.prune", true},
		{"push.autosetupremote", true},
		{"init.defaultbranch", true},
		{"color.ui", true},
		{"color.diff", true},
		{"color.diff.meta", true},
		{"advice.detachedhead", true},
		{"log.date", true},
		{"status.showuntrackedfiles", true},
		{"branch.autosetupmerge", true},
		{"branch.main.remote", true},
		{"remote.origin.url", true},
		// Not inert: a program, a path, a hook, a filter, an editor, a
		// pager, a credential helper, an include, a URL rewrite.
		{"merge.tool", false},
		{"mergetool.vim.cmd", false},
		{"diff.tool", false},
		{"diff.external", false},
		{"diff.orderfile", false},
		{"diff.go.textconv", false},
		{"merge.ours.driver", false},
		{"filter.lfs.process", false},
		{"core.editor", false},
		{"core.pager", false},
		{"core.hookspath", false},
		{"core.fsmonitor", false},
		{"core.sshcommand", false},
		{"core.excludesfile", false},
		{"core.attributesfile", false},
		{"credential.helper", false},
		{"include.path", false},
		{"includeif.gitdir:~/work/.path", false},
		{"url.https://evil.example/.insteadof", false},
		{"commit.template", false},
		{"commit.gpgsign", false},
		{"merge.verifysignatures", false},
		{"log.showsignature", false},
		{"help.autocorrect", false},
		{"pull.twohead", false},
		{"submodule.recurse", false},
		{"alias.st", false},
		{"sequence.editor", false},
		{"gpg.program", false},
		{"rerere", false},
		{"colorx.ui", false},
	} {
		t.Run(c.key, func(t *testing.T) {
			if got := InertKey(c.key); got != c.want {
				t.Errorf("InertKey(%q) = %v, want %v", c.key, got, c.want)
			}
		})
	}
}
