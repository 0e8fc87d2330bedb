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
