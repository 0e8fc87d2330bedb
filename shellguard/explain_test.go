package shellguard

import (
	"os"
	"strings"
	"testing"

	"github.com/agentwarden/warden/shellguard/walk"
)

// TestExplainDump prints the walk and the trace of the commands in
// $SHELLGUARD_EXPLAIN (separated by "|||"); it is a debugging aid.
func TestExplainDump(t *testing.T) {
	in := os.Getenv("SHELLGUARD_EXPLAIN")
	if in == "" {
		t.Skip("set SHELLGUARD_EXPLAIN to dump classifications")
	}
	for _, src := range strings.Split(in, "|||") {
		wr := walk.Walk(src, walk.Options{Cwd: corpusEnv.Cwd, Home: corpusEnv.Home, Tmp: corpusEnv.Tmp})
		t.Logf("%q", src)
		for _, c := range wr.Commands {
			t.Logf("  cmd %+v", c)
		}
		for _, is := range wr.Issues {
			t.Logf("  issue %+v", is)
		}
		t.Log(Classify(src, corpusEnv, corpusPolicy()).Explain())
	}
}

func TestExplainMentionsVerdict(t *testing.T) {
	r := Classify("ls", corpusEnv, corpusPolicy())
	if e := r.Explain(); !strings.Contains(e, "verdict: allow") {
		t.Errorf("Explain() = %q, want the verdict", e)
	}
}
