package walk

import (
	"os"
	"testing"
)

// TestDump prints what Walk finds, for reviewing by eye: in every input of
// the corpus file named by WALK_DUMP_CORPUS, or in the single input
// WALK_DUMP_SRC. It is skipped when neither is set.
func TestDump(t *testing.T) {
	var inputs []string
	if name := os.Getenv("WALK_DUMP_CORPUS"); name != "" {
		inputs = loadCorpus(t, name)
	}
	if src := os.Getenv("WALK_DUMP_SRC"); src != "" {
		inputs = append(inputs, src)
	}
	if len(inputs) == 0 {
		t.Skip("set WALK_DUMP_CORPUS (a corpus file name) or WALK_DUMP_SRC (an input) to print what Walk finds")
	}
	for _, src := range inputs {
		r := Walk(src, testOpt)
		t.Logf("%q\n\t=> %s", src, renderAll(r))
		for _, c := range r.Commands {
			if len(c.Redirects) > 0 || c.StdinKnown {
				t.Logf("\t[%s] redirects %+v stdin %q/%v", render(c), c.Redirects, c.Stdin, c.StdinKnown)
			}
		}
	}
}
