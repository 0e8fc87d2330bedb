package shellguard

import (
	"testing"

	"github.com/agentwarden/warden"
)

// TestCopyIntoDirectoryDotSource: a source named . or .. (dir/.., ./..)
// has no name of its own; cp -r copies what it holds into the directory
// itself (cp -r hooks/.. .git/ writes .git/hooks/…), which is judged.
func TestCopyIntoDirectoryDotSource(t *testing.T) {
	for _, cmd := range []string{
		"cp -r dir/hooks/.. .git/",
		"cp -r .. .git/",
		"cp -r ./.. .git/",
		"cp -r . .git/",
		"cp -r dir/. .git/hooks/",
		"cp -r -t .git dir/..",
		"mv dir/.. .git/",
	} {
		if r := Classify(cmd, corpusEnv, defaultPolicy()); r.Verdict == warden.Allow {
			t.Errorf("Classify(%q) = allow (%s: %s), want ask: it writes into .git", cmd, r.Rule, r.Reason)
		}
	}
}
