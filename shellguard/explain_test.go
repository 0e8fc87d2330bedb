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
		env := corpusEnv
		env.Explain = true
		t.Log(Classify(src, env, corpusPolicy()).Explain())
	}
}

func TestExplainMentionsVerdict(t *testing.T) {
	env := corpusEnv
	env.Explain = true
	r := Classify("rm -rf ~", env, corpusPolicy())
	if e := r.Explain(); !strings.Contains(e, "verdict: deny") || len(r.Trace) == 0 {
		t.Errorf("Explain() = %q (trace %q), want the verdict and a trace", e, r.Trace)
	}
	if r := Classify("rm -rf ~", corpusEnv, corpusPolicy()); len(r.Trace) != 0 {
		t.Errorf("a trace was built without Env.Explain: %q", r.Trace)
	}
}
