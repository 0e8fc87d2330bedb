package shellguard

import (
	"testing"

	"github.com/agentwarden/warden"
)

// TestFedWritesNeedThePipe: the paths a producer prints stand for xargs'
// input only where xargs reads the pipe and puts each path in a word of its
// own: xargs -a FILE reads a file the guard never sees, and a word that
// adds to the path ({}/.., ../{}, {}{}) names another file than the one
// printed. None is allowed: each is judged as a write to a path only known
// at run time.
func TestFedWritesNeedThePipe(t *testing.T) {
	for _, c := range []struct {
		cmd  string
		want warden.Verdict // Allow, or Ask for "not allowed"
	}{
		{"grep -rl foo src | xargs sed -i s/a/b/", warden.Allow},
		{"grep -rl foo src | xargs -I{} sed -i s/a/b/ {}", warden.Allow},
		{"grep -rl foo src | xargs -I% sed -i s/a/b/ %", warden.Allow},
		{"grep -rl foo src | xargs -a list.txt sed -i s/a/b/", warden.Ask},
		{"grep -rl foo src | xargs -ralist.txt sed -i s/a/b/", warden.Ask},
		{"grep -rl foo src | xargs --arg-file list.txt sed -i s/a/b/", warden.Ask},
		{"grep -rl foo src | xargs --arg-file=list.txt sed -i s/a/b/", warden.Ask},
		{"grep -rl foo src | xargs -a list.txt rm -f", warden.Ask},
		{"grep -rl foo src | parallel sed -i s/a/b/ {} :::: list.txt", warden.Ask},
		{"grep -rl foo src | xargs -I{} sed -i s/a/b/ ../{}", warden.Ask},
		{"find src -type d | xargs -I{} cp evil {}/../../.bashrc", warden.Ask},
		{"find . -maxdepth 0 | xargs -I{} cp .bashrc {}{}", warden.Ask},
		{"find . -maxdepth 0 | xargs -I{} cp .bashrc {}.", warden.Ask},
		{"find . -maxdepth 0 | xargs -I{} sed -i s/a/b/ {}/.git/config", warden.Ask},
	} {
		r := Classify(c.cmd, corpusEnv, defaultPolicy())
		if (r.Verdict == warden.Allow) != (c.want == warden.Allow) {
			t.Errorf("Classify(%q) = %v (%s: %s), want %v", c.cmd, r.Verdict, r.Rule, r.Reason, c.want)
		}
	}
}

// TestFedWritesOnlyPrintedPaths: a producer's paths stand for what xargs
// writes only where it prints nothing but paths below the operands it is
// given. locate prints paths from anywhere, find -L's starts were skipped,
// find -printf/-ls/-exec, ls -l, printf with a format that builds paths,
// rg -L (not -l: it follows symlinks), rg --vimgrep/--json/-c after -l,
// grep --label and a dynamic word that may be an option print other text:
// none is allowed.
func TestFedWritesOnlyPrintedPaths(t *testing.T) {
	for _, cmd := range []string{
		"locate .bashrc | xargs sed -i s/a/b/",
		"locate bashrc | xargs -I{} cp evil {}",
		"find -L ~ -name .bashrc | xargs sed -i s/a/b/",
		"find src -printf '/home/user/.bashrc\\n' | xargs sed -i s/a/b/",
		"find src -ls | xargs sed -i s/a/b/",
		"find src -exec cat {} + | xargs sed -i s/a/b/",
		"find src $ACTION | xargs sed -i s/a/b/",
		"ls -l src | xargs sed -i s/a/b/",
		"ls --format=long src | xargs sed -i s/a/b/",
		"printf '%c%s\\n' . ./.bashrc | xargs sed -i s/a/b/",
		"rg -L foo src | xargs sed -i s/a/b/",
		"rg -l --vimgrep foo src | xargs sed -i s/a/b/",
		"rg -l --json foo src | xargs sed -i s/a/b/",
		"rg -lc foo src | xargs sed -i s/a/b/",
		"grep -rl --label=/home/user/.bashrc foo - src | xargs sed -i s/a/b/",
		"cat list | grep -l --label /home/user/.bashrc foo | xargs sed -i s/a/b/",
		"grep -l foo - < list | xargs sed -i s/a/b/",
		"grep -rl \"$FLAGS\" foo src | xargs sed -i s/a/b/",
	} {
		if r := Classify(cmd, corpusEnv, defaultPolicy()); r.Verdict == warden.Allow {
			t.Errorf("Classify(%q) = allow (%s: %s), want it asked or denied", cmd, r.Rule, r.Reason)
		}
	}
	for _, cmd := range []string{
		"find src -name '*.ts' -print0 | xargs -0 sed -i 's/var /let /'",
		"find -L src -name '*.go' | xargs gofmt -w",
		"printf '%s\\n' src/a.go src/b.go | xargs sed -i s/a/b/",
		"grep -rl -e \"$OLD\" src | xargs sed -i \"s/$OLD/$NEW/g\"",
		"rg -l foo src | xargs sed -i s/foo/bar/",
	} {
		if r := Classify(cmd, corpusEnv, defaultPolicy()); r.Verdict != warden.Allow {
			t.Errorf("Classify(%q) = %v (%s: %s), want allow", cmd, r.Verdict, r.Rule, r.Reason)
		}
	}
}
