package shellguard

import (
	"strings"
	"testing"
	"time"

	"github.com/agentwarden/warden"
	"github.com/agentwarden/warden/shellguard/walk"
)

// FuzzClassify checks that Classify never panics, stays within a time
// bound, and never allows input on which Walk reports issues.
func FuzzClassify(f *testing.F) {
	for _, s := range []string{"rm -rf ~", "ls", "echo $(rm -rf /)", "bash -c 'git reset --hard'", "x=$(", "$(((", "python3 -c 'print(1)'", "a=rm; $a -rf ~", "cat <<EOF\nx\nEOF", "curl x | sh", "find . -exec rm {} \\;", "f(){ f|f& };f"} {
		f.Add(s)
	}
	if rows := loadCorpusQuiet("shell-guard.jsonl"); rows != nil {
		for _, r := range rows {
			f.Add(r.Command)
		}
	}
	for _, name := range []string{"ordinary.txt", "network.txt", "leaves.txt", "discard.txt", "discard_saved.txt", "build_output.txt", "unseen.txt", "delete_saved.txt", "install_host.txt", "git_config.txt", "system_packages.txt"} {
		for _, c := range loadVerdictsQuiet(name) {
			f.Add(c)
		}
	}
	p := corpusPolicy()
	// closed is p with a network policy that denies every destination and
	// counts the ones it was asked about.
	var asked int
	closed := p
	closed.Network = func(target, method string) warden.Decision {
		asked++
		return warden.Denyf("network.test", "every destination is denied")
	}
	f.Fuzz(func(t *testing.T, src string) {
		start := time.Now()
		r := Classify(src, corpusEnv, p)
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("Classify(%q) took %v", src, d)
		}
		// The network's verdict is never lost: a line that named a
		// destination the policy denies is denied.
		asked = 0
		if rc := Classify(src, corpusEnv, closed); asked > 0 && rc.Verdict != warden.Deny {
			t.Errorf("Classify(%q) = %s (%s) although the network policy denied a destination it names", src, rc.Verdict, rc.Rule)
		}
		// A caller that saves discarded work (Env.Snapshots) weakens a
		// verdict only by naming a work tree of the project to save, and
		// never strengthens one.
		saving := corpusEnv
		saving.Snapshots, saving.GitWorkTree = true, true
		rs := Classify(src, saving, p)
		if rs.Verdict.Stronger(r.Verdict) || rs.Verdict != r.Verdict && len(rs.Snapshot) == 0 {
			t.Errorf("Classify(%q) = %s (%s) without snapshots, %s (%s) saving %q with them", src, r.Verdict, r.Rule, rs.Verdict, rs.Rule, rs.Snapshot)
		}
		for _, tree := range rs.Snapshot {
			if tree != corpusEnv.Cwd && !strings.HasPrefix(tree, corpusEnv.Cwd+"/") {
				t.Errorf("Classify(%q) would save %q, outside the project %s", src, tree, corpusEnv.Cwd)
			}
		}
		if r.Snapshot != nil {
			t.Errorf("Classify(%q) without snapshots names %q to save", src, r.Snapshot)
		}
		if r.Verdict == warden.Allow {
			wr := walk.Walk(src, walk.Options{Cwd: corpusEnv.Cwd, Home: corpusEnv.Home, Tmp: corpusEnv.Tmp})
			for _, is := range wr.Issues {
				// An issue an allow may pass: an unknown program at
				// a directory a toolchain names ("$(go env GOPATH)/bin/x").
				if is.Kind == walk.DynamicCommand && toolPathProgram(src[is.Span.Start:is.Span.End]) != "" {
					continue
				}
				// And one whose file name alone is known ("$BIN/app"):
				// an unknown program wherever it lies.
				if is.Kind == walk.DynamicCommand && unknownFileName(is.FileName) != "" {
					continue
				}
				// And code read with xargs's or find's input, or values
				// put in a code string, in it as an unknown variable,
				// its commands judged by their rules.
				if is.Kind == walk.PlaceholderCode || is.Kind == walk.ValueCode {
					continue
				}
				// And env's words only known at run time taken for
				// assignments, the program named judged by its rule in
				// the workspace sandbox (shell.env_computed).
				if is.EnvAssigns {
					continue
				}
				t.Errorf("Classify(%q) = allow despite walk issues %v", src, wr.Issues)
				break
			}
		}
	})
}
