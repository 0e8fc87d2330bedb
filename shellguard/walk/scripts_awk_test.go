package walk

import (
	"testing"
)

// TestAwkCommandVariables: a command held in a variable counts as the
// literals it is set to only when nothing else sets it: a concatenation,
// getline into it, split or sub into it, an increment, a command-line
// assignment (-v, NAME=… operands) or a function's parameter leave it
// dynamic.
func TestAwkCommandVariables(t *testing.T) {
	for _, c := range []struct {
		src  string
		dyn  bool
		want []string
	}{
		{`awk 'BEGIN { cmd = "git ls-files"; cmd | getline f; close(cmd) }'`, false, []string{"git ls-files"}},
		{`awk '{ cmd = "wc -l < " $0; cmd | getline n }'`, true, nil},
		{`awk 'BEGIN { cmd = "ls"; getline cmd < "f"; system(cmd) }'`, true, nil},
		{`awk 'BEGIN { cmd = "ls"; split("rm -rf x", cmd); system(cmd) }'`, true, nil},
		{`awk -v cmd='rm -rf ~' 'BEGIN { if (0) cmd = "ls"; system(cmd) }'`, true, nil},
		{`awk 'BEGIN { if (0) cmd = "ls"; system(cmd) }' cmd='rm -rf x'`, true, nil},
		{`awk 'function f(cmd) { system(cmd) } BEGIN { cmd = "ls"; f("rm -rf x") }'`, true, nil},
		// Whatever space follows the keyword, and gawk's "func" (red-team-17:
		// a tab let the parameter pass for the global literal).
		{"awk 'function\tf(cmd) { system(cmd) } BEGIN { cmd = \"true\"; f(\"cat x\") }'", true, nil},
		{"awk 'func\nf(cmd) { system(cmd) } BEGIN { cmd = \"true\"; f(\"cat x\") }'", true, nil},
		{`awk 'BEGIN { system(cmd) }'`, true, nil},
		{`awk '/^--- (PASS|FAIL)/ { st[$2]++ } END { print st["PASS:"] }'`, false, nil},
		{`awk '{ c = "sort -k" $1; print | c }'`, true, nil},
		{`awk '{ n = $1 / 2; print n | "sort -n" }'`, false, []string{"sort -n"}},
	} {
		r := Walk(c.src, testOpt)
		if dyn := hasIssue(r, DynamicCode); dyn != c.dyn {
			t.Errorf("Walk(%s): a dynamic command %v, want %v (%v)", c.src, dyn, c.dyn, r.Issues)
		}
		for _, w := range c.want {
			if cmd, ok := find(r, w); !ok || cmd.Via != "awk" {
				t.Errorf("Walk(%s): no command %q run by awk", c.src, w)
			}
		}
	}
}

// TestAwkStringEscapes: a command string is read with awk's escapes, octal
// (red-team-17: \143\141\164 is cat, which was judged as the program
// 143141164) and gawk's \x among them.
func TestAwkStringEscapes(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{`awk 'BEGIN { system("\143\141\164 \176/.ssh/id_ed25519") }'`, "cat /home/u/.ssh/id_ed25519"},
		{`awk 'BEGIN { system("\x63at x\tb") }'`, "cat x b"},
		{`awk 'BEGIN { system("\0612\ny") }'`, "12"},
		{`awk 'BEGIN { system("e\cho \"x\"") }'`, "echo x"},
	} {
		r := Walk(c.src, testOpt)
		if _, ok := find(r, c.want); !ok {
			t.Errorf("Walk(%s): no command %q (%v)", c.src, c.want, r.Commands)
		}
	}
}
