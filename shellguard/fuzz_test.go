package shellguard

import (
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
	p := corpusPolicy()
	f.Fuzz(func(t *testing.T, src string) {
		start := time.Now()
		r := Classify(src, corpusEnv, p)
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("Classify(%q) took %v", src, d)
		}
		if r.Verdict == warden.Allow {
			wr := walk.Walk(src, walk.Options{Cwd: corpusEnv.Cwd, Home: corpusEnv.Home, Tmp: corpusEnv.Tmp})
			if len(wr.Issues) > 0 {
				t.Errorf("Classify(%q) = allow despite walk issues %v", src, wr.Issues)
			}
		}
	})
}
